/** A targeted plan is the full plan restricted to the targets: createPlan of the selection against createPlan of everything. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectTargets, type TargetPattern } from '../../engine/desired/target.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import type { KnownContract } from '../../engine/state/types.ts';
import { contract } from '../plan/arbitraries.ts';

const CREATED_AT = '2027-01-01T00:00:00.000Z';
const SOURCE = { repo: '.', ref: null, commit: null };
const TENANTS = ['acme', 'beta', 'gamma'] as const;

interface Declared {
  readonly tenant: string;
  readonly file: number;
  readonly id: string;
  readonly fields: ContractFields;
  readonly known?: ContractFields;
}

/** Short ids over a small alphabet, so that prefixes (and globs on them) are shared often. */
const id = fc.stringMatching(/^[4-7]{1,4}$/);

const declared: fc.Arbitrary<Declared[]> = fc.uniqueArray(
  fc.record({ tenant: fc.constantFrom(...TENANTS), file: fc.nat(2), id, fields: contract('utc'), known: fc.option(contract('utc'), { nil: undefined }) }),
  { maxLength: 14, selector: (entry) => `${entry.tenant}/${entry.id}` },
);

function contractSets(entries: readonly Declared[]): ContractSet[] {
  const sets = new Map<string, { tenant: string; file: string; contracts: { id: string; line: number; column: number; fields: ContractFields }[] }>();
  entries.forEach((entry, index) => {
    const file = `contracts/${entry.tenant}-${entry.file}.yaml`;
    const set = sets.get(file) ?? { tenant: entry.tenant, file, contracts: [] };
    sets.set(file, set);
    set.contracts.push({ id: entry.id, line: index + 2, column: 3, fields: entry.fields });
  });
  return [...sets.values()];
}

function knownState(entries: readonly Declared[]): Map<string, Map<string, KnownContract>> {
  const known = new Map<string, Map<string, KnownContract>>();
  for (const entry of entries) {
    if (entry.known === undefined) continue;
    const tenant = known.get(entry.tenant) ?? new Map<string, KnownContract>();
    known.set(entry.tenant, tenant);
    tenant.set(entry.id, { fields: entry.known, from: 'state' });
  }
  return known;
}

/** An exclude: an exact id, or a prefix glob (`47*`); it may match nothing. */
const exclude = fc.record({ tenant: fc.constantFrom(...TENANTS), id, glob: fc.boolean() }).map(({ tenant, id: text, glob }) => {
  const pattern = glob ? `${text.slice(0, 1)}*` : text;
  return { tenant, id: pattern, raw: `${tenant}/${pattern}` } satisfies TargetPattern;
});

/** The oracle, independent of picomatch: a prefix glob is startsWith. */
function excluded(excludes: readonly TargetPattern[], tenant: string, contractId: string): boolean {
  return excludes.some(
    (pattern) => pattern.tenant === tenant && (pattern.id.endsWith('*') ? contractId.startsWith(pattern.id.slice(0, -1)) : contractId === pattern.id),
  );
}

function restrict(plan: PlanDocument, keep: (tenant: string, id: string) => boolean): Pick<PlanDocument, 'tenants' | 'summary'> {
  const tenants = plan.tenants
    .map((tenant) => ({ ...tenant, contracts: tenant.contracts.filter((entry) => keep(tenant.tenant, entry.id)) }))
    .filter((tenant) => tenant.contracts.length > 0);
  const contracts = tenants.flatMap((tenant) => tenant.contracts);
  const summary = {
    tenants: tenants.length,
    contracts: contracts.length,
    changed: contracts.filter((entry) => entry.action === 'update').length,
    ops: contracts.reduce((sum, entry) => sum + entry.ops.length, 0),
  };
  return { tenants, summary };
}

describe('selectTargets', () => {
  it('gives the plan of the full desired state restricted to the targets, minus the excludes', () => {
    fc.assert(
      fc.property(
        declared.chain((entries) =>
          fc.record({
            entries: fc.constant(entries),
            targets: fc.subarray(entries, { maxLength: Math.min(4, entries.length) }),
            excludes: fc.array(exclude, { maxLength: 3 }),
          }),
        ),
        ({ entries, targets, excludes }) => {
          const sets = contractSets(entries);
          const known = knownState(entries);
          const targetPatterns = targets.map((entry) => ({ tenant: entry.tenant, id: entry.id, raw: `${entry.tenant}/${entry.id}` }));

          const selection = selectTargets(sets, { targets: targetPatterns, excludes });

          if (selection.kind !== 'selected') throw new Error('every target is declared');
          const full = createPlan(sets, known, { createdAt: CREATED_AT, source: SOURCE });
          const targeted = createPlan(selection.contractSets, known, { createdAt: CREATED_AT, source: SOURCE });
          const wanted = new Set(targets.map((entry) => `${entry.tenant}/${entry.id}`));
          function keep(tenant: string, contractId: string): boolean {
            return (wanted.size === 0 || wanted.has(`${tenant}/${contractId}`)) && !excluded(excludes, tenant, contractId);
          }
          const expected = restrict(full, keep);
          expect({ tenants: targeted.tenants, summary: targeted.summary }).toEqual(expected);
          expect(selection.selected).toBe(expected.summary.contracts);
          expect(selection.total).toBe(entries.length);
          // Narrowed: the tenants planned with some of their contracts left out.
          const narrowed = TENANTS.filter((tenant) => {
            const all = entries.filter((entry) => entry.tenant === tenant).length;
            const kept = expected.tenants.find((entry) => entry.tenant === tenant)?.contracts.length ?? 0;
            return kept > 0 && kept < all;
          });
          expect([...selection.narrowed].sort()).toEqual(narrowed);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses, naming them, targets that no contract set declares', () => {
    fc.assert(
      fc.property(declared, fc.constantFrom(...TENANTS), id, (entries, tenant, contractId) => {
        fc.pre(!entries.some((entry) => entry.tenant === tenant && entry.id === contractId));

        const selection = selectTargets(contractSets(entries), { targets: [{ tenant, id: contractId, raw: `${tenant}/${contractId}` }], excludes: [] });

        expect(selection).toEqual({ kind: 'unmatched', unmatched: [`${tenant}/${contractId}`] });
      }),
    );
  });
});
