import { describe, expect, it } from 'vitest';
import { classifyChange, type DriftCause } from '../../engine/drift/index.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { describeChanges } from '../../engine/plan/changes.ts';
import { diffContract } from '../../engine/plan/diff.ts';

/** The causes of every change the planner finds between `live` and `desired`, as a drift run sees them. */
function causes(live: ContractFields, desired: ContractFields, lastApplied: ContractFields | undefined, collections = {}): DriftCause[] {
  const changes = describeChanges(live, diffContract(live, desired, { collections }));
  return changes.map((change) => classifyChange(change, lastApplied).cause);
}

const SUPPLIER = { Id: 12, RelationType: 'Supplier' };
const PARTNER = { Id: 99, RelationType: 'Partner' };

describe('classifyChange: scalars', () => {
  it.each<[string, ContractFields, ContractFields, ContractFields | undefined, DriftCause]>([
    ['edited on the service', { Name: 'By hand' }, { Name: 'From git' }, { Name: 'From git' }, 'changed-outside-git'],
    ['edited in git since the apply', { Name: 'Old' }, { Name: 'New' }, { Name: 'Old' }, 'not-yet-applied'],
    ['edited in both places: the service edit wins the label', { Name: 'By hand' }, { Name: 'New' }, { Name: 'Old' }, 'changed-outside-git'],
    ['cleared on the service', {}, { Name: 'From git' }, { Name: 'From git' }, 'changed-outside-git'],
    ['set on the service where the record has none', { Comment: 'added by hand' }, { Comment: 'from git' }, { Name: 'x' }, 'changed-outside-git'],
    ['newly managed in git, absent live and in the record', {}, { Comment: 'from git' }, { Name: 'x' }, 'not-yet-applied'],
    ['numbers compare numerically', { AnnualExpensesAmount: 100 }, { AnnualExpensesAmount: 250 }, { AnnualExpensesAmount: 100.0 }, 'not-yet-applied'],
    [
      'timestamps compare as instants',
      { ValidFrom: '2027-01-01T01:00:00+01:00' },
      { ValidFrom: '2028-01-01T00:00:00Z' },
      { ValidFrom: '2027-01-01T00:00:00.000Z' },
      'not-yet-applied',
    ],
    [
      'durations compare unit by unit, absent = null',
      { SupplierNoticePeriod: { Days: 30, Hours: null } },
      { SupplierNoticePeriod: { Days: 90 } },
      { SupplierNoticePeriod: { Days: 30 } },
      'not-yet-applied',
    ],
    [
      'a duration edited on the service',
      { SupplierNoticePeriod: { Days: 7 } },
      { SupplierNoticePeriod: { Days: 90 } },
      { SupplierNoticePeriod: { Days: 90, Hours: null } },
      'changed-outside-git',
    ],
    ['no record in the state store', { Name: 'Live' }, { Name: 'From git' }, undefined, 'never-applied'],
  ])('%s', (_name, live, desired, lastApplied, expected) => {
    const result = causes(live, desired, lastApplied);

    expect(result).toEqual([expected]);
  });

  it('keeps the live, desired and last applied values of the field', () => {
    const [change] = describeChanges({ Name: 'By hand' }, diffContract({ Name: 'By hand' }, { Name: 'From git' }));

    const item = classifyChange(change!, { Name: 'From git' });

    expect(item).toEqual({ field: 'Name', live: 'By hand', desired: 'From git', lastApplied: 'From git', cause: 'changed-outside-git' });
  });
});

describe('classifyChange: collection members, by identity', () => {
  it.each<[string, ContractFields, ContractFields, ContractFields | undefined, DriftCause[]]>([
    ['a member removed on the service', { Company: [] }, { Company: [SUPPLIER] }, { Company: [SUPPLIER] }, ['changed-outside-git']],
    ['a member added in git since the apply', { Company: [SUPPLIER] }, { Company: [SUPPLIER, PARTNER] }, { Company: [SUPPLIER] }, ['not-yet-applied']],
    [
      'a member added on the service (authoritative)',
      { Company: [SUPPLIER, PARTNER] },
      { Company: [SUPPLIER] },
      { Company: [SUPPLIER] },
      ['changed-outside-git'],
    ],
    [
      'a member dropped from git since the apply',
      { Company: [SUPPLIER, PARTNER] },
      { Company: [SUPPLIER] },
      { Company: [SUPPLIER, PARTNER] },
      ['not-yet-applied'],
    ],
    [
      'a member edited on the service',
      { OrganizationalUnit: [{ Id: 1, Name: 'By hand' }] },
      { OrganizationalUnit: [{ Id: 1, Name: 'Ops' }] },
      { OrganizationalUnit: [{ Id: 1, Name: 'Ops' }] },
      ['changed-outside-git'],
    ],
    [
      'a member edited in git since the apply',
      { OrganizationalUnit: [{ Id: 1, Name: 'Ops' }] },
      { OrganizationalUnit: [{ Id: 1, Name: 'Operations' }] },
      { OrganizationalUnit: [{ Id: 1, Name: 'Ops' }] },
      ['not-yet-applied'],
    ],
    [
      'a changed member the record does not hold',
      { OrganizationalUnit: [{ Id: 1, Name: 'Ops' }] },
      { OrganizationalUnit: [{ Id: 1, Name: 'Operations' }] },
      { OrganizationalUnit: [] },
      ['changed-outside-git'],
    ],
    [
      'only the values the desired member writes are compared',
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, Name: 'Ann', Email: 'new@example.com' } }] },
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, Name: 'Ann B.' } }] },
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, Name: 'Ann', Email: 'old@example.com' } }] },
      ['not-yet-applied'],
    ],
    [
      'a nested identity (OwnerType.Value, User.Id) finds the applied member whatever its other values',
      { Owner: [] },
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7 } }] },
      { Owner: [{ OwnerType: { Value: 1, Name: 'Lead' }, User: { Id: 7, Name: 'Ann' } }] },
      ['changed-outside-git'],
    ],
    ['no record in the state store', { Company: [PARTNER] }, { Company: [SUPPLIER] }, undefined, ['never-applied', 'never-applied']],
  ])('%s', (_name, live, desired, lastApplied, expected) => {
    const result = causes(live, desired, lastApplied);

    expect(result).toEqual(expected);
  });

  it('names the member and keeps the last applied member of its identity', () => {
    const live = { Company: [SUPPLIER, PARTNER] };
    const [change] = describeChanges(live, diffContract(live, { Company: [SUPPLIER] }));

    const item = classifyChange(change!, { Company: [SUPPLIER] });

    expect(item).toEqual({
      field: 'Company',
      member: 'Id 99, RelationType "Partner"',
      live: PARTNER,
      desired: null,
      lastApplied: null,
      cause: 'changed-outside-git',
    });
  });
});
