/**
 * Compiled rules as the runs hold them (engine/policy/compile.ts makes them). Kept apart from the
 * compiler so that a run without rules never loads the CEL library.
 */
import type { PolicyConfig, PolicyExceptionConfig } from '../config/types.ts';
import type { Shape } from './contract-shape.ts';
import type { Use } from './uses.ts';

/** An expression's value, or why there is none (a CEL evaluation error). */
export type EvaluationResult = { readonly value: unknown } | { readonly error: string };

/** The values an expression is evaluated with (docs/policies.md). */
export interface PolicyBindings {
  readonly tenant: string;
  readonly id: string;
  readonly object: unknown;
  readonly oldObject?: unknown;
  readonly knownFrom?: string;
  readonly ops?: unknown;
  readonly variables: ReadonlyMap<string, unknown>;
}

export interface CompiledExpression {
  /** As written, for messages. */
  readonly text: string;
  /** Where it is in the config, e.g. `policies[0].validations[1].expression`. */
  readonly field: string;
  readonly evaluate: (bindings: PolicyBindings) => EvaluationResult;
  /** Its nodes and comprehension depth: with the longest list it reads (`lists`), a bound on one evaluation's work (engine/policy/cost.ts). */
  readonly cost: { readonly nodes: number; readonly depth: number; readonly widest: number };
  /** The values whose lists bound its cost. */
  readonly lists: ListsRead;
  /** The names of the rule's scope it reads (`object`, `id`, `variables`, ...). */
  readonly names: ReadonlySet<string>;
  /** The contract fields it selects (`object.Type`), or `all` when it reads a contract otherwise. */
  readonly fields: ReadonlySet<string> | 'all';
}

/**
 * The values an expression's comprehensions can iterate, whose longest list bounds what it costs:
 * the contract fields it selects (of `object`, and of `oldObject` by the same names), or every
 * field the rules read where it reads a contract whole, and the ops where it reads them. An
 * expression that reads `variables` reads what its rule reads: the variables are made of it.
 */
export interface ListsRead {
  readonly fields: readonly string[] | 'all';
  readonly ops: boolean;
}

/**
 * What an evaluation that depends only on some contract fields gave, by those fields' values
 * (engine/policy/memo.ts): CEL is pure, so the same values give the same result, and a pack's
 * rules mostly look at fields whose values repeat across contracts (types, dates, categories).
 * Owned by the compiled config, like the timestamp cache; bounded.
 */
export interface EvaluationMemo<T> {
  /** The contract fields the key is made of, in order. */
  readonly fields: readonly string[];
  /** What is read of each, where it is read in parts (engine/policy/uses.ts); undefined: whole. */
  readonly parts: readonly (Use | undefined)[];
  /** Whether the key holds the longest list of each field read in parts (the expressions iterate lists). */
  readonly measured: boolean;
  /**
   * Whether the rule's messages read more than its key (`id` in a messageExpression): then only
   * that it found nothing is held, and a contract it found something on is evaluated again.
   */
  readonly findingsAgain?: boolean;
  readonly results: Map<MemoKey, T>;
  /** Keys asked for since the results were last cleared (engine/policy/memo.ts memoKey). */
  asked: number;
  /** Evaluations still to run without the memo: it rests after a round that its keys did not pay for. */
  resting: number;
}

/** A memo's key (engine/policy/memo.ts memoKey): its one field's number, or its fields' numbers as a text. */
export type MemoKey = number | string;

/**
 * The values memo keys are made of, each numbered once per contract (engine/policy/memo.ts
 * valueNumber), so that every memo's key for the contract is a few numbers however long the values
 * (a contract's types are a hundred characters and more). Bounded: when full it starts over, its
 * numbers going on from where they were, so that a key made before never matches one made after.
 */
export interface KeyValues {
  readonly scalars: Map<string | number | bigint, number>;
  /** Lists and maps, as paths of their members' numbers from these roots. */
  lists: KeyStep;
  maps: KeyStep;
  /** Values read in parts (engine/policy/memo.ts partsNumber). */
  parts: KeyStep;
  /** Scalars and steps held since the last start. */
  held: number;
  next: number;
}

/** A step of a path of numbers: the number of the list or map that ends here, and the steps on. */
export interface KeyStep {
  number?: number;
  next?: Map<number, KeyStep>;
}

export interface CompiledPolicy {
  readonly name: string;
  readonly on: PolicyConfig['on'];
  readonly action: PolicyConfig['action'];
  /**
   * An `on: contract` rule that reads nothing but contract fields (not `id`, `tenant`, nor a whole
   * contract): the messages of its findings by the values of the fields it reads.
   */
  readonly memo?: EvaluationMemo<readonly string[]>;
  readonly matchConditions: readonly {
    readonly name: string;
    readonly expression: CompiledExpression;
    /** A condition that reads nothing but contract fields: its value (or error) by theirs. */
    readonly memo?: EvaluationMemo<{ readonly value: boolean } | { readonly error: string }>;
  }[];
  readonly variables: readonly { readonly name: string; readonly expression: CompiledExpression }[];
  readonly validations: readonly {
    readonly expression: CompiledExpression;
    readonly message?: string;
    readonly messageExpression?: CompiledExpression;
  }[];
}

/** What a run evaluates: the rules, and the exceptions to them. */
export interface CompiledPolicies {
  readonly policies: readonly CompiledPolicy[];
  readonly exceptions: readonly PolicyExceptionConfig[];
  /** A contract's values as CEL values (engine/policy/cel-values.ts), given by the compiler so that the evaluator loads no CEL itself. */
  readonly toCel: (value: unknown, shape: Shape) => unknown;
  /** A CEL map of values already converted (a contract of the fields a rule reads, engine/policy/evaluate.ts). */
  readonly celMap: (entries: Map<string, unknown>) => unknown;
  /** The contract fields the rules read (only those are converted for CEL), or all of them. */
  readonly reads: ReadonlySet<string> | 'all';
  /** The numbers of the values memo keys are made of (engine/policy/memo.ts), shared by every memo of these rules. */
  readonly keyValues: KeyValues;
}

// Without rules nothing is ever converted.
export const NO_POLICIES: CompiledPolicies = {
  policies: [],
  exceptions: [],
  toCel: (value) => value,
  celMap: (entries) => entries,
  reads: new Set(),
  keyValues: { scalars: new Map(), lists: {}, maps: {}, parts: {}, held: 0, next: 0 },
};
