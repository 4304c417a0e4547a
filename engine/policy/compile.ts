/**
 * The rules of the config, compiled once when the config is read: each expression parsed, checked
 * against the contract table (engine/policy/check-expression.ts) and planned by @bufbuild/cel.
 * Every problem is a config error at the expression's line and column. Pure.
 */
import { celEnv, celFunc, CelScalar, isCelError, listType, mapType, objectType, parse, plan, type CelEnv, type CelResult } from '@bufbuild/cel';
import { create, fromJson } from '@bufbuild/protobuf';
import { reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { TimestampSchema, type Timestamp } from '@bufbuild/protobuf/wkt';
import { strings } from '@bufbuild/cel/ext';
import type { ExpressionSource, PolicyConfig, PolicyExceptionConfig, SourceAt } from '../config/types.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import type { Shape } from './contract-shape.ts';
import { withCallSites } from './call-sites.ts';
import { celMapOf, toCel } from './cel-values.ts';
import { checkExpression } from './check-expression.ts';
import { keyValues, memoable, memoFor } from './memo.ts';
import { newUse, recordUses, type Refs, type Use } from './uses.ts';
import type { CompiledExpression, CompiledPolicies, CompiledPolicy, EvaluationResult, PolicyBindings } from './types.ts';

export interface CompileResult {
  /** Present when every rule compiled. */
  readonly policies?: CompiledPolicies;
  readonly diagnostics: Diagnostic[];
}

/** Texts whose `timestamp()` is held: a repository's timestamps repeat (a contract's dates are often the first of a year). */
const TIMESTAMPS_HELD = 10_000;

/** A date as the desired state normalises it (engine/model/normalise.ts): UTC, whole seconds. */
const PLAIN_UTC = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
// The range protobuf's JSON reading accepts (its timestampMsMin and timestampMsMax, which it does not export).
const FIRST_MS = Date.parse('0001-01-01T00:00:00Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59Z');

/**
 * `fromJson(TimestampSchema, text)`. A text of PLAIN_UTC's form is read as protobuf reads it
 * (from-json.js timestampFromJson: its pattern matches with no fraction and no offset, so the
 * text it gives Date.parse is this one; nanos 0), without the generic reader around it, which
 * cost more than the reading on dates a rule had not seen; any other text, and one out of range,
 * is left to protobuf, errors included.
 */
export function timestampFromText(text: string): Timestamp {
  if (PLAIN_UTC.test(text)) {
    const ms = Date.parse(text);
    if (ms >= FIRST_MS && ms <= LAST_MS) return create(TimestampSchema, { seconds: BigInt(ms / 1000), nanos: 0 });
  }
  return fromJson(TimestampSchema, text);
}

/**
 * `timestamp(string)` as the standard library has it (protobuf's JSON reading of a Timestamp, an
 * error for anything else), remembering what it read: the standard one reads the text anew at
 * every call, half of what a date rule costs a contract. What it holds is the message as CEL
 * reflects it, as the library would make it of the message at every call (value.js toCel, with the
 * same TimestampSchema its registry holds).
 */
function timestampOfText(): ReturnType<typeof celFunc> {
  const held = new Map<string, ReflectMessage>();
  return celFunc('timestamp', [CelScalar.STRING], objectType(TimestampSchema), (text) => {
    const found = held.get(text);
    if (found !== undefined) return found;
    let timestamp: ReflectMessage;
    try {
      timestamp = reflect(TimestampSchema, timestampFromText(text));
    } catch (error) {
      throw new Error(`Failed to parse timestamp: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (held.size >= TIMESTAMPS_HELD) held.clear();
    held.set(text, timestamp);
    return timestamp;
  });
}

/**
 * The rules' environment, one per compiled config (it owns the timestamp cache): the standard
 * library and the strings extension (`join`, `lowerAscii`, `split`, ...), as Kubernetes' CEL
 * environment has them.
 */
export function rulesEnvironment(): CelEnv {
  return celEnv({
    funcs: [...strings, timestampOfText()],
    variables: {
      tenant: CelScalar.STRING,
      id: CelScalar.STRING,
      object: CelScalar.DYN,
      oldObject: CelScalar.DYN,
      knownFrom: CelScalar.STRING,
      ops: listType(CelScalar.DYN),
      variables: mapType(CelScalar.STRING, CelScalar.DYN),
    },
  });
}

/** The position in the file of `offset` inside an expression's text. */
export function positionInFile(source: ExpressionSource, offset: number): SourceAt {
  const first = source.lines[0]!;
  if (!source.exact) return first;
  const before = source.text.slice(0, Math.max(0, Math.min(offset, source.text.length)));
  const index = before.split('\n').length - 1;
  const line = source.lines[index] ?? first;
  const column = before.length - (before.lastIndexOf('\n') + 1);
  return { line: line.line, column: line.column + column };
}

/**
 * A parsed expression planned in the rules' environment, as a function that never throws: every
 * rule runs through it, and so does the conformance test (test/policy/conformance.test.ts). Each
 * call in it tries first the overload that answered it last (engine/policy/call-sites.ts).
 */
export function celProgram(environment: CelEnv, parsed: ReturnType<typeof parse>): (bindings: Readonly<Record<string, unknown>>) => EvaluationResult {
  const run = plan(withCallSites(environment), parsed) as (bindings: Readonly<Record<string, unknown>>) => CelResult;
  return function evaluate(bindings) {
    let result: CelResult;
    try {
      result = run(bindings);
    } catch (error) {
      // @bufbuild/cel returns its errors; anything thrown is still this rule's failure, not the run's.
      return { error: error instanceof Error ? error.message : String(error) };
    }
    return isCelError(result) ? { error: result.message } : { value: result };
  };
}

/** A parsed CEL expression (cel.expr.Expr). */
type ParsedExpr = ReturnType<typeof parse>['expr'];

interface ParseFailure {
  readonly location?: { readonly start?: { readonly offset?: number } };
  readonly rawMessage?: string;
}

/** A parse error's message without the `<input>:1:3: ` prefix (the diagnostic gives the file's position). */
function parseMessage(error: unknown): { message: string; offset: number } {
  const failure = (error ?? {}) as ParseFailure;
  const message = failure.rawMessage ?? (error instanceof Error ? error.message.replace(/^<input>:\d+:\d+: /, '') : String(error));
  return { message, offset: failure.location?.start?.offset ?? 0 };
}

/**
 * Compiles one expression with what is known of the rule so far; problems are pushed to
 * `diagnostics`. Returns undefined when it does not compile.
 */
/** The contract fields any rule reads; `whole` when one reads a contract otherwise than field by field. */
interface Usage {
  readonly fields: Set<string>;
  whole: boolean;
}

function compileExpression(
  file: string,
  environment: CelEnv,
  usage: Usage,
  policy: PolicyConfig,
  field: string,
  source: ExpressionSource,
  variables: ReadonlyMap<string, Shape>,
  diagnostics: Diagnostic[],
): { expression: CompiledExpression; shape: Shape; parsed: ParsedExpr } | undefined {
  function problem(offset: number, message: string): void {
    const { line, column } = positionInFile(source, offset);
    diagnostics.push({ severity: 'error', code: 'policy', file, line, column, field, message: `policy "${policy.name}": ${message}` });
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source.text);
  } catch (error) {
    const { message, offset } = parseMessage(error);
    problem(offset, `does not compile: ${message}`);
    return undefined;
  }
  const positions = Object.fromEntries(Object.entries(parsed.sourceInfo?.positions ?? {}).map(([id, offset]) => [id, Number(offset)]));
  const checked = checkExpression(source.text, parsed.expr, positions, { on: policy.on, variables });
  for (const found of checked.problems) problem(found.offset, found.message);
  if (checked.reads === 'all') usage.whole = true;
  else for (const name of checked.reads) usage.fields.add(name);
  if (checked.problems.length > 0) return undefined;
  let run: (bindings: Readonly<Record<string, unknown>>) => EvaluationResult;
  try {
    run = celProgram(environment, parsed);
  } catch (error) {
    problem(0, `does not compile: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  function evaluate(bindings: PolicyBindings): EvaluationResult {
    // The bindings are read by name as they are (no copy per evaluation); an on: contract rule
    // has no oldObject, knownFrom or ops to read (the check above refuses them).
    return run(bindings as unknown as Readonly<Record<string, unknown>>);
  }
  // What its own reads bound; one that reads `variables` is given its rule's (compilePolicy).
  const lists = { fields: checked.reads === 'all' ? ('all' as const) : [...checked.reads].sort(), ops: checked.names.has('ops') };
  return {
    expression: { text: source.text, field, evaluate, cost: checked.cost, lists, names: checked.names, fields: checked.reads },
    shape: checked.shape,
    parsed: parsed.expr,
  };
}

function compilePolicy(
  file: string,
  environment: CelEnv,
  usage: Usage,
  interned: Map<string, Use>,
  policy: PolicyConfig,
  index: number,
  diagnostics: Diagnostic[],
): CompiledPolicy | undefined {
  const before = diagnostics.length;
  const at = `policies[${index}]`;
  const variables = new Map<string, Shape>();
  function compile(field: string, source: ExpressionSource): ReturnType<typeof compileExpression> {
    return compileExpression(file, environment, usage, policy, `${at}.${field}`, source, variables, diagnostics);
  }
  const matchConditions = policy.matchConditions.map((condition, i) => ({
    name: condition.name,
    compiled: compile(`matchConditions[${i}].expression`, condition.expression),
  }));
  const compiledVariables = policy.variables.map((variable, i) => {
    const compiled = compile(`variables[${i}].expression`, variable.expression);
    // Defined after its own expression: a variable reads only the ones before it.
    variables.set(variable.name, compiled?.shape ?? { kind: 'dyn' });
    return { name: variable.name, compiled };
  });
  const validations = policy.validations.map((validation, i) => ({
    compiled: compile(`validations[${i}].expression`, validation.expression),
    message: validation.message,
    messageExpression: validation.messageExpression === undefined ? undefined : compile(`validations[${i}].messageExpression`, validation.messageExpression),
  }));
  if (diagnostics.length > before) return undefined;
  const messages = validations.flatMap((validation) => (validation.messageExpression ? [validation.messageExpression] : []));
  // Messages that read more than the rule's fields (`id`) are left out of its memo: it then holds only that the rule found nothing.
  const findingsAgain = messages.some(({ expression }) => !memoable(expression, OBJECT_AND_VARIABLES));
  const checked = [
    ...matchConditions.map((condition) => condition.compiled!),
    ...compiledVariables.map((variable) => variable.compiled!),
    ...validations.map((validation) => validation.compiled!),
  ];
  const keyed = findingsAgain ? checked : [...checked, ...messages];
  // What the keyed expressions read of the contract, in their order: a variable's value is read where it is.
  const read = newUse();
  const variableValues = new Map<string, Refs>();
  for (const condition of matchConditions) recordUses(condition.compiled!.parsed, read, variableValues, 'value');
  for (const variable of compiledVariables) variableValues.set(variable.name, recordUses(variable.compiled!.parsed, read, variableValues, 'variable'));
  for (const validation of validations) recordUses(validation.compiled!.parsed, read, variableValues, 'value');
  if (!findingsAgain) for (const message of messages) recordUses(message.parsed, read, variableValues, 'value');
  const memo =
    policy.on === 'contract'
      ? memoFor<readonly string[]>(
          keyed.map((compiled) => compiled.expression),
          OBJECT_AND_VARIABLES,
          read,
          interned,
        )
      : undefined;
  const expressions = [...checked, ...messages].map((compiled) => compiled.expression);
  const bounded = boundedByRule(expressions);
  return {
    name: policy.name,
    on: policy.on,
    action: policy.action,
    ...(memo ? { memo: findingsAgain ? { ...memo, findingsAgain } : memo } : {}),
    matchConditions: matchConditions.map((condition) => {
      // A condition has a memo of its own when it reads fewer fields than the rule's memo, or some
      // in parts: its key repeats where the rule's does not (engine/policy/evaluate.ts contractRuleMessages).
      const conditionRead = newUse();
      recordUses(condition.compiled!.parsed, conditionRead, new Map(), 'value');
      const found = memoFor<{ value: boolean } | { error: string }>([condition.compiled!.expression], OBJECT_ONLY, conditionRead, interned);
      const conditionMemo = found && (!memo || found.fields.length < memo.fields.length || found.parts.some((use) => use !== undefined)) ? found : undefined;
      return { name: condition.name, expression: bounded(condition.compiled!.expression), ...(conditionMemo ? { memo: conditionMemo } : {}) };
    }),
    variables: compiledVariables.map((variable) => ({ name: variable.name, expression: bounded(variable.compiled!.expression) })),
    validations: validations.map((validation) => ({
      expression: bounded(validation.compiled!.expression),
      ...(validation.message === undefined ? {} : { message: validation.message }),
      ...(validation.messageExpression === undefined ? {} : { messageExpression: bounded(validation.messageExpression.expression) }),
    })),
  };
}

/**
 * The rule's expressions as they are, but one that reads `variables`, which is bounded by what the
 * rule reads (its variables are made of it): every field its expressions select (or all, where one
 * reads a contract whole), and the ops where one reads them.
 */
function boundedByRule(expressions: readonly CompiledExpression[]): (expression: CompiledExpression) => CompiledExpression {
  const fields = new Set<string>();
  let whole = false;
  for (const expression of expressions) {
    if (expression.lists.fields === 'all') whole = true;
    else for (const field of expression.lists.fields) fields.add(field);
  }
  const lists = { fields: whole ? ('all' as const) : [...fields].sort(), ops: expressions.some((expression) => expression.lists.ops) };
  return (expression) => (expression.names.has('variables') ? { ...expression, lists } : expression);
}

const OBJECT_ONLY: ReadonlySet<string> = new Set(['object']);
const OBJECT_AND_VARIABLES: ReadonlySet<string> = new Set(['object', 'variables']);

/** Compiles every rule of the config; `file` is the config file as messages show it. */
export function compilePolicies(
  file: string,
  config: { readonly policies?: readonly PolicyConfig[]; readonly policyExceptions?: readonly PolicyExceptionConfig[] },
): CompileResult {
  const diagnostics: Diagnostic[] = [];
  const environment = rulesEnvironment();
  const usage: Usage = { fields: new Set(), whole: false };
  // What rules read of a field, one object per field and shape (engine/policy/uses.ts sharedUse).
  const interned = new Map<string, Use>();
  const policies = (config.policies ?? []).map((policy, index) => compilePolicy(file, environment, usage, interned, policy, index, diagnostics));
  if (diagnostics.length > 0) return { diagnostics };
  return {
    policies: {
      policies: policies as CompiledPolicy[],
      exceptions: config.policyExceptions ?? [],
      toCel,
      celMap: celMapOf,
      reads: usage.whole ? 'all' : usage.fields,
      keyValues: keyValues(),
    },
    diagnostics,
  };
}
