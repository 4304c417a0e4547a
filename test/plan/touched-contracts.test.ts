import { describe, expect, it } from 'vitest';
import type { ContractSet } from '../../engine/desired/index.ts';
import { findTouchedContracts, sameDesiredFields } from '../../engine/plan/index.ts';
import { contractKey, desiredFieldChanges } from '../../engine/plan/touched-contracts.ts';
import type { ContractFields } from '../../engine/model/index.ts';

function set(tenant: string, file: string, contracts: Record<string, ContractFields>): ContractSet {
  return { tenant, file, contracts: Object.entries(contracts).map(([id, fields], index) => ({ id, line: 3 + index * 2, column: 3, fields })) };
}

function touchedIds(result: ReturnType<typeof findTouchedContracts>): string[] {
  return [...result.contracts].flatMap(([tenant, ids]) => [...ids].map((id) => `${tenant}/${id}`)).sort();
}

describe('sameDesiredFields', () => {
  it.each<[string, ContractFields, ContractFields, boolean]>([
    ['identical', { Name: 'a', Area: 1 }, { Name: 'a', Area: 1 }, true],
    ['a number written as 100.0', { AnnualExpensesAmount: 100 }, { AnnualExpensesAmount: 100.0 }, true],
    ['one instant, two notations', { ValidFrom: '2027-01-01T00:00:00Z' }, { ValidFrom: '2027-01-01T00:00:00.000Z' }, true],
    ['a duration with null units left out', { SupplierNoticePeriod: { Days: 30 } }, { SupplierNoticePeriod: { Days: 30, Hours: null } }, true],
    [
      'members in another order',
      {
        Company: [
          { Id: 1, RelationType: 'A' },
          { Id: 2, RelationType: 'B' },
        ],
      },
      {
        Company: [
          { Id: 2, RelationType: 'B' },
          { Id: 1, RelationType: 'A' },
        ],
      },
      true,
    ],
    ['another value', { Name: 'a' }, { Name: 'b' }, false],
    ['a field no longer managed', { Name: 'a', Area: 1 }, { Name: 'a' }, false],
    ['a field newly managed', { Name: 'a' }, { Name: 'a', Comment: 'c' }, false],
    ['a member added', { Company: [] }, { Company: [{ Id: 1, RelationType: 'A' }] }, false],
    ['a member field only one side writes', { OrganizationalUnit: [{ Id: 3, Name: 'FM' }] }, { OrganizationalUnit: [{ Id: 3 }] }, false],
    ['a member field changed', { OrganizationalUnit: [{ Id: 3, Name: 'FM' }] }, { OrganizationalUnit: [{ Id: 3, Name: 'Facility' }] }, false],
  ])('%s: %s', (_name, a, b, same) => {
    expect(sameDesiredFields(a, b)).toBe(same);
    expect(sameDesiredFields(b, a)).toBe(same);
  });
});

describe('findTouchedContracts', () => {
  it('marks only the contract that changed in a changed file', () => {
    const base = [set('acme', 'c/a.yaml', { '1': { Name: 'one' }, '2': { Name: 'two' }, '3': { Name: 'three' } })];
    const head = [set('acme', 'c/a.yaml', { '1': { Name: 'one' }, '2': { Name: 'TWO' }, '3': { Name: 'three' } })];

    const result = findTouchedContracts(head, base, new Set(['c/a.yaml']));

    expect(touchedIds(result)).toEqual(['acme/2']);
    expect(result.noLongerManaged).toEqual([]);
  });

  it('marks every contract of a new file, and none of an unchanged file', () => {
    const head = [set('acme', 'c/new.yaml', { '7': { Name: 'seven' }, '8': { Name: 'eight' } }), set('acme', 'c/old.yaml', { '1': { Name: 'one' } })];

    const result = findTouchedContracts(head, [], new Set(['c/new.yaml']));

    expect(touchedIds(result)).toEqual(['acme/7', 'acme/8']);
  });

  it('does not mark a contract moved unchanged to another file', () => {
    const base = [set('acme', 'c/a.yaml', { '1': { Name: 'one' }, '2': { Name: 'two' } })];
    const head = [set('acme', 'c/a.yaml', { '1': { Name: 'one' } }), set('acme', 'c/b.yaml', { '2': { Name: 'two' } })];

    const result = findTouchedContracts(head, base, new Set(['c/a.yaml', 'c/b.yaml']));

    expect(touchedIds(result)).toEqual([]);
    expect(result.noLongerManaged).toEqual([]);
  });

  it('lists a contract the change removes as no longer managed, with where the base declared it', () => {
    const base = [set('acme', 'c/a.yaml', { '1': { Name: 'one' }, '2': { Name: 'two' } })];
    const head = [set('acme', 'c/a.yaml', { '1': { Name: 'one' } })];

    const result = findTouchedContracts(head, base, new Set(['c/a.yaml']));

    expect(result.noLongerManaged).toEqual([{ tenant: 'acme', id: '2', file: 'c/a.yaml', line: 5 }]);
  });

  it('a file moved to another tenant: new contracts there, no longer managed in the old tenant', () => {
    const base = [set('acme', 'c/a.yaml', { '1': { Name: 'one' } })];
    const head = [set('globex', 'c/a.yaml', { '1': { Name: 'one' } })];

    const result = findTouchedContracts(head, base, new Set(['c/a.yaml']));

    expect(touchedIds(result)).toEqual(['globex/1']);
    expect(result.noLongerManaged.map((c) => `${c.tenant}/${c.id}`)).toEqual(['acme/1']);
  });
});

describe('desiredFieldChanges (what a pull request did to a contract, base -> head)', () => {
  it.each<[string, ContractFields | undefined, ContractFields, ReturnType<typeof desiredFieldChanges>]>([
    [
      'a contract added: every field set, in the field table order',
      undefined,
      { Name: 'n', Area: 2 },
      [
        { field: 'Area', before: null, after: 2 },
        { field: 'Name', before: null, after: 'n' },
      ],
    ],
    ['a scalar changed', { Name: 'a', Area: 1 }, { Name: 'b', Area: 1 }, [{ field: 'Name', before: 'a', after: 'b' }]],
    ['a scalar newly managed', { Name: 'a' }, { Name: 'a', Comment: 'c' }, [{ field: 'Comment', before: null, after: 'c' }]],
    ['a scalar no longer managed', { Name: 'a', Area: 1 }, { Name: 'a' }, [{ field: 'Area', before: 1, after: null, unmanaged: true }]],
    [
      'a member removed and one added',
      { Company: [{ Id: 1, RelationType: 'A' }] },
      { Company: [{ Id: 2, RelationType: 'B' }] },
      [
        { field: 'Company', before: { Id: 1, RelationType: 'A' }, after: null },
        { field: 'Company', before: null, after: { Id: 2, RelationType: 'B' } },
      ],
    ],
    [
      'a member list no longer managed: each member, in the field table order',
      { Name: 'a', Company: [{ Id: 1, RelationType: 'A' }] },
      { Name: 'b' },
      [
        { field: 'Name', before: 'a', after: 'b' },
        { field: 'Company', before: { Id: 1, RelationType: 'A' }, after: null, unmanaged: true },
      ],
    ],
  ])('%s', (_name, before, after, changes) => {
    expect(desiredFieldChanges(before, after)).toEqual(changes);
  });

  it('findTouchedContracts gives it for each touched contract, by tenant and id, and for no other', () => {
    const base = [set('acme', 'c/a.yaml', { '1': { Name: 'one' }, '2': { Name: 'two' } })];
    const head = [set('acme', 'c/a.yaml', { '1': { Name: 'one' }, '2': { Name: 'TWO' }, '3': { Name: 'three' } })];

    const result = findTouchedContracts(head, base, new Set(['c/a.yaml']));

    expect([...result.desiredChanges!]).toEqual([
      [contractKey('acme', '2'), [{ field: 'Name', before: 'two', after: 'TWO' }]],
      [contractKey('acme', '3'), [{ field: 'Name', before: null, after: 'three' }]],
    ]);
  });
});
