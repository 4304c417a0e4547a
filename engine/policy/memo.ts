/**
 * Evaluations answered from what the same contract field values gave before. A CEL expression is
 * pure: given the same values for the names it reads, it gives the same value, or the same error.
 * An expression (or a whole `on: contract` rule) that reads nothing but fields of `object` (not
 * `id`, `tenant`, nor a contract read whole) depends on those fields' values, and nothing else
 * (its cost bound too, engine/policy/cost.ts: it counts the lists of the fields read): those make
 * the key.
 * Rules mostly look at fields whose values repeat across a repository's contracts (types, dates,
 * categories), so most evaluations are not run again. Pure; the memo is owned by the compiled
 * config (engine/policy/compile.ts) and bounded.
 */
import { CONTRACT_SHAPE } from './contract-shape.ts';
import type { CompiledExpression, EvaluationMemo, KeyValues } from './types.ts';

/** Results held per memo; when it is full it starts over (a repository with that many distinct values gains little from it). */
export const MEMO_ENTRIES = 4096;

const CONTRACT_FIELDS: ReadonlySet<string> = CONTRACT_SHAPE.kind === 'map' ? new Set(CONTRACT_SHAPE.fields.keys()) : new Set();

/**
 * A memo for expressions whose value depends only on the contract fields they select, or none when
 * one of them reads anything else (`id`, `tenant`, a contract otherwise than field by field). A rule's
 * own `variables` are allowed where `variables` is given: they are computed from the same fields.
 */
export function memoFor<T>(expressions: readonly CompiledExpression[], allowed: ReadonlySet<string>): EvaluationMemo<T> | undefined {
  const fields = new Set<string>();
  for (const expression of expressions) {
    if (expression.fields === 'all') return undefined;
    for (const name of expression.names) if (!allowed.has(name)) return undefined;
    for (const field of expression.fields) if (CONTRACT_FIELDS.has(field)) fields.add(field);
  }
  return { fields: [...fields].sort(), results: new Map(), asked: 0, resting: 0 };
}

/**
 * A value as a key: equal keys only for values CEL sees as the same (a string is quoted; -0, NaN
 * and the infinities are told apart; an object's keys in their order, which a comprehension over
 * a map follows). Undefined for anything else (a Date, a Map, a class instance): never held.
 */
export function valueKey(value: unknown): string | undefined {
  if (value === null) return 'n';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'boolean':
      return value ? 't' : 'f';
    case 'bigint':
      return `${value}n`;
    case 'object':
      return Array.isArray(value) ? listKey(value) : mapKey(value);
    default:
      return undefined;
  }
}

function listKey(items: readonly unknown[]): string | undefined {
  let key = '[';
  for (const item of items) {
    const part = valueKey(item);
    if (part === undefined) return undefined;
    key += `${part},`;
  }
  return `${key}]`;
}

function mapKey(value: object): string | undefined {
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  let key = '{';
  for (const [name, item] of Object.entries(value)) {
    // As the CEL conversion (engine/policy/cel-values.ts), a key whose value is undefined is absent.
    if (item === undefined) continue;
    const part = valueKey(item);
    if (part === undefined) return undefined;
    key += `${JSON.stringify(name)}:${part},`;
  }
  return `${key}}`;
}

/** Values numbered at most (some 5 MB of keys); a repository with more distinct values gains little from the memos anyway. */
export const KEY_VALUES_HELD = 65_536;

export function keyValues(): KeyValues {
  return { numbers: new Map(), next: 0 };
}

/** One contract's field values as key numbers, each made once however many rules read the field. */
export interface FieldKeys {
  readonly fields: Readonly<Record<string, unknown>>;
  readonly values: KeyValues;
  /** A field's number, or undefined when its value is never held. */
  readonly made: Map<string, number | undefined>;
}

function fieldNumber(contract: FieldKeys, field: string): number | undefined {
  const value = contract.fields[field];
  // Absent is not null: `has(object.X)` tells them apart.
  const text = value === undefined ? 'u' : valueKey(value);
  if (text === undefined) return undefined;
  const { values } = contract;
  let number = values.numbers.get(text);
  if (number === undefined) {
    if (values.numbers.size >= KEY_VALUES_HELD) values.numbers.clear();
    number = values.next++;
    values.numbers.set(text, number);
  }
  return number;
}

/** The key of `memo` for a contract, or undefined when one of its fields has a value that is never held. */
export function memoKey(memo: EvaluationMemo<unknown>, contract: FieldKeys): string | undefined {
  if (memo.resting > 0) {
    memo.resting -= 1;
    return undefined;
  }
  memo.asked += 1;
  let key = '';
  for (const field of memo.fields) {
    let number = contract.made.get(field);
    if (number === undefined && !contract.made.has(field)) {
      number = fieldNumber(contract, field);
      contract.made.set(field, number);
    }
    if (number === undefined) return undefined;
    key += `|${number}`;
  }
  return key;
}

/**
 * Evaluations run without the memo after a round (MEMO_ENTRIES results held) in which fewer than a
 * quarter of the keys asked for were found: on values that do not repeat (a date of its own on
 * every contract), making keys and holding results costs more than it saves, the results held
 * mostly outliving the young generation's collections to die in the old one.
 */
export const MEMO_REST = 16 * MEMO_ENTRIES;

/** Holds `result` under `key`, starting over when the memo is full (and resting when it did not pay). */
export function remember<T>(memo: EvaluationMemo<T>, key: string, result: T): T {
  if (memo.results.size >= MEMO_ENTRIES) {
    // Each result held was a key not found: the others asked for were found.
    if (memo.asked - memo.results.size < memo.asked / 4) memo.resting = MEMO_REST;
    memo.results.clear();
    memo.asked = 0;
  }
  memo.results.set(key, result);
  return result;
}
