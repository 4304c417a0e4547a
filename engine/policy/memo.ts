/**
 * Evaluations answered from what the same contract field values gave before. A CEL expression is
 * pure: given the same values for the names it reads, it gives the same value, or the same error.
 * An expression (or a whole `on: contract` rule) that reads nothing but fields of `object` (not
 * `id`, `tenant`, nor a contract read whole) depends on those fields' values, and nothing else
 * (its cost bound too, engine/policy/cost.ts: it counts the lists of the fields read): those make
 * the key, or of a field it reads only in parts (engine/policy/uses.ts) those parts, with the
 * field's longest list where the bound needs it.
 * Rules mostly look at fields whose values repeat across a repository's contracts (types, dates,
 * categories), so most evaluations are not run again. Pure; the memo is owned by the compiled
 * config (engine/policy/compile.ts) and bounded.
 */
import { CONTRACT_SHAPE } from './contract-shape.ts';
import type { CompiledExpression, EvaluationMemo, KeyStep, KeyValues, MemoKey } from './types.ts';
import { sharedUse, type Use } from './uses.ts';

/** Results held per memo; when it is full it starts over (a repository with that many distinct values gains little from it). */
export const MEMO_ENTRIES = 4096;

const CONTRACT_FIELDS: ReadonlySet<string> = CONTRACT_SHAPE.kind === 'map' ? new Set(CONTRACT_SHAPE.fields.keys()) : new Set();

/**
 * A memo for expressions whose value depends only on the contract fields they select, or none when
 * one of them reads anything else (`id`, `tenant`, a contract otherwise than field by field). A rule's
 * own `variables` are allowed where `variables` is given: they are computed from the same fields.
 * `read` is what the expressions read of `object` (engine/policy/uses.ts): a field read only in
 * parts is keyed by those parts.
 */
export function memoFor<T>(
  expressions: readonly CompiledExpression[],
  allowed: ReadonlySet<string>,
  read: Use,
  interned: Map<string, Use>,
): EvaluationMemo<T> | undefined {
  const fields = new Set<string>();
  let iterates = false;
  for (const expression of expressions) {
    if (!memoable(expression, allowed)) return undefined;
    for (const field of expression.fields) if (CONTRACT_FIELDS.has(field)) fields.add(field);
    if (expression.cost.depth > 0) iterates = true;
  }
  const sorted = [...fields].sort();
  const parts = sorted.map((field) => {
    const use = read.whole ? undefined : read.fields?.get(field);
    return use === undefined ? undefined : sharedUse(interned, field, use);
  });
  return { fields: sorted, parts, measured: iterates && parts.some((use) => use !== undefined), results: new Map(), asked: 0, resting: 0 };
}

/** Whether an expression's value depends only on the contract fields it selects (and the names `allowed`). */
export function memoable(
  expression: CompiledExpression,
  allowed: ReadonlySet<string>,
): expression is CompiledExpression & { readonly fields: ReadonlySet<string> } {
  return expression.fields !== 'all' && [...expression.names].every((name) => allowed.has(name));
}

/** The numbers of the values every memo starts with; others are numbered from NUMBERED_FIRST on. */
const ABSENT = 0;
const NULL = 1;
const FALSE = 2;
const TRUE = 3;
const MINUS_ZERO = 4;
/** A value of which nothing is read but that it is there. */
const PRESENT = 5;
const NUMBERED_FIRST = 6;

/** Values numbered at most (scalars and steps of lists and maps, some 5 MB); a repository with more distinct values gains little from the memos anyway. */
export const KEY_VALUES_HELD = 65_536;

export function keyValues(): KeyValues {
  return { scalars: new Map(), lists: {}, maps: {}, parts: {}, held: 0, next: NUMBERED_FIRST };
}

/**
 * A field's value as a number: equal numbers only for values CEL sees as the same (a string is not
 * the number it spells, -0 is not 0, absent is not null, a map's keys count in their order, which a
 * comprehension over it follows). A list is the path of its items' numbers from a root (a map's,
 * of its keys' and values'), so numbering a contract's types makes no text and hashes no long one.
 * Undefined for anything else (a Date, a Map, a class instance): never held. Starts over when
 * KEY_VALUES_HELD values are held; numbers are never given twice, so a number given before never
 * stands for another value after.
 */
export function valueNumber(values: KeyValues, value: unknown): number | undefined {
  startOverWhenFull(values);
  return numberOf(values, value);
}

/**
 * The number of the parts of `value` that `use` reads: a list's items' parts in their order (so
 * its length), a map's fields' (absent told from null), a value read whole as valueNumber; a value
 * read in parts other than it has (a field of a list, the items of a map) is read whole, since
 * CEL's answer (an error) depends on what it is.
 */
export function partsNumber(values: KeyValues, value: unknown, use: Use): number | undefined {
  startOverWhenFull(values);
  return partsOf(values, value, use);
}

function startOverWhenFull(values: KeyValues): void {
  if (values.held < KEY_VALUES_HELD) return;
  values.scalars.clear();
  values.lists = {};
  values.maps = {};
  values.parts = {};
  values.held = 0;
}

function partsOf(values: KeyValues, value: unknown, use: Use): number | undefined {
  if (value === undefined) return ABSENT;
  if (use.whole) return numberOf(values, value);
  const { fields, items } = use;
  if (fields === undefined && items === undefined) return PRESENT;
  let step = values.parts;
  if (Array.isArray(value) && fields === undefined) {
    for (const item of value) {
      const number = partsOf(values, item, items!);
      if (number === undefined) return undefined;
      step = stepOn(values, step, number);
    }
    // A list's path and a map's never meet: for one use, values are read in parts of one kind.
    return (step.number ??= values.next++);
  }
  if (isPlainMap(value) && items === undefined) {
    for (const [name, read] of fields!) {
      const number = partsOf(values, Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined, read);
      if (number === undefined) return undefined;
      step = stepOn(values, step, number);
    }
    return (step.number ??= values.next++);
  }
  return numberOf(values, value);
}

function isPlainMap(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function numberOf(values: KeyValues, value: unknown): number | undefined {
  switch (typeof value) {
    case 'undefined':
      return ABSENT;
    case 'boolean':
      return value ? TRUE : FALSE;
    case 'number':
      return Object.is(value, -0) ? MINUS_ZERO : scalarNumber(values, value);
    case 'string':
    case 'bigint':
      return scalarNumber(values, value);
    case 'object':
      if (value === null) return NULL;
      return Array.isArray(value) ? listNumber(values, value) : mapNumber(values, value);
    default:
      return undefined;
  }
}

/** A Map tells 1, '1' and 1n apart (and NaN from nothing else). */
function scalarNumber(values: KeyValues, value: string | number | bigint): number {
  let number = values.scalars.get(value);
  if (number === undefined) {
    number = values.next++;
    values.held += 1;
    values.scalars.set(value, number);
  }
  return number;
}

function listNumber(values: KeyValues, items: readonly unknown[]): number | undefined {
  let step = values.lists;
  for (const item of items) {
    const number = numberOf(values, item);
    if (number === undefined) return undefined;
    step = stepOn(values, step, number);
  }
  return (step.number ??= values.next++);
}

function mapNumber(values: KeyValues, value: object): number | undefined {
  if (!isPlainMap(value)) return undefined;
  let step = values.maps;
  for (const [name, item] of Object.entries(value)) {
    // As the CEL conversion (engine/policy/cel-values.ts), a key whose value is undefined is absent.
    if (item === undefined) continue;
    const number = numberOf(values, item);
    if (number === undefined) return undefined;
    step = stepOn(values, stepOn(values, step, scalarNumber(values, name)), number);
  }
  return (step.number ??= values.next++);
}

function stepOn(values: KeyValues, step: KeyStep, number: number): KeyStep {
  step.next ??= new Map();
  let next = step.next.get(number);
  if (next === undefined) {
    next = {};
    values.held += 1;
    step.next.set(number, next);
  }
  return next;
}

/** One contract's field values as key numbers, each made once however many rules read the field. */
export interface FieldKeys {
  readonly fields: Readonly<Record<string, unknown>>;
  readonly values: KeyValues;
  /** A field's number, or undefined when its value is never held. */
  readonly made: Map<string, number | undefined>;
  /** The number of what a use reads of its field (uses are shared: engine/policy/uses.ts sharedUse). */
  readonly madeParts: Map<Use, number | undefined>;
  /** The longest list in a field's value (the cost bound's n, engine/policy/cost.ts). */
  longestOf(field: string): number;
}

/**
 * The key of `memo` for a contract: its one field's number, or its fields' numbers as one text
 * (a field read in parts: the number of those parts, and where the memo's expressions iterate, its
 * longest list, which bounds what they may cost and is not in the parts); undefined when one of
 * its fields has a value that is never held.
 */
export function memoKey(memo: EvaluationMemo<unknown>, contract: FieldKeys): MemoKey | undefined {
  if (memo.resting > 0) {
    memo.resting -= 1;
    return undefined;
  }
  memo.asked += 1;
  if (memo.fields.length === 1 && memo.parts[0] === undefined) return fieldNumber(contract, memo.fields[0]!);
  let key = '';
  for (let index = 0; index < memo.fields.length; index += 1) {
    const field = memo.fields[index]!;
    const parts = memo.parts[index];
    const number = parts === undefined ? fieldNumber(contract, field) : partsOfField(contract, field, parts);
    if (number === undefined) return undefined;
    key += parts !== undefined && memo.measured ? `|${number}:${contract.longestOf(field)}` : `|${number}`;
  }
  return key;
}

/** A field's number, made once per contract. */
function fieldNumber(contract: FieldKeys, field: string): number | undefined {
  let number = contract.made.get(field);
  if (number === undefined && !contract.made.has(field)) {
    number = valueNumber(contract.values, contract.fields[field]);
    contract.made.set(field, number);
  }
  return number;
}

/** The number of what `parts` reads of a field, made once per contract (uses are shared by the rules). */
function partsOfField(contract: FieldKeys, field: string, parts: Use): number | undefined {
  let number = contract.madeParts.get(parts);
  if (number === undefined && !contract.madeParts.has(parts)) {
    number = partsNumber(contract.values, contract.fields[field], parts);
    contract.madeParts.set(parts, number);
  }
  return number;
}

/**
 * Evaluations run without the memo after a round (MEMO_ENTRIES results held) in which fewer than a
 * quarter of the keys asked for were found: on values that do not repeat (a date of its own on
 * every contract), making keys and holding results costs more than it saves, the results held
 * mostly outliving the young generation's collections to die in the old one.
 */
export const MEMO_REST = 16 * MEMO_ENTRIES;

/** Holds `result` under `key`, starting over when the memo is full (and resting when it did not pay). */
export function remember<T>(memo: EvaluationMemo<T>, key: MemoKey, result: T): T {
  if (memo.results.size >= MEMO_ENTRIES) {
    // Each result held was a key not found: the others asked for were found.
    if (memo.asked - memo.results.size < memo.asked / 4) memo.resting = MEMO_REST;
    memo.results.clear();
    memo.asked = 0;
  }
  memo.results.set(key, result);
  return result;
}
