/**
 * What a read's answer holds, before the read schema sees it (docs/architecture.md section 1): the
 * service does not publish its read shape, so where the contract sits in the body (`api.read.pointer`)
 * and how a timestamp without an offset is read (`api.read.timestamps`) are configured, and a body
 * that does not fit them fails the contract with a message naming the setting, never read as empty.
 */
import type { NaiveTimestamps } from '../config/types.ts';
import { FIELDS } from '../model/fields.ts';
import { isJsonObject } from '../model/normalise.ts';

/** An answer that does not hold a contract where the config says; the message names the setting. */
export class ReadShapeError extends Error {
  readonly code = 'read-shape';
}

/** The reference tokens of an RFC 6901 pointer: `/a~1b/c~0d` → `['a/b', 'c~d']`; '' → []. */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new TypeError(`api.read.pointer: expected "" or a JSON Pointer starting with "/", got ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const MAX_KEYS_SHOWN = 8;

function keysOf(value: unknown): string {
  if (!isJsonObject(value)) return Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`;
  const keys = Object.keys(value);
  if (keys.length === 0) return 'no keys';
  const shown = keys.slice(0, MAX_KEYS_SHOWN).join(', ');
  return `keys: ${shown}${keys.length > MAX_KEYS_SHOWN ? `, … ${keys.length - MAX_KEYS_SHOWN} more` : ''}`;
}

const CONTRACT_FIELDS: readonly string[] = FIELDS.map((field) => field.name);

/**
 * The contract object at `pointer` in `body`. Throws ReadShapeError when the pointer leads nowhere,
 * to something other than an object, or to an object with keys of which none is a contract field
 * (a wrapper such as `{"Contract": {...}, "Links": [...]}` read with the default pointer). An empty
 * object is a contract with no field set.
 */
export function contractAt(body: unknown, pointer: string): Record<string, unknown> {
  let value: unknown = body;
  for (const token of pointerTokens(pointer)) {
    const next: unknown =
      isJsonObject(value) && Object.hasOwn(value, token)
        ? value[token]
        : Array.isArray(value) && /^(0|[1-9]\d*)$/.test(token)
          ? value[Number(token)]
          : undefined;
    if (next === undefined) throw new ReadShapeError(`nothing at ${JSON.stringify(pointer)} (${keysOf(body)}): set api.read.pointer`);
    value = next;
  }
  if (!isJsonObject(value) || (Object.keys(value).length > 0 && !CONTRACT_FIELDS.some((field) => Object.hasOwn(value, field)))) {
    throw new ReadShapeError(`no contract field at ${JSON.stringify(pointer)} (${keysOf(value)}): set api.read.pointer`);
  }
  return value;
}

// A date-time with seconds and no offset, as .NET and others write a DateTime of kind Unspecified.
const NAIVE_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?$/;

const TIMESTAMP_FIELDS: readonly string[] = FIELDS.filter((field) => field.kind === 'timestamp').map((field) => field.name);

/**
 * `contract` with its timestamps without an offset read as `mode` says: `utc` appends `Z` (the same
 * instant then compares equal, so no Replace is planned for it), `error` throws ReadShapeError
 * naming the field and the value. Other values are left to the read schema.
 */
export function withReadTimestamps(contract: Record<string, unknown>, mode: NaiveTimestamps): Record<string, unknown> {
  let read = contract;
  for (const field of TIMESTAMP_FIELDS) {
    const value = contract[field];
    if (typeof value !== 'string' || !NAIVE_TIMESTAMP.test(value)) continue;
    if (mode === 'error') {
      throw new ReadShapeError(`${field} ${JSON.stringify(value)} has no UTC offset: set api.read.timestamps to utc to read such timestamps as UTC`);
    }
    read = { ...read, [field]: `${value}Z` };
  }
  return read;
}
