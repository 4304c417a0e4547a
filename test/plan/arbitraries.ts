/**
 * fast-check generators of contracts, derived from the field table: every value is one the schema
 * allows. Domains are small on purpose so that known and desired often share values, members share
 * identities, and equal values appear in different notations.
 */
import fc from 'fast-check';
import type { CollectionMode } from '../../engine/config/types.ts';
import {
  COLLECTION_FIELDS,
  DURATION_UNITS,
  FIELDS,
  memberIdentity,
  type CollectionFieldName,
  type CollectionFieldSpec,
  type ContractFields,
  type FieldSpec,
  type JsonSchema,
} from '../../engine/model/index.ts';

type Fields = Record<string, unknown>;
type Notation = 'utc' | 'any';

// A few fixed instants (so that independent known and desired values collide) and random ones.
const INSTANTS = [Date.UTC(2027, 0, 1), Date.UTC(2027, 11, 31, 23, 59, 59), Date.UTC(2026, 5, 1, 12, 0, 0, 250)];
const instant = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INSTANTS) },
  { weight: 1, arbitrary: fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2099, 11, 31) }) },
);

/** One instant in one of its notations; `any` adds UTC offsets, which a live read may return. */
export function formatInstant(ms: number, notation: number): string {
  const iso = new Date(ms).toISOString(); // 2027-01-01T00:00:00.000Z
  switch (notation % 5) {
    case 0:
      return iso;
    case 1:
      return `${iso.slice(0, -1)}000Z`; // microseconds
    case 2: {
      const fraction = iso.slice(20, 23).replace(/0+$/, '');
      return `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`; // shortest
    }
    case 3: {
      const shifted = new Date(ms + 60 * 60_000).toISOString();
      return `${shifted.slice(0, -1)}+01:00`;
    }
    default: {
      const shifted = new Date(ms - (5 * 60 + 30) * 60_000).toISOString();
      return `${shifted.slice(0, -1)}-05:30`;
    }
  }
}

function timestamp(notation: Notation): fc.Arbitrary<string> {
  return fc.tuple(instant, fc.nat({ max: notation === 'utc' ? 2 : 4 })).map(([ms, n]) => formatInstant(ms, n));
}

const SAFE = Number.MAX_SAFE_INTEGER;
const number = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0, -0, 100, 100.5, 48_000) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, min: -1e12, max: 1e12 }) },
);
const integer = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(0, 1, 4, 978) }, { weight: 1, arbitrary: fc.integer({ min: -SAFE, max: SAFE }) });
const string = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('', 'Supplier', 'Client', 'Facility Management', 'ICT') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const durationUnit = fc.oneof(fc.constantFrom(null, 0, -0, 1, 30, 90), fc.double({ noNaN: true, min: -1e6, max: 1e6 }));
const duration = fc.record(Object.fromEntries(DURATION_UNITS.map((unit) => [unit, durationUnit])), { requiredKeys: [] });

// Member values: a tiny domain, so that identities and descriptive fields collide often.
const memberInteger = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) }, { weight: 1, arbitrary: integer });
const memberString = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('Supplier', 'Client', 'ICT') }, { weight: 1, arbitrary: string });

/** Any value the (member) schema allows; optional keys are sometimes left out. */
export function fromSchema(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type;
  if (types.length > 1) return fc.oneof(...types.map((type) => fromSchema({ ...schema, type })));
  switch (types[0]) {
    case 'object': {
      const model = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, sub]) => [key, fromSchema(sub)]));
      return fc.record(model, { requiredKeys: [...(schema.required ?? [])] as never[] });
    }
    case 'integer':
      return memberInteger;
    case 'string':
      return memberString;
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      throw new Error(`no generator for schema type ${String(types[0])}`);
  }
}

/** A list of members with unique identities, as in a valid desired file or a consistent state. */
export function members(field: CollectionFieldSpec): fc.Arbitrary<unknown[]> {
  return fc.uniqueArray(fromSchema(field.member), { maxLength: 5, selector: (member) => memberIdentity(field, member) });
}

export function fieldValue(field: FieldSpec, notation: Notation): fc.Arbitrary<unknown> {
  switch (field.kind) {
    case 'number':
      return number;
    case 'integer':
      return integer;
    case 'string':
      return string;
    case 'timestamp':
      return timestamp(notation);
    case 'duration':
      return duration;
    case 'collection':
      return members(field);
  }
}

/** A contract with any subset of the 19 fields; `Company: []` and other empty lists included. */
export function contract(notation: Notation): fc.Arbitrary<ContractFields> {
  const model = Object.fromEntries((FIELDS as readonly FieldSpec[]).map((field) => [field.name, fieldValue(field, notation)]));
  return fc.record(model, { requiredKeys: [] }) as fc.Arbitrary<ContractFields>;
}

/** The same value in another notation: instants re-written, duration units absent <-> null. */
function renotate(field: FieldSpec, value: unknown, notation: number): unknown {
  if (field.kind === 'timestamp') return formatInstant(Date.parse(value as string), notation % 3);
  if (field.kind === 'duration') {
    const copy: Fields = { ...(value as Fields) };
    for (const unit of DURATION_UNITS) {
      if (copy[unit] === null && notation % 2 === 0) delete copy[unit];
      else if (copy[unit] === undefined && notation % 2 === 1) copy[unit] = null;
    }
    return copy;
  }
  return value;
}

/** A desired member derived from a known one: optional keys left out, or a descriptive field changed. */
function deriveMember(field: CollectionFieldSpec, known: unknown): fc.Arbitrary<unknown> {
  const leaveOut = fc.constant(structuredClone(known)).map((member) => dropOptional(field.member, member));
  const changed = fromSchema(field.member).map((fresh) => overlayIdentity(field, fresh, known));
  return fc.oneof(fc.constant(structuredClone(known)), leaveOut, changed);
}

/** `value` with every key the schema does not require removed, recursively. */
function dropOptional(schema: JsonSchema, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || !schema.properties) return value;
  const kept: Fields = {};
  for (const key of schema.required ?? []) {
    if (Object.hasOwn(value, key)) kept[key] = dropOptional(schema.properties[key] ?? {}, (value as Fields)[key]);
  }
  return kept;
}

/** `fresh` with the identity values of `known`: the same member, its other fields possibly different. */
function overlayIdentity(field: CollectionFieldSpec, fresh: unknown, known: unknown): unknown {
  const member = structuredClone(fresh) as Fields;
  for (const path of field.identity) {
    let from = known as Fields;
    let to = member;
    for (const key of path.slice(0, -1)) {
      from = from[key] as Fields;
      to = to[key] as Fields;
    }
    to[path.at(-1)!] = from[path.at(-1)!];
  }
  return member;
}

function deriveCollection(field: CollectionFieldSpec, known: unknown[]): fc.Arbitrary<unknown[]> {
  return fc
    .tuple(fc.subarray(known), members(field))
    .chain(([kept, extra]) => fc.tuple(fc.tuple(...kept.map((member) => deriveMember(field, member))), fc.constant(extra)))
    .map(([derived, extra]) => {
      const seen = new Set<string>();
      return [...derived, ...extra].filter((member) => {
        const identity = memberIdentity(field, member);
        if (seen.has(identity)) return false;
        seen.add(identity);
        return true;
      });
    });
}

/** Desired state derived from a known one: each field left out, kept (re-notated), or new. */
function deriveDesired(known: ContractFields): fc.Arbitrary<ContractFields> {
  const source = known as Fields;
  const parts = (FIELDS as readonly FieldSpec[]).map((field) => {
    const choices: fc.Arbitrary<unknown>[] = [fc.constant(undefined), fieldValue(field, 'utc')];
    if (Object.hasOwn(source, field.name)) {
      const value = source[field.name];
      if (field.kind === 'collection') choices.push(deriveCollection(field, value as unknown[]));
      else if (field.kind === 'timestamp') choices.push(fc.nat({ max: 2 }).map((n) => renotate(field, value, n)));
      else choices.push(fc.nat({ max: 1 }).map((n) => renotate(field, value, n)));
    }
    return fc.oneof(...choices).map((value) => [field.name, value] as const);
  });
  return fc.tuple(...parts).map((entries) => Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as ContractFields);
}

export interface DiffCase {
  readonly known: ContractFields | undefined;
  readonly desired: ContractFields;
  readonly collections: Record<CollectionFieldName, CollectionMode>;
}

const modes = fc.record(
  Object.fromEntries(COLLECTION_FIELDS.map((field) => [field.name, fc.constantFrom<CollectionMode>('authoritative', 'additive')])),
) as fc.Arbitrary<Record<CollectionFieldName, CollectionMode>>;

/** (known, desired, modes): independent, derived from each other, or with nothing known. */
export const diffCase: fc.Arbitrary<DiffCase> = fc
  .oneof(
    { weight: 2, arbitrary: fc.tuple(contract('any'), contract('utc')) },
    { weight: 3, arbitrary: contract('any').chain((known) => fc.tuple(fc.constant(known), deriveDesired(known))) },
    { weight: 1, arbitrary: fc.tuple(fc.constant(undefined), contract('utc')) },
  )
  .chain(([known, desired]) => modes.map((collections) => ({ known, desired, collections })));
