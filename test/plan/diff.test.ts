import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { diffContract, type DiffOptions } from '../../engine/index.ts';
import type { ContractFields, Op } from '../../engine/model/index.ts';

type Case = [name: string, known: ContractFields | undefined, desired: ContractFields, expected: Op[], options?: DiffOptions];

const ACME = { Id: 12, RelationType: 'Supplier' };
const CLIENT = { Id: 1, RelationType: 'Client' };
const FULL_NULL = { Hours: null, Minutes: null, Seconds: null, Milliseconds: null, Microseconds: null };

describe('section 3.1: a field absent from the desired state is unmanaged', () => {
  it.each<Case>([
    ['known scalar not in desired', { Name: 'A', Area: 1 }, { Area: 1 }, []],
    ['known collection not in desired', { Company: [ACME] }, { Name: 'A' }, [{ op: 'Replace', path: '/Contract/Name', value: 'A' }]],
    ['empty desired', { Name: 'A', Company: [ACME] }, {}, []],
    ['desired key with undefined value', { Name: 'A' }, { Name: undefined } as ContractFields, []],
  ])('%s', (_name, known, desired, expected, options) => {
    const ops = diffContract(known, desired, options);

    expect(ops).toEqual(expected);
  });
});

describe('section 3.2: scalars are replaced only when their normal forms differ', () => {
  it.each<Case>([
    ['equal strings', { Name: 'A' }, { Name: 'A' }, []],
    ['strings compare exactly (case)', { Name: 'a' }, { Name: 'A' }, [{ op: 'Replace', path: '/Contract/Name', value: 'A' }]],
    ['strings compare exactly (trailing space)', { Name: 'A ' }, { Name: 'A' }, [{ op: 'Replace', path: '/Contract/Name', value: 'A' }]],
    ['100 = 100.0 (as YAML reads them)', parse('AnnualExpensesAmount: 100'), parse('AnnualExpensesAmount: 100.0'), []],
    ['0 = -0', { AnnualExpensesAmount: -0 }, { AnnualExpensesAmount: 0 }, []],
    ['100 != 100.5', { AnnualExpensesAmount: 100 }, { AnnualExpensesAmount: 100.5 }, [{ op: 'Replace', path: '/Contract/AnnualExpensesAmount', value: 100.5 }]],
    ['integer changed', { Area: 1 }, { Area: 2 }, [{ op: 'Replace', path: '/Contract/Area', value: 2 }]],
    ['...00Z = ...00.000Z', { ValidFrom: '2027-01-01T00:00:00Z' }, { ValidFrom: '2027-01-01T00:00:00.000Z' }, []],
    ['...00.000Z = ...00.000000Z', { ValidFrom: '2027-01-01T00:00:00.000Z' }, { ValidFrom: '2027-01-01T00:00:00.000000Z' }, []],
    ['...01:00+01:00 = ...00Z', { ValidFrom: '2027-01-01T01:00:00+01:00' }, { ValidFrom: '2027-01-01T00:00:00Z' }, []],
    ['offset across midnight', { ValidTo: '2027-12-31T19:00:00-05:00' }, { ValidTo: '2028-01-01T00:00:00Z' }, []],
    [
      'instants one millisecond apart',
      { ValidFrom: '2027-01-01T00:00:00Z' },
      { ValidFrom: '2027-01-01T00:00:00.001Z' },
      [{ op: 'Replace', path: '/Contract/ValidFrom', value: '2027-01-01T00:00:00.001Z' }],
    ],
    [
      'invalid known timestamp',
      { ValidFrom: 'soon' },
      { ValidFrom: '2027-01-01T00:00:00Z' },
      [{ op: 'Replace', path: '/Contract/ValidFrom', value: '2027-01-01T00:00:00Z' }],
    ],
    ['known value of another type', { Area: '1' } as unknown as ContractFields, { Area: 1 }, [{ op: 'Replace', path: '/Contract/Area', value: 1 }]],
    ['known null', { Name: null } as unknown as ContractFields, { Name: 'A' }, [{ op: 'Replace', path: '/Contract/Name', value: 'A' }]],
    ['known absent', {}, { Category: 4 }, [{ op: 'Replace', path: '/Contract/Category', value: 4 }]],
    ['durations: absent unit = null', { SupplierNoticePeriod: { Days: 30, Hours: null } }, { SupplierNoticePeriod: { Days: 30 } }, []],
    [
      'durations: 0 is not null',
      { SupplierNoticePeriod: { Days: 30, Hours: 0 } },
      { SupplierNoticePeriod: { Days: 30 } },
      [{ op: 'Replace', path: '/Contract/SupplierNoticePeriod', value: { Days: 30, ...FULL_NULL } }],
    ],
    [
      'durations are replaced whole',
      { OrderingPartyNoticePeriod: { Days: 90, Hours: 2 } },
      { OrderingPartyNoticePeriod: { Days: 60 } },
      [{ op: 'Replace', path: '/Contract/OrderingPartyNoticePeriod', value: { Days: 60, ...FULL_NULL } }],
    ],
  ])('%s', (_name, known, desired, expected, options) => {
    const ops = diffContract(known, desired, options);

    expect(ops).toEqual(expected);
  });
});

describe('section 3.3: collections are matched by identity key', () => {
  const OU = { Id: 3, Name: 'Facility Management' };
  const OWNER = { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7, Name: 'Ada', Email: 'ada@example.com', OrganizationalUnit: { Id: 3 } } };
  const NULL_OWNER = { OwnerType: { Value: 1 }, User: { Id: 7, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } };
  it.each<Case>([
    ['same members, other order', { Company: [ACME, CLIENT] }, { Company: [CLIENT, ACME] }, []],
    ['a new member is added', { Company: [ACME] }, { Company: [ACME, CLIENT] }, [{ op: 'Add', path: '/Contract/Company', value: CLIENT }]],
    [
      'a member not desired is removed (authoritative)',
      { Company: [ACME, CLIENT] },
      { Company: [ACME] },
      [{ op: 'Remove', path: '/Contract/Company', value: CLIENT }],
    ],
    [
      'Company: [] removes every company',
      { Company: [ACME, CLIENT] },
      { Company: [] },
      [
        { op: 'Remove', path: '/Contract/Company', value: ACME },
        { op: 'Remove', path: '/Contract/Company', value: CLIENT },
      ],
    ],
    ['Company: [] with none known', {}, { Company: [] }, []],
    [
      'identity is the pair (Id, RelationType)',
      { Company: [ACME] },
      { Company: [{ Id: 12, RelationType: 'Client' }] },
      [
        { op: 'Remove', path: '/Contract/Company', value: ACME },
        { op: 'Add', path: '/Contract/Company', value: { Id: 12, RelationType: 'Client' } },
      ],
    ],
    [
      'a changed descriptive field: Remove the known member, then Add',
      { OrganizationalUnit: [{ Id: 3, Name: 'FM' }] },
      { OrganizationalUnit: [OU] },
      [
        { op: 'Remove', path: '/Contract/OrganizationalUnit', value: { Id: 3, Name: 'FM' } },
        { op: 'Add', path: '/Contract/OrganizationalUnit', value: OU },
      ],
    ],
    ['OrganizationalUnit Name left out is not compared', { OrganizationalUnit: [OU] }, { OrganizationalUnit: [{ Id: 3 }] }, []],
    ['a nested Owner field left out is not compared', { Owner: [OWNER] }, { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7 } }] }, []],
    [
      'a nested Owner field changed',
      { Owner: [OWNER] },
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, Email: 'ada@example.org' } }] },
      [
        { op: 'Remove', path: '/Contract/Owner', value: OWNER },
        // What the desired member leaves out is kept as known: it is not managed.
        {
          op: 'Add',
          path: '/Contract/Owner',
          value: {
            OwnerType: { Name: 'Responsible', Value: 1 },
            User: { Id: 7, Name: 'Ada', Email: 'ada@example.org', OrganizationalUnit: { Id: 3, Name: null } },
          },
        },
      ],
    ],
    ['a member field null = absent', { Type: [{ Lookup: 'Service' }] }, { Type: [{ Lookup: 'Service', EbaCode: null }] }, []],
    [
      'Owner user fields written null = absent in known state',
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, OrganizationalUnit: {} } }] },
      { Owner: [NULL_OWNER] },
      [],
    ],
    [
      'Owner user fields null in known state = absent in desired',
      { Owner: [NULL_OWNER] },
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, OrganizationalUnit: {} } }] },
      [],
    ],
    [
      'an Owner user name written null where one is known',
      { Owner: [OWNER] },
      { Owner: [{ OwnerType: { Value: 1 }, User: { Id: 7, Name: null } }] },
      [
        { op: 'Remove', path: '/Contract/Owner', value: OWNER },
        {
          op: 'Add',
          path: '/Contract/Owner',
          value: {
            OwnerType: { Name: 'Responsible', Value: 1 },
            User: { Id: 7, Name: null, Email: 'ada@example.com', OrganizationalUnit: { Id: 3, Name: null } },
          },
        },
      ],
    ],
    [
      'a boolean member field changed',
      { Type: [{ Lookup: 'ICT', IsDora: false }] },
      { Type: [{ Lookup: 'ICT', IsDora: true }] },
      [
        { op: 'Remove', path: '/Contract/Type', value: { Lookup: 'ICT', IsDora: false } },
        { op: 'Add', path: '/Contract/Type', value: { Lookup: 'ICT', EbaCode: null, IsDora: true } },
      ],
    ],
    [
      'Removes before Adds, fields in table order',
      { Company: [ACME], Type: [{ Lookup: 'A' }] },
      { Type: [{ Lookup: 'B', IsDora: false }], Company: [CLIENT], Name: 'N' },
      [
        { op: 'Replace', path: '/Contract/Name', value: 'N' },
        { op: 'Remove', path: '/Contract/Company', value: ACME },
        { op: 'Add', path: '/Contract/Company', value: CLIENT },
        { op: 'Remove', path: '/Contract/Type', value: { Lookup: 'A' } },
        { op: 'Add', path: '/Contract/Type', value: { Lookup: 'B', EbaCode: null, IsDora: false } },
      ],
    ],
    [
      'an Add sends the nullable member fields it leaves out as null',
      {},
      { Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7 } }], Type: [{ Lookup: 'ICT', IsDora: false }] },
      [
        {
          op: 'Add',
          path: '/Contract/Owner',
          value: { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } },
        },
        { op: 'Add', path: '/Contract/Type', value: { Lookup: 'ICT', EbaCode: null, IsDora: false } },
      ],
    ],
    [
      'Remove carries the known member as known, extra known fields included',
      { Owner: [OWNER] },
      { Owner: [] },
      [{ op: 'Remove', path: '/Contract/Owner', value: OWNER }],
    ],
  ])('%s', (_name, known, desired, expected, options) => {
    const ops = diffContract(known, desired, options);

    expect(ops).toEqual(expected);
  });
});

describe('section 3.3: additive mode never removes', () => {
  const additive: DiffOptions = { collections: { Company: 'additive' } };
  it.each<Case>([
    ['a member not desired stays', { Company: [ACME, CLIENT] }, { Company: [ACME] }, [], additive],
    ['Company: [] removes nothing', { Company: [ACME, CLIENT] }, { Company: [] }, [], additive],
    ['a new member is added', { Company: [ACME] }, { Company: [CLIENT] }, [{ op: 'Add', path: '/Contract/Company', value: CLIENT }], additive],
    [
      'a changed member is still removed and added',
      { OrganizationalUnit: [{ Id: 3, Name: 'FM' }] },
      { OrganizationalUnit: [{ Id: 3, Name: 'Facilities' }] },
      [
        { op: 'Remove', path: '/Contract/OrganizationalUnit', value: { Id: 3, Name: 'FM' } },
        { op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: 3, Name: 'Facilities' } },
      ],
      { collections: { OrganizationalUnit: 'additive' } },
    ],
    [
      'the mode is per collection',
      { Company: [ACME], Type: [{ Lookup: 'A' }] },
      { Company: [], Type: [] },
      [{ op: 'Remove', path: '/Contract/Type', value: { Lookup: 'A' } }],
      additive,
    ],
  ])('%s', (_name, known, desired, expected, options) => {
    const ops = diffContract(known, desired, options);

    expect(ops).toEqual(expected);
  });
});

describe('section 3.4: nothing known', () => {
  it.each<Case>([
    [
      'every desired scalar is replaced',
      undefined,
      { Name: 'A', Area: 1 },
      [
        { op: 'Replace', path: '/Contract/Area', value: 1 },
        { op: 'Replace', path: '/Contract/Name', value: 'A' },
      ],
    ],
    [
      'every desired member is added, nothing removed',
      undefined,
      { Company: [ACME, CLIENT], Type: [] },
      [
        { op: 'Add', path: '/Contract/Company', value: ACME },
        { op: 'Add', path: '/Contract/Company', value: CLIENT },
      ],
    ],
  ])('%s', (_name, known, desired, expected, options) => {
    const ops = diffContract(known, desired, options);

    expect(ops).toEqual(expected);
  });
});

describe('options', () => {
  it.each([
    [{ collections: { Name: 'additive' } }, /"Name" is not a collection field/],
    [{ collections: { Company: 'merge' } }, /options\.collections\.Company: expected "authoritative" or "additive", got "merge"/],
  ])('refuses %j with a TypeError naming the option', (options, message) => {
    expect(() => diffContract({}, {}, options as DiffOptions)).toThrow(message);
  });

  it('does not modify its inputs, and its ops share no objects with them', () => {
    const known: ContractFields = { Company: [ACME] };
    const desired: ContractFields = { Company: [CLIENT] };
    const before = structuredClone({ known, desired });

    const ops = diffContract(known, desired);
    (ops[1]!.value as { Id: number }).Id = 99;

    expect({ known, desired }).toEqual(before);
  });
});
