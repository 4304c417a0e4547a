/**
 * The one interpreter of service ops (docs/architecture.md section 2), shared by the planner, the state store
 * and the emulator: each op is checked against its shape, translated to RFC 6902 and applied with
 * fast-json-patch, all or nothing.
 */
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { getField, type CollectionFieldSpec, type FieldSpec } from './fields.ts';
import { opShapes } from './json-schemas.ts';
import { describeIdentity, memberIdentity } from './normalise.ts';
import { compileSchema, type SchemaCheck } from './schema-validator.ts';
import type { ContractFields, Op } from './types.ts';

const { applyOperation } = fastJsonPatch;

export interface OpProblem {
  /** Index of the op in the list. */
  readonly index: number;
  readonly message: string;
}

/** An op list the service would refuse as malformed (HTTP 400). */
export class InvalidOpsError extends Error {
  readonly code = 'invalid-ops';
  readonly problems: readonly OpProblem[];
  constructor(problems: readonly OpProblem[]) {
    super(`invalid ops: ${problems.map((p) => `#${p.index}: ${p.message}`).join('; ')}`);
    this.problems = problems;
  }
}

/** An Add of a member already present, or a Remove of an absent one (HTTP 409). */
export class OpConflictError extends Error {
  readonly code = 'op-conflict';
  readonly index: number;
  constructor(index: number, message: string) {
    super(`op #${index}: ${message}`);
    this.index = index;
  }
}

let shapeChecks: Map<string, SchemaCheck> | undefined;

function shapeCheck(op: string, path: string): SchemaCheck | undefined {
  shapeChecks ??= new Map(opShapes().map((shape) => [`${shape.op} /Contract/${shape.field.name}`, compileSchema(shape.schema)]));
  return shapeChecks.get(`${op} ${path}`);
}

function fieldOfPath(path: unknown): FieldSpec | undefined {
  return typeof path === 'string' && path.startsWith('/Contract/') ? getField(path.slice('/Contract/'.length)) : undefined;
}

/** Every problem of an op list, checked against specs/patch.schema.json one op at a time. */
export function validateOps(ops: unknown): OpProblem[] {
  if (!Array.isArray(ops)) return [{ index: -1, message: 'expected a JSON array of operations' }];
  if (ops.length === 0) return [{ index: -1, message: 'expected at least one operation' }];
  const problems: OpProblem[] = [];
  for (const [index, op] of ops.entries()) {
    if (op === null || typeof op !== 'object' || Array.isArray(op)) {
      problems.push({ index, message: 'expected an object {op, path, value}' });
      continue;
    }
    const { op: name, path } = op as Record<string, unknown>;
    const field = fieldOfPath(path);
    if (!field) {
      problems.push({ index, message: `unknown path ${JSON.stringify(path)}: expected /Contract/<Field>` });
      continue;
    }
    const check = shapeCheck(String(name), String(path));
    if (!check) {
      problems.push({ index, message: `op ${JSON.stringify(name)} is not allowed on ${String(path)} (allowed: ${field.ops.join(', ')})` });
      continue;
    }
    for (const issue of check(op)) {
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      problems.push({ index, message: `${where}${issue.message}` });
    }
  }
  return problems;
}

function translate(doc: Record<string, unknown>, op: Op, index: number): Operation[] {
  const field = fieldOfPath(op.path);
  if (!field || !(field.ops as readonly string[]).includes(op.op))
    throw new InvalidOpsError([{ index, message: `cannot interpret ${String(op.op)} ${String(op.path)}` }]);
  const pointer = `/${field.name}`;
  if (op.op === 'Replace') {
    return [{ op: Object.hasOwn(doc, field.name) ? 'replace' : 'add', path: pointer, value: structuredClone(op.value) }];
  }
  const collection = field as CollectionFieldSpec;
  const members = (doc[field.name] as unknown[] | undefined) ?? [];
  const identity = memberIdentity(collection, op.value);
  const at = members.findIndex((member) => memberIdentity(collection, member) === identity);
  const who = `${field.name} member (${describeIdentity(collection, op.value)})`;
  if (op.op === 'Add') {
    if (at !== -1) throw new OpConflictError(index, `Add of a ${who} that is already present`);
    const create: Operation[] = Object.hasOwn(doc, field.name) ? [] : [{ op: 'add', path: pointer, value: [] }];
    return [...create, { op: 'add', path: `${pointer}/-`, value: structuredClone(op.value) }];
  }
  if (at === -1) throw new OpConflictError(index, `Remove of a ${who} that is not present`);
  return [{ op: 'remove', path: `${pointer}/${at}` }];
}

/**
 * The contract after `ops`, as the service computes it. `known` is not modified. Throws
 * InvalidOpsError for a malformed list and OpConflictError for a conflict; nothing is applied then.
 */
export function applyOps(known: ContractFields | undefined, ops: readonly Op[]): ContractFields {
  const problems = validateOps(ops);
  if (problems.length > 0) throw new InvalidOpsError(problems);
  return interpret(known, ops);
}

/**
 * The contract after `ops` that the service has already accepted (answered with success). The
 * ops are not checked against their shapes again: the service was the judge of that, and a
 * stricter check here must not turn an applied patch into a failure (docs/architecture.md
 * section 7). Still throws when `known` cannot take them (an Add of a member it already holds, a
 * Remove of one it lacks, a value fast-json-patch refuses): the caller then knows the patch was
 * applied but not what the contract now is.
 */
export function applyAcceptedOps(known: ContractFields | undefined, ops: readonly Op[]): ContractFields {
  return interpret(known, ops);
}

function interpret(known: ContractFields | undefined, ops: readonly Op[]): ContractFields {
  const doc = structuredClone(known ?? {}) as Record<string, unknown>;
  for (const [index, op] of ops.entries()) {
    for (const operation of translate(doc, op, index)) applyOperation(doc, operation, false, true);
  }
  return doc as ContractFields;
}
