import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeChanges, diffContract } from '../../engine/index.ts';
import {
  applyOps,
  DURATION_UNITS,
  FIELDS,
  memberIdentity,
  validateOps,
  type CollectionFieldName,
  type CollectionFieldSpec,
  type ContractFields,
  type FieldSpec,
} from '../../engine/model/index.ts';
import { contract, diffCase, type DiffCase } from './arbitraries.ts';

const RUNS = { numRuns: 1_000 };

type Fields = Record<string, unknown>;

// The oracle below restates section 3 in the plainest terms, independently of engine/plan.

function normalNumber(value: unknown): unknown {
  return value === 0 ? 0 : value;
}

/** A scalar in its normal form, as a comparable string. */
function normalScalar(field: FieldSpec, value: unknown): string {
  if (value === undefined) return 'absent';
  if (field.kind === 'timestamp') return String(Date.parse(value as string));
  if (field.kind === 'duration') return JSON.stringify(DURATION_UNITS.map((unit) => normalNumber((value as Fields)[unit] ?? null)));
  return JSON.stringify(normalNumber(value));
}

/** Every leaf a member writes, as [path, value]; nested maps are walked. */
function leaves(value: unknown, prefix: string[] = []): [string[], unknown][] {
  if (value === null || typeof value !== 'object') return [[prefix, value]];
  return Object.entries(value).flatMap(([key, sub]) => (sub === undefined ? [] : leaves(sub, [...prefix, key])));
}

function at(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = current !== null && typeof current === 'object' ? (current as Fields)[key] : undefined;
  return current;
}

/** True when `known` has every value `desired` writes (absent = null, numbers compared numerically). */
function hasWritten(known: unknown, desired: unknown): boolean {
  return leaves(desired).every(([path, value]) => normalNumber(at(known, path) ?? null) === normalNumber(value ?? null));
}

function byIdentity(field: CollectionFieldSpec, list: unknown): Map<string, unknown> {
  return new Map(((list as unknown[] | undefined) ?? []).map((member) => [memberIdentity(field, member), member]));
}

function minimalCount({ known, desired, collections }: DiffCase): number {
  const have = (known ?? {}) as Fields;
  const want = desired as Fields;
  let count = 0;
  for (const field of FIELDS as readonly FieldSpec[]) {
    if (!Object.hasOwn(want, field.name)) continue;
    if (field.kind !== 'collection') {
      if (normalScalar(field, have[field.name]) !== normalScalar(field, want[field.name])) count += 1;
      continue;
    }
    const knownMembers = byIdentity(field, have[field.name]);
    const desiredMembers = byIdentity(field, want[field.name]);
    for (const [identity, member] of desiredMembers) {
      if (!knownMembers.has(identity)) count += 1;
      else if (!hasWritten(knownMembers.get(identity), member)) count += 2;
    }
    if (collections[field.name as CollectionFieldName] === 'authoritative') {
      for (const identity of knownMembers.keys()) if (!desiredMembers.has(identity)) count += 1;
    }
  }
  return count;
}

/** The contract after `ops`; no ops is no request (applyOps refuses an empty PATCH body, as the service does). */
function applied(known: ContractFields | undefined, ops: ReturnType<typeof diffContract>): Fields {
  return (ops.length === 0 ? structuredClone(known ?? {}) : applyOps(known, ops)) as Fields;
}

describe('diffContract properties (1,000 generated cases each)', () => {
  it('(a) applying the ops gives the desired state on every managed field', () => {
    fc.assert(
      fc.property(diffCase, (input) => {
        const after = applied(input.known, diffContract(input.known, input.desired, input));

        const want = input.desired as Fields;
        const known = (input.known ?? {}) as Fields;
        for (const field of FIELDS as readonly FieldSpec[]) {
          if (!Object.hasOwn(want, field.name)) continue;
          if (field.kind !== 'collection') {
            expect(normalScalar(field, after[field.name]), field.name).toBe(normalScalar(field, want[field.name]));
            continue;
          }
          const result = byIdentity(field, after[field.name]);
          const desired = byIdentity(field, want[field.name]);
          for (const [identity, member] of desired) expect(hasWritten(result.get(identity), member), `${field.name} ${identity}`).toBe(true);
          const expected = new Set(desired.keys());
          if (input.collections[field.name as CollectionFieldName] === 'additive') {
            for (const identity of byIdentity(field, known[field.name]).keys()) expected.add(identity);
          }
          expect([...result.keys()].sort(), field.name).toEqual([...expected].sort());
          expect(((after[field.name] as unknown[] | undefined) ?? []).length, `${field.name}: one member per identity`).toBe(expected.size);
        }
      }),
      RUNS,
    );
  });

  it('(b) the op count is the minimal count of section 3.6', () => {
    fc.assert(
      fc.property(diffCase, (input) => {
        const ops = diffContract(input.known, input.desired, input);

        expect(ops.length).toBe(minimalCount(input));
      }),
      RUNS,
    );
  });

  it('(c) a contract diffed against itself needs no op', () => {
    fc.assert(
      fc.property(contract('utc'), (fields) => {
        expect(diffContract(fields, fields)).toEqual([]);
        expect(diffContract(fields, structuredClone(fields), { collections: { Company: 'additive' } })).toEqual([]);
      }),
      RUNS,
    );
  });

  it('(d) unmanaged fields are never touched', () => {
    fc.assert(
      fc.property(diffCase, (input) => {
        const ops = diffContract(input.known, input.desired, input);
        const after = applied(input.known, ops);

        const known = (input.known ?? {}) as Fields;
        for (const field of FIELDS as readonly FieldSpec[]) {
          if (Object.hasOwn(input.desired, field.name)) continue;
          expect(ops.filter((op) => op.path === `/Contract/${field.name}`)).toEqual([]);
          expect(Object.hasOwn(after, field.name)).toBe(Object.hasOwn(known, field.name));
          expect(after[field.name]).toEqual(known[field.name]);
        }
      }),
      RUNS,
    );
  });

  it('(e) every op list validates against specs/patch.schema.json, in table order with Removes first', () => {
    const order = (FIELDS as readonly FieldSpec[]).map((field) => `/Contract/${field.name}`);
    fc.assert(
      fc.property(diffCase, (input) => {
        const ops = diffContract(input.known, input.desired, input);

        if (ops.length > 0) expect(validateOps(ops)).toEqual([]);
        const ranks = ops.map((op) => order.indexOf(op.path) * 2 + (op.op === 'Add' ? 1 : 0));
        expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      }),
      RUNS,
    );
  });

  it('with nothing known: a Replace per desired scalar, an Add per desired member, no Remove', () => {
    fc.assert(
      fc.property(contract('utc'), (desired: ContractFields) => {
        const ops = diffContract(undefined, desired);

        const want = desired as Fields;
        const expected = (FIELDS as readonly FieldSpec[]).reduce(
          (sum, field) => sum + (!Object.hasOwn(want, field.name) ? 0 : field.kind === 'collection' ? (want[field.name] as unknown[]).length : 1),
          0,
        );
        expect(ops.length).toBe(expected);
        expect(ops.some((op) => op.op === 'Remove')).toBe(false);
      }),
      RUNS,
    );
  });

  it('with nothing known, the short way gives what the general diff gives against an empty known contract (ops and changes)', () => {
    fc.assert(
      fc.property(contract('utc'), fc.constantFrom<'authoritative' | 'additive'>('authoritative', 'additive'), (desired: ContractFields, mode) => {
        const options = { collections: { Company: mode, Type: mode } };
        const ops = diffContract(undefined, desired, options);
        // A known contract without fields takes the general path (known !== undefined).
        const general = diffContract({}, desired, options);
        expect(JSON.stringify(ops)).toBe(JSON.stringify(general));
        expect(ops).toEqual(general);
        expect(JSON.stringify(describeChanges(undefined, ops))).toBe(JSON.stringify(describeChanges({}, general)));
      }),
      RUNS,
    );
  });

  it('collections with the same members in the same order (the short way) need no op, as in any other order (the general way)', () => {
    fc.assert(
      fc.property(contract('utc'), fc.constantFrom<'authoritative' | 'additive'>('authoritative', 'additive'), (desired: ContractFields, mode) => {
        const options = { collections: { Company: mode, OrganizationalUnit: mode, Owner: mode, Type: mode } };
        const same = structuredClone(desired) as Fields;
        const reversed = Object.fromEntries(Object.entries(same).map(([name, value]) => [name, Array.isArray(value) ? [...value].reverse() : value]));

        expect(diffContract(same as ContractFields, desired, options)).toEqual([]);
        expect(diffContract(reversed as ContractFields, desired, options)).toEqual([]);
      }),
      RUNS,
    );
  });
});
