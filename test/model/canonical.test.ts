import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../engine/model/fingerprint.ts';
import { COLLECTION_FIELDS } from '../../engine/model/fields.ts';
import { describeIdentity, findDuplicateMembers, memberIdentity, normaliseNumber, sameIdentity, type DuplicateMember } from '../../engine/model/normalise.ts';
import { members } from '../plan/arbitraries.ts';

// The plain statements of both, as they were written before they were built without intermediate lists: the oracles.
function canonicalOracle(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalOracle(item))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalOracle((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

function valueAt(member: unknown, path: readonly string[]): unknown {
  let value = member;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function identityOracle(field: (typeof COLLECTION_FIELDS)[number], member: unknown): string {
  return JSON.stringify(
    field.identity.map((path) => {
      const value = valueAt(member, path);
      return typeof value === 'number' ? normaliseNumber(value) : (value ?? null);
    }),
  );
}

describe('canonicalJson', () => {
  it('is what sorting every object and joining gives, for any JSON-like value (holes and undefined too)', () => {
    fc.assert(
      fc.property(fc.anything({ withSparseArray: true, withNullPrototype: true, withObjectString: true }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalOracle(value));
      }),
      { numRuns: 2000 },
    );
    const holey: unknown[] = [1];
    holey[2] = undefined;
    holey[3] = { b: 1, a: [-0] };
    expect(canonicalJson(holey)).toBe('[1,,null,{"a":[0],"b":1}]');
  });
});

describe('memberIdentity', () => {
  it.each(COLLECTION_FIELDS.map((field) => [field.name, field] as const))('%s: JSON of the list of identity values, for any member', (_, field) => {
    const member = fc.oneof(
      members(field).map((list) => list[0]),
      fc.anything(),
      fc.record({ Id: fc.oneof(fc.double(), fc.constant(-0), fc.anything()), OwnerType: fc.anything(), User: fc.anything(), Lookup: fc.anything() }),
    );
    fc.assert(
      fc.property(member, (given) => {
        expect(memberIdentity(field, given)).toBe(identityOracle(field, given));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('sameIdentity', () => {
  it.each(COLLECTION_FIELDS.map((field) => [field.name, field] as const))(
    "%s: is equality of the two members' memberIdentity, for any two members",
    (_, field) => {
      // Identity values from a small pool, so that two members often agree, or differ only in what JSON writes alike.
      const value = fc.oneof(
        fc.constantFrom<unknown>(0, -0, 1, 1.5, 12, NaN, Infinity, -Infinity, null, undefined, '', '1', '12', 'Supplier', 'a"b', '\ud800', true, false),
        fc.constantFrom<unknown>({}, [], [1], { a: 1 }, [null]),
        fc.anything(),
      );
      const loose = fc.record({
        Id: value,
        RelationType: value,
        OwnerType: fc.oneof(fc.record({ Value: value }), value),
        User: fc.oneof(fc.record({ Id: value }), value),
        Lookup: value,
      });
      const member = fc.oneof(
        members(field).map((list) => list[0]),
        loose,
        fc.anything(),
      );
      fc.assert(
        fc.property(member, member, (a, b) => {
          expect(sameIdentity(field, a, b)).toBe(memberIdentity(field, a) === memberIdentity(field, b));
          expect(sameIdentity(field, a, a)).toBe(true);
        }),
        { numRuns: 3000 },
      );
    },
  );
});

/** findDuplicateMembers as it was written before a few members were compared pair by pair: one map of identity texts per collection. */
function duplicatesOracle(contract: Readonly<Record<string, unknown>>): DuplicateMember[] {
  const duplicates: DuplicateMember[] = [];
  for (const field of COLLECTION_FIELDS) {
    const list = contract[field.name];
    if (!Array.isArray(list) || list.length < 2) continue;
    const seen = new Map<string, number>();
    for (const [index, member] of list.entries()) {
      const identity = memberIdentity(field, member);
      const firstIndex = seen.get(identity);
      if (firstIndex === undefined) seen.set(identity, index);
      else duplicates.push({ field, index, firstIndex, member });
    }
  }
  return duplicates;
}

describe('findDuplicateMembers', () => {
  it('finds what one map of identity texts per collection finds, in the same order, for collections of any length', () => {
    // Identity values from a small pool, so that members often repeat, or differ only in what JSON writes alike.
    const value = fc.oneof(fc.constantFrom<unknown>(0, -0, 1, 12, NaN, Infinity, null, undefined, '', '1', 'Supplier', true, {}, [1]), fc.anything());
    const loose = fc.record({
      Id: value,
      RelationType: value,
      Name: value,
      OwnerType: fc.oneof(fc.record({ Value: value }), value),
      User: fc.oneof(fc.record({ Id: value }), value),
      Lookup: value,
    });
    const list = fc.oneof(fc.array(loose, { maxLength: 12 }), fc.array(fc.oneof(loose, fc.anything()), { maxLength: 4 }), fc.anything());
    const contract = fc.record(Object.fromEntries(COLLECTION_FIELDS.map((field) => [field.name, list])), { requiredKeys: [] });
    let found = 0;
    fc.assert(
      fc.property(contract, (given) => {
        const duplicates = findDuplicateMembers(given);
        found += duplicates.length;
        expect(duplicates).toStrictEqual(duplicatesOracle(given));
      }),
      { numRuns: 2000 },
    );
    // Not vacuous: duplicates are found, among few members and many.
    expect(found).toBeGreaterThan(100);
  });
});

describe('describeIdentity', () => {
  it.each(COLLECTION_FIELDS.map((field) => [field.name, field] as const))('%s: each identity path and its value, joined, for any member', (_, field) => {
    const member = fc.oneof(
      members(field).map((list) => list[0]),
      fc.anything(),
      fc.record({ Id: fc.anything(), OwnerType: fc.anything(), User: fc.anything(), Lookup: fc.anything(), RelationType: fc.anything() }),
    );
    fc.assert(
      fc.property(member, (given) => {
        // The plain statement, as it was written before it was built as it goes: the oracle.
        expect(describeIdentity(field, given)).toBe(field.identity.map((path) => `${path.join('.')} ${JSON.stringify(valueAt(given, path))}`).join(', '));
      }),
      { numRuns: 1000 },
    );
  });
});
