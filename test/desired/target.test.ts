/** Targeting: patterns, the description a targeted run prints, excludes that match nothing. */
import { describe, expect, it } from 'vitest';
import { parseTargetPattern, selectTargets } from '../../engine/desired/target.ts';
import type { ContractSet } from '../../engine/desired/types.ts';

const SETS: ContractSet[] = [
  {
    tenant: 'acme',
    file: 'contracts/acme.yaml',
    contracts: ['4711', '4712', '5000'].map((id, index) => ({ id, line: index + 3, column: 3, fields: { Name: id } })),
  },
  { tenant: 'beta', file: 'contracts/beta.yaml', contracts: [{ id: '1', line: 3, column: 3, fields: { Name: 'one' } }] },
];

function pattern(raw: string) {
  const parsed = parseTargetPattern(raw);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('parseTargetPattern', () => {
  it.each(['acme', '/4711', 'acme/', ''])('refuses %j, saying what is expected', (raw) => {
    expect(parseTargetPattern(raw)).toBe(`expected TENANT/ID (e.g. acme/4711), got "${raw}"`);
  });

  it('splits at the first slash: an id may hold one', () => {
    expect(parseTargetPattern('acme/2027/7')).toEqual({ tenant: 'acme', id: '2027/7', raw: 'acme/2027/7' });
  });
});

describe('selectTargets', () => {
  it('describes the run with the counts and the flags as given', () => {
    const selection = selectTargets(SETS, { targets: [pattern('acme/4711'), pattern('acme/4712')], excludes: [] });

    expect(selection).toMatchObject({
      kind: 'selected',
      selected: 2,
      total: 4,
      narrowed: new Set(['acme']),
      description: 'Targeted run: 2 of 4 contracts (--target acme/4711 --target acme/4712).',
    });
    expect(selection.kind === 'selected' && selection.contractSets.map((set) => set.tenant)).toEqual(['acme']);
  });

  it('excludes by glob on the id, within the named tenant only, and reports excludes that match nothing', () => {
    const selection = selectTargets(SETS, { targets: [], excludes: [pattern('acme/47*'), pattern('beta/47*')] });

    expect(selection).toMatchObject({ kind: 'selected', selected: 2, unmatchedExcludes: ['beta/47*'], narrowed: new Set(['acme']) });
    expect(selection.kind === 'selected' && selection.contractSets.flatMap((set) => set.contracts.map((contract) => `${set.tenant}/${contract.id}`))).toEqual([
      'acme/5000',
      'beta/1',
    ]);
  });

  it('does not call a tenant narrowed when all of it is left out (it is not run at all)', () => {
    const selection = selectTargets(SETS, { targets: [], excludes: [pattern('beta/*')] });

    expect(selection).toMatchObject({ kind: 'selected', narrowed: new Set(), selected: 3 });
  });
});
