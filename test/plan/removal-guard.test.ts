import { describe, expect, it } from 'vitest';
import type { ContractFields } from '../../engine/model/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { countRemovals, judgeRemovals, type KnownSize } from '../../engine/plan/removal-guard.ts';
import { renderPlanMarkdown } from '../../engine/plan/render-markdown.ts';
import { renderRemovalsMarkdown } from '../../engine/plan/render-removals.ts';
import type { PlanContract } from '../../engine/plan/types.ts';
import type { KnownContracts } from '../../engine/state/types.ts';

function company(id: number) {
  return { Id: id, RelationType: 'Supplier' };
}

/** One tenant, one contract per entry: the known fields and the desired fields. */
function planOf(contracts: Record<string, { known: ContractFields; desired: ContractFields }>): { contracts: readonly PlanContract[]; knownSize: KnownSize } {
  const known: KnownContracts = new Map(Object.entries(contracts).map(([id, { known }]) => [id, { fields: known, from: 'state' as const }]));
  const plan = createPlan(
    [
      {
        tenant: 'acme',
        file: 'contracts/acme.yaml',
        contracts: Object.entries(contracts).map(([id, { desired }], index) => ({ id, line: index + 3, column: 3, fields: desired })),
      },
    ],
    new Map([['acme', known]]),
    { createdAt: '2026-11-22T10:00:00Z', source: { repo: '.', ref: null, commit: null } },
  );
  function knownSize(id: string, field: Parameters<KnownSize>[1]): number | undefined {
    return known.get(id)?.fields[field]?.length;
  }
  return { contracts: plan.tenants[0]!.contracts, knownSize };
}

/** A contract whose plan removes `removed` of its `of` companies. */
function removing(removed: number, of: number) {
  const all = Array.from({ length: of }, (_, index) => company(index + 1));
  return { known: { Company: all }, desired: { Company: all.slice(removed) } };
}

const LIMITS = { maxRemovals: 25, allow: false };

describe('the removal guard', () => {
  it.each([
    [24, 'allowed'],
    [25, 'allowed'],
    [26, 'refused'],
  ])('with the limit 25, %i removals in one tenant are %s', (count, verdict) => {
    // Spread over contracts of 10 companies, none emptied: only the count decides.
    const contracts: Record<string, { known: ContractFields; desired: ContractFields }> = {};
    for (let left = count, index = 0; left > 0; left -= 9, index += 1) contracts[`c${index}`] = removing(Math.min(9, left), 10);
    const { contracts: planned, knownSize } = planOf(contracts);

    const result = judgeRemovals(countRemovals('acme', planned, knownSize), LIMITS);

    expect(result.kind).toBe(verdict);
    expect(result.removals.removals).toBe(count);
  });

  it('names the count, the tenant and the flag when it refuses', () => {
    const { contracts, knownSize } = planOf({ a: removing(9, 10), b: removing(9, 10), c: removing(8, 10) });

    const result = judgeRemovals(countRemovals('acme', contracts, knownSize), { maxRemovals: 25, allow: false });

    expect(result).toMatchObject({ kind: 'refused' });
    expect(result.kind === 'refused' && result.reason).toBe(
      'removal guard: the plan of tenant acme removes 26 collection members, more than the limit of 25 (--max-removals, safety.maxRemovals); ' +
        'nothing sent for acme. Check the desired state, or pass --allow-removals to send it anyway.',
    );
  });

  it('refuses a plan that removes every member of a collection of 3 or more, whatever the limit', () => {
    const three = planOf({ 4711: removing(3, 3) });
    const two = planOf({ 4711: removing(2, 2) });
    const allButOne = planOf({ 4711: removing(3, 4) });

    const refused = judgeRemovals(countRemovals('acme', three.contracts, three.knownSize), LIMITS);

    expect(refused.kind === 'refused' && refused.reason).toContain('removes every member of Company of contract 4711 (3 members)');
    expect(refused.kind === 'refused' && refused.reason).toContain('--allow-removals');
    expect(judgeRemovals(countRemovals('acme', two.contracts, two.knownSize), LIMITS).kind).toBe('allowed');
    expect(judgeRemovals(countRemovals('acme', allButOne.contracts, allButOne.knownSize), LIMITS).kind).toBe('allowed');
  });

  it('does not count a member removed to be added again (a changed member)', () => {
    const { contracts, knownSize } = planOf({
      4712: {
        known: {
          Type: [
            { Lookup: 'A', EbaCode: null, IsDora: false },
            { Lookup: 'B', EbaCode: null, IsDora: false },
            { Lookup: 'C', EbaCode: null, IsDora: false },
          ],
        },
        desired: {
          Type: [
            { Lookup: 'A', EbaCode: null, IsDora: true },
            { Lookup: 'B', EbaCode: null, IsDora: true },
            { Lookup: 'C', EbaCode: null, IsDora: true },
          ],
        },
      },
    });

    const removals = countRemovals('acme', contracts, knownSize);

    expect(contracts.find((contract) => contract.id === '4712')!.ops).toHaveLength(6);
    expect(removals).toEqual({ tenant: 'acme', removals: 0, emptied: [] });
  });

  it('lets --allow-removals through, and honours a lower configured limit', () => {
    const { contracts, knownSize } = planOf({ 4711: removing(3, 3), 4712: removing(2, 10) });
    const removals = countRemovals('acme', contracts, knownSize);

    expect(judgeRemovals(removals, { maxRemovals: 25, allow: true }).kind).toBe('allowed');
    expect(
      judgeRemovals(
        countRemovals(
          'acme',
          contracts.filter((contract) => contract.id === '4712'),
          knownSize,
        ),
        { maxRemovals: 1, allow: false },
      ).kind,
    ).toBe('refused');
    expect(
      judgeRemovals(
        countRemovals(
          'acme',
          contracts.filter((contract) => contract.id === '4712'),
          knownSize,
        ),
        { maxRemovals: 2, allow: false },
      ).kind,
    ).toBe('allowed');
  });

  it('without the known sizes (a saved plan rendered alone) judges by the count only', () => {
    const { contracts } = planOf({ 4711: removing(3, 3) });

    expect(countRemovals('acme', contracts)).toEqual({ tenant: 'acme', removals: 3, emptied: [] });
  });
});

describe('renderRemovalsMarkdown', () => {
  function planWith(removed: number) {
    const companies = Array.from({ length: removed + 1 }, (_, index) => company(index + 1));
    return createPlan(
      [
        { tenant: 'acme', file: 'contracts/acme.yaml', contracts: [{ id: '4711', line: 3, column: 3, fields: { Company: companies.slice(removed) } }] },
        { tenant: 'globex', file: 'contracts/globex.yaml', contracts: [{ id: 'L-1', line: 3, column: 3, fields: { Name: 'Lease' } }] },
      ],
      new Map<string, KnownContracts>([
        ['acme', new Map([['4711', { fields: { Company: companies }, from: 'state' as const }]])],
        ['globex', new Map([['L-1', { fields: { Name: 'Old lease' }, from: 'state' as const }]])],
      ]),
      { createdAt: '2026-11-22T10:00:00Z', source: { repo: '.', ref: null, commit: null } },
    );
  }

  it('says nothing when the plan removes no member', () => {
    expect(renderRemovalsMarkdown(planWith(0))).toBe('');
  });

  it('counts the removals per tenant, at the limit without a warning', () => {
    expect(renderRemovalsMarkdown(planWith(25))).toBe('Collection members removed: acme 25.\n\n');
  });

  it('warns above the limit, naming the tenant and the flag', () => {
    const out = renderRemovalsMarkdown(planWith(26));

    expect(out).toBe(
      'Collection members removed: acme 26.\n\n' +
        '> [!WARNING]\n> Removal guard: the plan of tenant acme removes more than 25 collection members. ' +
        'After the merge, apply (and drift --fix) will refuse it and send nothing there, unless run with --allow-removals.\n\n',
    );
    expect(renderRemovalsMarkdown(planWith(26), 30)).not.toContain('WARNING');
  });

  it('warns at the limit the plan recorded from the config (safety.maxRemovals)', () => {
    const madeWith = { version: '0.0.0-test', reads: false, collections: {} };

    expect(renderRemovalsMarkdown({ ...planWith(11), madeWith: { ...madeWith, maxRemovals: 10 } })).toContain('removes more than 10 collection members');
    expect(renderRemovalsMarkdown({ ...planWith(11), madeWith: { ...madeWith, maxRemovals: 11 } })).not.toContain('WARNING');
  });

  it('appears in the pull-request comment', () => {
    expect(renderPlanMarkdown(planWith(26))).toContain('> Removal guard: the plan of tenant acme removes more than 25 collection members.');
  });
});
