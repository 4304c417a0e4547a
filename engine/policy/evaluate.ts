/**
 * The one evaluator of the rules, for every run: `on: contract` rules over a desired contract
 * (validate, plan, apply, drift), `on: change` rules over a planned one. As Kubernetes'
 * ValidatingAdmissionPolicy: matchConditions decide whether a rule applies, variables are
 * evaluated in order, and each validation that is not true is a finding, with its message (or the
 * messageExpression's). A rule that fails while evaluating (a missing key read without `has()`, a
 * value of the wrong type) fails closed: a finding of that rule carrying the error. Pure: the date
 * that judges exceptions is given.
 */
import type { Finding } from '../diagnostic/finding.ts';
import type { ContractFields, Op } from '../model/types.ts';
import { CONTRACT_SHAPE, fieldShape, type Shape } from './contract-shape.ts';
import type { CompiledExpression, CompiledPolicies, CompiledPolicy, EvaluationResult, KeyValues, ListsRead, PolicyBindings } from './types.ts';
import { evaluationCost, longestList, MAX_EVALUATION_COST } from './cost.ts';
import { withException } from './exceptions.ts';
import { memoKey, remember, type FieldKeys } from './memo.ts';
import type { Use } from './uses.ts';

/** A desired contract, as validate reads it (or plan, apply and drift select it). */
export interface PolicyContract {
  readonly tenant: string;
  readonly id: string;
  readonly object: ContractFields;
  readonly file?: string;
  readonly line?: number;
}

/** A planned contract: also what was known of it and the ops that would change it. */
export interface PolicyChange extends PolicyContract {
  /** The known contract; null when unknown. */
  readonly oldObject: ContractFields | null;
  readonly knownFrom: 'state' | 'live' | 'unknown';
  readonly ops: readonly Op[];
}

export interface EvaluateOptions {
  /** `YYYY-MM-DD` (UTC), from the run's clock (engine/policy/exceptions.ts utcDate): judges the exceptions' expiry. */
  readonly today: string;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'object') return 'a list or map';
  return `a ${typeof value}`;
}

/** The longest list among the values an expression reads (the cost bound's n, engine/policy/cost.ts). */
interface ListLengths {
  longest(lists: ListsRead): number;
}

/** A contract's values as CEL reads them (no variables yet), and the lengths of its lists. */
type ContractBindings = PolicyBindings & { readonly lists: ListLengths };

/**
 * One contract as the rules see it: its fields, and what is made of them only when a rule needs it,
 * once however many rules do (most are answered by a memo, engine/policy/memo.ts): each field's
 * longest list (the cost bound's n) and CEL value, the whole contract's for a rule that reads it
 * otherwise than field by field.
 */
class ContractInput implements FieldKeys, ListLengths {
  readonly policies: CompiledPolicies;
  readonly contract: PolicyContract;
  readonly values: KeyValues;
  readonly made = new Map<string, number | undefined>();
  readonly madeParts = new Map<Use, number | undefined>();
  // Made on a contract's first evaluation: most contracts are answered by the memos alone.
  #cel: Map<string, unknown> | undefined;
  #longest: Map<string, number> | undefined;
  #longestOfAll: number | undefined;
  bindings?: ContractBindings;

  constructor(policies: CompiledPolicies, contract: PolicyContract) {
    this.policies = policies;
    this.contract = contract;
    this.values = policies.keyValues;
  }

  get fields(): Readonly<Record<string, unknown>> {
    return this.contract.object;
  }

  longest(lists: ListsRead): number {
    if (lists.fields === 'all') {
      this.#longestOfAll ??= longestList(readFields(this.policies, this.contract.object));
      return this.#longestOfAll;
    }
    let longest = 0;
    for (const field of lists.fields) longest = Math.max(longest, this.longestOf(field));
    return longest;
  }

  longestOf(field: string): number {
    this.#longest ??= new Map();
    let longest = this.#longest.get(field);
    if (longest === undefined) {
      longest = longestList(this.fields[field]);
      this.#longest.set(field, longest);
    }
    return longest;
  }

  /** A field's value as CEL reads it, made once. */
  celField(field: string, value: unknown): unknown {
    this.#cel ??= new Map();
    let cel = this.#cel.get(field);
    if (cel === undefined) {
      cel = this.policies.toCel(value, fieldShape(field));
      this.#cel.set(field, cel);
    }
    return cel;
  }
}

const NO_VARIABLES: ReadonlyMap<string, unknown> = new Map();

/**
 * The bindings of a rule without a memo: the fields the rules read, each converted once for every
 * rule (fieldBindings), or the whole contract where a rule reads it otherwise than field by field.
 */
function bindingsOf(input: ContractInput): ContractBindings {
  const { reads } = input.policies;
  input.bindings ??=
    reads === 'all'
      ? {
          tenant: input.contract.tenant,
          id: input.contract.id,
          object: input.policies.toCel(input.fields, CONTRACT_SHAPE),
          variables: NO_VARIABLES,
          lists: input,
        }
      : fieldBindings(input, [...reads]);
  return input.bindings;
}

/** The value of `expression`, or why there is none; an expression over the cost bound is not run. */
function run(expression: CompiledExpression, bindings: ContractBindings): EvaluationResult {
  // Without comprehensions the cost is the expression's size, whatever the lists: none is measured.
  const longest = expression.cost.depth === 0 ? 0 : bindings.lists.longest(expression.lists);
  const cost = evaluationCost(expression, longest);
  if (cost > MAX_EVALUATION_COST) {
    return {
      error: `evaluating it could cost ${cost.toExponential(1)} steps on this contract (lists of up to ${bindings.lists.longest(expression.lists)} items, comprehensions ${expression.cost.depth} deep), over the bound of ${MAX_EVALUATION_COST.toExponential(0)}`,
    };
  }
  return expression.evaluate(bindings);
}

function runBool(expression: CompiledExpression, bindings: ContractBindings): { value: boolean } | { error: string } {
  const result = run(expression, bindings);
  if ('error' in result) return result;
  return typeof result.value === 'boolean' ? { value: result.value } : { error: `expected a bool, got ${describeValue(result.value)}` };
}

function messageOf(validation: CompiledPolicy['validations'][number], bindings: ContractBindings): string {
  const fallback = validation.message ?? `failed: ${validation.expression.text}`;
  if (validation.messageExpression === undefined) return fallback;
  const result = run(validation.messageExpression, bindings);
  if ('error' in result) return `${fallback} (messageExpression failed: ${result.error})`;
  if (typeof result.value !== 'string') return `${fallback} (messageExpression gave ${describeValue(result.value)}, not a string)`;
  return result.value;
}

function findingOf(policy: CompiledPolicy, contract: PolicyContract, message: string): Finding {
  return {
    check: policy.name,
    action: policy.action,
    tenant: contract.tenant,
    contractId: contract.id,
    ...(contract.file === undefined ? {} : { file: contract.file }),
    ...(contract.line === undefined ? {} : { line: contract.line }),
    message,
  };
}

function failedMessage(expression: CompiledExpression, error: string): string {
  return `evaluation error in ${expression.field}: ${error} (the rule fails closed)`;
}

/** The messages of one rule's findings on a contract's bindings (an evaluation error is a finding too). */
function policyMessages(policy: CompiledPolicy, bindings: ContractBindings, conditions?: ContractInput, holding = 0): readonly string[] {
  // Most rules on most contracts find nothing: nothing is allocated for them but their variables.
  const variables = policy.variables.length === 0 ? undefined : new Map<string, unknown>();
  const scope = variables === undefined ? bindings : { ...bindings, variables };
  // The first `holding` conditions were found to hold already (contractRuleMessages).
  for (let index = holding; index < policy.matchConditions.length; index += 1) {
    const condition = policy.matchConditions[index]!;
    const result = conditionValue(condition, scope, conditions);
    if ('error' in result) return [failedMessage(condition.expression, result.error)];
    if (!result.value) return NONE;
  }
  for (const variable of policy.variables) {
    const result = run(variable.expression, scope);
    if ('error' in result) return [failedMessage(variable.expression, result.error)];
    variables!.set(variable.name, result.value);
  }
  let messages: string[] | undefined;
  for (const validation of policy.validations) {
    const result = runBool(validation.expression, scope);
    if ('error' in result) (messages ??= []).push(failedMessage(validation.expression, result.error));
    else if (!result.value) (messages ??= []).push(messageOf(validation, scope));
  }
  return messages ?? NONE;
}

const NONE: readonly string[] = [];

/** A match condition's value, from its memo when the contract's fields gave it before. */
function conditionValue(
  condition: CompiledPolicy['matchConditions'][number],
  scope: ContractBindings,
  input: ContractInput | undefined,
): { value: boolean } | { error: string } {
  const key = condition.memo && input ? memoKey(condition.memo, input) : undefined;
  if (key === undefined) return runBool(condition.expression, scope);
  return condition.memo!.results.get(key) ?? remember(condition.memo!, key, runBool(condition.expression, scope));
}

/** The findings of one rule on one contract, before exceptions. */
export function evaluatePolicy(policy: CompiledPolicy, contract: PolicyContract, bindings: ContractBindings): Finding[] {
  return policyMessages(policy, bindings).map((message) => findingOf(policy, contract, message));
}

/**
 * One `on: contract` rule's messages on a contract. Its conditions first, in order, each from its
 * own memo where it has one: a condition reads fewer fields than its rule (is-dora the types, the
 * rule the owners too), so its key is seen again where the rule's is new, and a rule whose
 * condition does not hold costs a look-up. Then the rule from its memo, else evaluated.
 */
function contractRuleMessages(policy: CompiledPolicy, input: ContractInput): readonly string[] {
  let holding = 0;
  for (const condition of policy.matchConditions) {
    const key = condition.memo && memoKey(condition.memo, input);
    // A condition without a memo is evaluated below with the others, in their order.
    if (key === undefined) break;
    const result =
      condition.memo!.results.get(key) ?? remember(condition.memo!, key, runBool(condition.expression, fieldBindings(input, condition.memo!.fields)));
    if ('error' in result) return [failedMessage(condition.expression, result.error)];
    if (!result.value) return NONE;
    holding += 1;
  }
  const { memo } = policy;
  if (memo === undefined) return policyMessages(policy, bindingsOf(input), input, holding);
  const key = memoKey(memo, input);
  if (memo.findingsAgain) {
    // Its messages read more than its fields: only that it found nothing is held.
    const found = key === undefined ? undefined : memo.results.get(key);
    if (found !== undefined && found !== FOUND) return found;
    const messages = policyMessages(policy, bindingsOf(input), input, holding);
    if (found === undefined && key !== undefined) remember(memo, key, messages.length === 0 ? NONE : FOUND);
    return messages;
  }
  // Without a key (the memo rests, or a value is never held) the rule still reads only its fields.
  if (key === undefined) return policyMessages(policy, fieldBindings(input, memo.fields), input, holding);
  return memo.results.get(key) ?? remember(memo, key, policyMessages(policy, fieldBindings(input, memo.fields), input, holding));
}

/** Held for a rule whose messages are made again: it found something on a contract with this key. */
const FOUND: readonly string[] = [];

/**
 * The bindings of a rule that reads only `fields` (its memo's, or every field the rules read):
 * `object` holds those alone, so that a rule over two dates converts two strings for CEL, not the
 * contract's lists (the rule cannot read another field: the compiler lets only such rules have a
 * memo, and the cost bound counts only the lists an expression reads).
 */
function fieldBindings(input: ContractInput, fields: readonly string[]): ContractBindings {
  const object = new Map<string, unknown>();
  for (const field of fields) {
    const value = input.fields[field];
    if (value !== undefined) object.set(field, input.celField(field, value));
  }
  return {
    tenant: input.contract.tenant,
    id: input.contract.id,
    object: input.policies.celMap(object),
    variables: NO_VARIABLES,
    lists: input,
  };
}

/** The fields of `fields` the rules read: converting the others for CEL would be wasted (a third of a pack's cost). */
function readFields(policies: CompiledPolicies, fields: ContractFields): Readonly<Record<string, unknown>> {
  const { reads } = policies;
  if (reads === 'all') return fields;
  const read: Record<string, unknown> = {};
  for (const name of reads) {
    const value = (fields as Readonly<Record<string, unknown>>)[name];
    if (value !== undefined) read[name] = value;
  }
  return read;
}

/** The ops as CEL sees them: a Replace's value as its field's, an Add's or Remove's as one member of it. */
function opsOf(policies: CompiledPolicies, ops: readonly Op[]): unknown[] {
  return ops.map((op) => {
    const field = fieldShape(op.path.slice('/Contract/'.length));
    const value = field.kind === 'list' ? field.element : field;
    return policies.toCel(op, { kind: 'map', name: 'an op', fields: new Map<string, Shape>([...opFields, ['value', value]]) });
  });
}

const opFields: readonly [string, Shape][] = [
  ['op', { kind: 'scalar', type: 'string', nullable: false }],
  ['path', { kind: 'scalar', type: 'string', nullable: false }],
];

/** The findings of every `on: contract` rule on one desired contract, exceptions applied. */
export function evaluateContractPolicies(policies: CompiledPolicies, contract: PolicyContract, options: EvaluateOptions): Finding[] {
  const findings: Finding[] = [];
  let input: ContractInput | undefined;
  for (const policy of policies.policies) {
    if (policy.on !== 'contract') continue;
    input ??= new ContractInput(policies, contract);
    for (const message of contractRuleMessages(policy, input))
      findings.push(withException(findingOf(policy, contract, message), policies.exceptions, options.today));
  }
  return findings;
}

/** The findings of every `on: change` rule on one planned contract, exceptions applied. */
export function evaluateChangePolicies(policies: CompiledPolicies, change: PolicyChange, options: EvaluateOptions): Finding[] {
  const rules = policies.policies.filter((policy) => policy.on === 'change');
  if (rules.length === 0) return [];
  const input = new ContractInput(policies, change);
  const old = change.oldObject === null ? undefined : new ContractInput(policies, { ...change, object: change.oldObject });
  const lists: ListLengths = {
    longest: (read) => Math.max(input.longest(read), old?.longest(read) ?? 0, read.ops ? change.ops.length : 0),
  };
  const bindings = {
    ...bindingsOf(input),
    lists,
    oldObject: change.oldObject === null ? null : policies.toCel(readFields(policies, change.oldObject), CONTRACT_SHAPE),
    knownFrom: change.knownFrom,
    ops: opsOf(policies, change.ops),
  };
  return rules.flatMap((policy) => evaluatePolicy(policy, change, bindings)).map((finding) => withException(finding, policies.exceptions, options.today));
}
