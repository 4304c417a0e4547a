/**
 * diffContract: the smallest list of service ops that makes a contract's managed fields equal to
 * its desired state (docs/architecture.md section 3). Pure and synchronous.
 */
import type { CollectionMode } from '../config/types.ts';
import { COLLECTION_FIELDS, FIELDS, opPath, type CollectionFieldName, type CollectionFieldSpec, type FieldName, type FieldSpec } from '../model/fields.ts';
import {
  cloneJson,
  durationsEqual,
  equalWhereWritten,
  isJsonObject,
  memberIdentity,
  normaliseDuration,
  normaliseNumber,
  normaliseTimestamp,
  sameIdentity,
} from '../model/normalise.ts';
import { completedCopy } from '../model/members.ts';
import type { ContractFields, Duration, Op } from '../model/types.ts';

export interface DiffOptions {
  /** Per collection field; a field left out is `authoritative` (docs/architecture.md section 3.3). */
  readonly collections?: Partial<Readonly<Record<CollectionFieldName, CollectionMode>>>;
}

const MODES: readonly CollectionMode[] = ['authoritative', 'additive'];

/** Checks `options` once; a bad option is a programming error, so it throws a TypeError naming it. */
export function checkDiffOptions(options: DiffOptions): void {
  for (const [name, mode] of Object.entries(options.collections ?? {})) {
    if (!COLLECTION_FIELDS.some((field) => field.name === name)) {
      throw new TypeError(`options.collections: "${name}" is not a collection field (expected one of ${COLLECTION_FIELDS.map((f) => f.name).join(', ')})`);
    }
    if (!(MODES as readonly unknown[]).includes(mode)) {
      throw new TypeError(`options.collections.${name}: expected "authoritative" or "additive", got ${JSON.stringify(mode)}`);
    }
  }
}

type Fields = Readonly<Record<string, unknown>>;

function isPresent(fields: Fields, name: string): boolean {
  return Object.hasOwn(fields, name) && fields[name] !== undefined;
}

/** Equal in the field's normal form. `known` comes from a store or a read, so it is not trusted to be well-formed. */
function scalarsEqual(field: FieldSpec, known: unknown, desired: unknown): boolean {
  switch (field.kind) {
    case 'number':
    case 'integer':
      return typeof known === 'number' && typeof desired === 'number' && normaliseNumber(known) === normaliseNumber(desired);
    case 'timestamp': {
      if (typeof known !== 'string' || typeof desired !== 'string') return false;
      // Same text, same instant: skips parsing, the diff's hottest step.
      if (known === desired) return true;
      const a = normaliseTimestamp(known);
      return a !== undefined && a === normaliseTimestamp(desired);
    }
    case 'duration':
      return isJsonObject(known) && isJsonObject(desired) && durationsEqual(known as Duration, desired as Duration);
    case 'string':
      return known === desired;
    case 'collection':
      return false;
  }
}

/**
 * Known and desired hold the same members in the same order, each known one equal where the desired
 * one writes, their identities distinct: the general way would match each pair and send nothing (in
 * either mode). The common case of a plan with known state, told without maps.
 */
function sameMembers(field: CollectionFieldSpec, known: readonly unknown[], desired: readonly unknown[]): boolean {
  if (known.length !== desired.length) return false;
  for (let index = 0; index < desired.length; index++) {
    if (!sameIdentity(field, known[index], desired[index]) || !equalWhereWritten(known[index], desired[index], desired[index])) return false;
  }
  return distinctIdentities(field, desired);
}

// Up to this many members, distinct identities are told pair by pair, without their texts.
const PAIRWISE_MEMBERS = 8;

/** No two of `members` have the same identity. */
function distinctIdentities(field: CollectionFieldSpec, members: readonly unknown[]): boolean {
  if (members.length <= PAIRWISE_MEMBERS) {
    for (let index = 1; index < members.length; index++)
      for (let before = 0; before < index; before++) if (sameIdentity(field, members[before], members[index])) return false;
    return true;
  }
  const identities = new Set<string>();
  for (const member of members) {
    const identity = memberIdentity(field, member);
    if (identities.has(identity)) return false;
    identities.add(identity);
  }
  return true;
}

/** Appends to `ops` what makes the known members of `field` the desired ones. */
function diffCollection(field: CollectionFieldSpec, known: unknown, desired: readonly unknown[], mode: CollectionMode, ops: Op[]): void {
  const path = opPath(field.name as CollectionFieldName);
  const knownMembers: readonly unknown[] = Array.isArray(known) ? known : [];
  if (sameMembers(field, knownMembers, desired)) return;
  // Identities are unique in a valid contract; with duplicates in known state the first one wins,
  // which is also the member the op interpreter removes.
  const knownById = new Map<string, unknown>();
  for (const member of knownMembers) {
    const identity = memberIdentity(field, member);
    if (!knownById.has(identity)) knownById.set(identity, member);
  }
  const removes = new Set<unknown>();
  const adds: Op[] = [];
  const matched = new Set<string>();
  for (const member of desired) {
    const identity = memberIdentity(field, member);
    matched.add(identity);
    const match = knownById.get(identity);
    if (match === undefined) {
      adds.push({ op: 'Add', path, value: completedCopy(field, member) });
    } else if (!equalWhereWritten(match, member, member)) {
      // The API has no member Replace: a changed member is removed as known, then added as desired.
      removes.add(match);
      adds.push({ op: 'Add', path, value: completedCopy(field, member, match) });
    }
  }
  if (mode === 'authoritative') {
    for (const [identity, member] of knownById) {
      if (!matched.has(identity)) removes.add(member);
    }
  }
  // Removes in known order, before every Add (section 3.5).
  for (const member of knownMembers) {
    if (removes.delete(member)) ops.push({ op: 'Remove', path, value: cloneJson(member) });
  }
  for (const add of adds) ops.push(add);
}

/** The value a Replace sends: desired as written, except a duration is sent whole, absent units as null. */
function replaceValue(field: FieldSpec, desired: unknown): unknown {
  if (field.kind === 'duration') return normaliseDuration(desired as Duration);
  if (typeof desired === 'number') return normaliseNumber(desired);
  return desired;
}

/**
 * The ops that make `known` equal to `desired` on every field `desired` writes, in PATCH order:
 * fields in table order, Removes before Adds inside a collection. `known` undefined means nothing
 * is known (section 3.4): every desired scalar is replaced, every desired member added, nothing removed.
 */
export function diffContract(known: ContractFields | undefined, desired: ContractFields, options: DiffOptions = {}): Op[] {
  checkDiffOptions(options);
  return diffCheckedContract(known, desired, options);
}

/** diffContract with `options` already checked (createPlan checks them once, not per contract). */
export function diffCheckedContract(known: ContractFields | undefined, desired: ContractFields, options: DiffOptions): Op[] {
  if (known === undefined) return diffUnknown(desired);
  const knownFields: Fields = known;
  const desiredFields: Fields = desired;
  const ops: Op[] = [];
  for (const field of FIELDS as readonly FieldSpec[]) {
    // Section 3.1: a field absent from the desired state is unmanaged.
    if (!isPresent(desiredFields, field.name)) continue;
    const want = desiredFields[field.name];
    const have = knownFields[field.name];
    if (field.kind === 'collection') {
      const mode = options.collections?.[field.name as CollectionFieldName] ?? 'authoritative';
      diffCollection(field, have, want as readonly unknown[], mode, ops);
      continue;
    }
    if (isPresent(knownFields, field.name) && scalarsEqual(field, have, want)) continue;
    ops.push({ op: 'Replace', path: opPath(field.name as FieldName), value: replaceValue(field, want) });
  }
  return ops;
}

/**
 * Nothing known (the most common plan of all, a first one): what the general case gives with an
 * empty known state, without its bookkeeping: every scalar replaced, every member added as
 * desired and completed, in table order (no member is matched, none removed, in either mode).
 */
function diffUnknown(desired: Fields): Op[] {
  const ops: Op[] = [];
  forEachUnknownOp(desired, 'copied', (field, value) => {
    ops.push(
      field.kind === 'collection'
        ? { op: 'Add', path: opPath(field.name as CollectionFieldName), value }
        : { op: 'Replace', path: opPath(field.name as FieldName), value },
    );
  });
  return ops;
}

/**
 * The ops of diffContract(undefined, desired), in order, as (field, value) without the ops: a
 * Replace of each desired scalar, an Add of each desired member. `members`: as the ops carry them
 * (`copied`: completed copies), or as desired (not completed; shared with `desired`, to be read only).
 */
export function forEachUnknownOp(desired: ContractFields | Fields, members: 'copied' | 'as-desired', each: (field: FieldSpec, value: unknown) => void): void {
  const fields: Fields = desired;
  for (const field of FIELDS as readonly FieldSpec[]) {
    if (!isPresent(fields, field.name)) continue;
    const want = fields[field.name];
    if (field.kind === 'collection') {
      for (const member of want as readonly unknown[]) each(field, members === 'copied' ? completedCopy(field, member) : member);
      continue;
    }
    each(field, replaceValue(field, want));
  }
}

/** How many ops diffContract(undefined, desired) gives, without making them. */
export function unknownOpCount(desired: ContractFields | Fields): number {
  const fields: Fields = desired;
  let count = 0;
  for (const field of FIELDS as readonly FieldSpec[]) {
    if (!isPresent(fields, field.name)) continue;
    count += field.kind === 'collection' ? (fields[field.name] as readonly unknown[]).length : 1;
  }
  return count;
}
