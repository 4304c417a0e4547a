/**
 * Normalisation: the canonical form two values are compared in (docs/architecture.md section 3.2).
 * Every function here is idempotent: normalising a normalised value returns it unchanged.
 */
import { COLLECTION_FIELDS, DURATION_UNITS, type CollectionFieldSpec, type MemberPath } from './fields.ts';
import type { Duration } from './types.ts';
import { quoteForDisplay } from '../text/text-escape.ts';

export type NormalDuration = { [Unit in (typeof DURATION_UNITS)[number]]: number | null };

/** Numbers compare numerically; -0 and 0 are one value. */
export function normaliseNumber(value: number): number {
  return value === 0 ? 0 : value;
}

// Any ISO 8601 / RFC 3339 date-time with seconds; offsets are allowed here because known state
// (a live read) may carry them. Desired-state files are stricter: see isUtcTimestamp.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

interface Instant {
  /** Whole milliseconds since the epoch. */
  readonly ms: number;
  /** Sub-millisecond digits (up to six), trailing zeros removed. */
  readonly subMs: string;
  readonly utc: boolean;
}

// Instants already parsed: a repository's timestamps repeat (a contract's dates are often the first
// of a month or a year), and each is parsed up to three times (its format, ValidFrom <= ValidTo, the
// diff). Frozen, so that a cached instant cannot be changed by a caller; emptied when full.
const INSTANTS = new Map<string, Instant | undefined>();
/** Normal forms already made, as the instants are (valid timestamps only). */
const NORMAL_TIMESTAMPS = new Map<string, string>();
const TEXTS_HELD = 4096;

/** Holds `value` for `text` in `cache` (at most TEXTS_HELD texts, emptied when full); a text longer than any timestamp is not worth holding (a value may be any text). */
function remember<T>(cache: Map<string, T>, text: string, value: T): void {
  if (text.length > 40) return;
  if (cache.size >= TEXTS_HELD) cache.clear();
  cache.set(text, value);
}

function parseInstant(text: string): Instant | undefined {
  const cached = INSTANTS.get(text);
  if (cached !== undefined || INSTANTS.has(text)) return cached;
  const instant = readInstant(text);
  remember(INSTANTS, text, instant === undefined ? undefined : Object.freeze(instant));
  return instant;
}

function readInstant(text: string): Instant | undefined {
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  // Read group by group (no intermediate arrays): every timestamp of every contract comes here.
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6]);
  const fraction = match[7];
  const zone = match[8]!;
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC rolls 2027-02-30 over to March; a real timestamp survives the round trip.
  // (Date.UTC maps years 0-99 to 1900-1999, so the year is checked through setUTCFullYear.)
  if (year < 100) date.setUTCFullYear(year);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  if (fraction === undefined) return { ms: date.getTime() - offsetMinutes * 60_000, subMs: '', utc: zone === 'Z' };
  const digits = fraction.padEnd(9, '0');
  return {
    ms: date.getTime() - offsetMinutes * 60_000 + Number(digits.slice(0, 3)),
    subMs: digits.slice(3).replace(/0+$/, ''),
    utc: zone === 'Z',
  };
}

/** True for a valid ISO 8601 date-time in UTC (`Z`), e.g. `2027-01-01T00:00:00Z`. */
export function isUtcTimestamp(text: string): boolean {
  return parseInstant(text)?.utc === true;
}

/** Why `text` is not a valid UTC timestamp, for error messages; undefined when it is one. */
export function timestampProblem(text: string): string | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return 'a date without a time';
  const instant = parseInstant(text);
  if (instant === undefined) return TIMESTAMP.test(text) ? 'not a real date or time' : 'not an ISO 8601 date-time';
  if (!instant.utc) return 'not in UTC: use Z, not an offset';
  return undefined;
}

/**
 * The canonical UTC form of a timestamp: `YYYY-MM-DDTHH:MM:SS.sss[ssssss]Z`.
 * Equal instants in any notation give equal strings. Returns undefined for an invalid timestamp.
 */
export function normaliseTimestamp(text: string): string | undefined {
  const known = NORMAL_TIMESTAMPS.get(text);
  if (known !== undefined) return known;
  const instant = parseInstant(text);
  if (instant === undefined) return undefined;
  const iso = new Date(instant.ms).toISOString();
  // Instants outside years 0000-9999 serialise with a sign; they cannot come from a valid input.
  const normal = `${iso.slice(0, -1)}${instant.subMs}Z`;
  remember(NORMAL_TIMESTAMPS, text, normal);
  return normal;
}

/** A duration with every unit present, absent units as null. */
export function normaliseDuration(duration: Duration): NormalDuration {
  const normal = {} as NormalDuration;
  for (const unit of DURATION_UNITS) normal[unit] = normalUnit(duration[unit]);
  return normal;
}

/** A duration's unit in normal form: absent or null is null. */
function normalUnit(value: number | null | undefined): number | null {
  return value === undefined || value === null ? null : normaliseNumber(value);
}

export function durationsEqual(a: Duration, b: Duration): boolean {
  // Unit by unit in normal form, without normalised copies: every known duration of a plan is compared.
  for (const unit of DURATION_UNITS) if (normalUnit(a[unit]) !== normalUnit(b[unit])) return false;
  return true;
}

function valueAt(member: unknown, path: MemberPath): unknown {
  let value = member;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * A member's identity as a string: members of one collection with equal identity are the same
 * member. Numbers are normalised, so `12` and `12.0` are one identity.
 */
export function memberIdentity(field: CollectionFieldSpec, member: unknown): string {
  // JSON.stringify of the list of identity values, built without the list (every member of every contract comes here).
  let text = '[';
  for (let index = 0; index < field.identity.length; index += 1)
    text += `${index === 0 ? '' : ','}${identityValueText(valueAt(member, field.identity[index]!))}`;
  return `${text}]`;
}

/** One identity value as memberIdentity writes it. */
function identityValueText(value: unknown): string {
  // Inside a list, what JSON cannot write (a function, a symbol) is written as null.
  return JSON.stringify(typeof value === 'number' ? normaliseNumber(value) : (value ?? null)) ?? 'null';
}

/**
 * memberIdentity(field, a) === memberIdentity(field, b), value by value, without the texts where the
 * values tell: two strings (JSON writes distinct strings distinctly), two finite numbers (distinct
 * ones too; 0 and -0 are one). The diff asks it of every known member of every planned contract.
 */
export function sameIdentity(field: CollectionFieldSpec, a: unknown, b: unknown): boolean {
  for (const path of field.identity) {
    const x = valueAt(a, path);
    const y = valueAt(b, path);
    if (typeof x === 'string' && typeof y === 'string') {
      if (x !== y) return false;
    } else if (typeof x === 'number' && typeof y === 'number' && Number.isFinite(x) && Number.isFinite(y)) {
      if (x !== y) return false;
    } else if (identityValueText(x) !== identityValueText(y)) return false;
  }
  return true;
}

/**
 * A deep copy of JSON data (what desired-state files and the state store hold): what structuredClone
 * makes of it, at a fifth of the cost (the diff copies every member it adds or removes).
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = cloneJson((value as Record<string, unknown>)[key]);
    // An own `__proto__` key stays a key (an assignment would set the prototype).
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as T;
}

/** A JSON object (not null, not an array): a member, a duration, a nested map. */
export function isJsonObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A member leaf as compared: numbers normalised, absent and null one value. */
function leafEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return normaliseNumber(a) === normaliseNumber(b);
  return (a ?? null) === (b ?? null);
}

/**
 * True when members `a` and `b` agree on every value that `written` (a desired member) writes.
 * Keys it leaves out are unmanaged and not compared (docs/architecture.md section 3.3); nested maps
 * (Owner.User) are compared key by key. The planner asks it of (known, desired, desired); drift of
 * (live, last applied, desired).
 */
export function equalWhereWritten(a: unknown, b: unknown, written: unknown): boolean {
  if (!isJsonObject(written)) return leafEqual(a, b);
  const aMap = isJsonObject(a) ? a : {};
  const bMap = isJsonObject(b) ? b : {};
  // Its keys without [key, value] pairs: every member of every known contract is compared.
  for (const key of Object.keys(written)) {
    const value = written[key];
    if (value !== undefined && !equalWhereWritten(aMap[key], bMap[key], value)) return false;
  }
  return true;
}

const IDENTITY_NAMES = new WeakMap<CollectionFieldSpec, readonly string[]>();

/** The identity of a member for people: `Id 12, RelationType Supplier`. */
export function describeIdentity(field: CollectionFieldSpec, member: unknown): string {
  // Built as it goes, the paths' names worked out once per field: every member of every planned contract is described.
  let names = IDENTITY_NAMES.get(field);
  if (names === undefined) {
    names = field.identity.map((path) => path.join('.'));
    IDENTITY_NAMES.set(field, names);
  }
  let text = '';
  for (let index = 0; index < names.length; index++)
    text += `${index === 0 ? '' : ', '}${names[index]} ${quoteForDisplay(valueAt(member, field.identity[index]!))}`;
  return text;
}

export interface DuplicateMember {
  readonly field: CollectionFieldSpec;
  /** The later member, and the first one with the same identity. */
  readonly index: number;
  readonly firstIndex: number;
  readonly member: unknown;
}

/** Up to this many members, findDuplicateMembers compares them pair by pair. */
const FEW_MEMBERS = 8;

/** Members that repeat an earlier member's identity, in every collection of a contract. */
export function findDuplicateMembers(contract: Readonly<Record<string, unknown>>): DuplicateMember[] {
  const duplicates: DuplicateMember[] = [];
  for (const field of COLLECTION_FIELDS) {
    const members = contract[field.name];
    // One member repeats none (most collections hold one).
    if (!Array.isArray(members) || members.length < 2) continue;
    // A few members (most collections hold one or two) compared pair by pair, without identity texts.
    if (members.length <= FEW_MEMBERS) {
      for (let index = 1; index < members.length; index++) {
        for (let firstIndex = 0; firstIndex < index; firstIndex++) {
          if (!sameIdentity(field, members[firstIndex], members[index])) continue;
          duplicates.push({ field, index, firstIndex, member: members[index] });
          break;
        }
      }
      continue;
    }
    const seen = new Map<string, number>();
    for (const [index, member] of members.entries()) {
      const identity = memberIdentity(field, member);
      const firstIndex = seen.get(identity);
      if (firstIndex === undefined) seen.set(identity, index);
      else duplicates.push({ field, index, firstIndex, member });
    }
  }
  return duplicates;
}
