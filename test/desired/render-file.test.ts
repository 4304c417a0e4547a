import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderDesiredFile, type RenderFileInput } from '../../engine/desired/render-file.ts';
import { validateDesiredState } from '../../engine/desired/validate.ts';
import { FIELD_NAMES } from '../../engine/model/fields.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { diffContract } from '../../engine/plan/diff.ts';

const CONFIG = { tenants: { acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' } } } };

/** Every field, keys in the reverse of the table's order. */
const EVERY_FIELD: ContractFields = {
  Type: [{ Lookup: 'Service', EbaCode: null, IsDora: false }],
  Owner: [
    {
      OwnerType: { Name: 'Responsible', Value: 1 },
      User: { Id: 501, Name: 'Dana Berg', Email: 'dana.berg@acme.example', OrganizationalUnit: { Id: 3, Name: 'Facility Management' } },
    },
  ],
  OrganizationalUnit: [
    { Id: 3, Name: 'Facility Management' },
    { Id: 4, Name: 'Cleaning' },
  ],
  Company: [{ Id: 12, RelationType: 'Supplier' }],
  SupplierNoticePeriod: { Days: 30, Hours: null },
  OrderingPartyNoticePeriod: { Minutes: 0.5 },
  ValidTo: '2027-12-31T23:59:59.999Z',
  ValidFrom: '2027-01-01T00:00:00Z',
  ShortSLAConditions: '99.9 %',
  Name: 'Facility cleaning',
  Signature: 'Signed',
  Evaluation: 'good',
  DescriptionSLAConditions: 'Same day.\nPenalty: 2 %.\n',
  Description: 'Cleaning',
  Comment: 'Renewed',
  Category: 4,
  Area: 2,
  AnnualExpensesCurrencyId: 978,
  AnnualExpensesAmount: 48000.5,
};

function render(contracts: Record<string, Readonly<Record<string, unknown>>>, tenant = 'acme'): ReturnType<typeof renderDesiredFile> {
  const input: RenderFileInput = { tenant, contracts: new Map(Object.entries(contracts)), schema: '../../specs/contracts.schema.json' };
  return renderDesiredFile(input);
}

/** The file as `validate` reads it: no diagnostic, and each contract's fields. */
function readBack(text: string): Map<string, ContractFields> {
  const result = validateDesiredState([{ path: 'contracts/acme/imported.yaml', content: text }], CONFIG);
  expect([...result.errors, ...result.warnings]).toEqual([]);
  return new Map(result.contractSets.flatMap((set) => set.contracts.map((contract) => [contract.id, contract.fields] as const)));
}

describe('renderDesiredFile', () => {
  it('writes the schema line, the tenant and every field in the table order', () => {
    const { text, notes } = render({ '4711': EVERY_FIELD });

    expect(text.split('\n').slice(0, 4)).toEqual([
      '# yaml-language-server: $schema=../../specs/contracts.schema.json',
      'tenant: acme',
      'contracts:',
      '  "4711":',
    ]);
    expect(Object.keys(parse(text).contracts['4711'])).toEqual(FIELD_NAMES);
    expect(notes).toEqual([]);
  });

  it('writes in the house style of the example files', () => {
    const fields: ContractFields = {
      Name: 'Security services',
      ValidFrom: '2027-01-01T00:00:00Z',
      OrderingPartyNoticePeriod: { Days: 90, Hours: null },
      DescriptionSLAConditions: 'Line one.\nLine two.',
      Company: [{ Id: 19, RelationType: 'Supplier' }],
      Owner: [
        { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 501, Name: 'Dana Berg', Email: 'dana.berg@acme.example', OrganizationalUnit: { Id: 3 } } },
      ],
      Type: [{ Lookup: 'Service', EbaCode: null, IsDora: false }],
    };

    const { text } = render({ '4712': fields });

    expect(text).toBe(
      [
        '# yaml-language-server: $schema=../../specs/contracts.schema.json',
        'tenant: acme',
        'contracts:',
        '  "4712":',
        '    DescriptionSLAConditions: |-',
        '      Line one.',
        '      Line two.',
        '    Name: Security services',
        '    ValidFrom: 2027-01-01T00:00:00Z',
        '    OrderingPartyNoticePeriod: { Days: 90 }',
        '    Company:',
        '      - { Id: 19, RelationType: Supplier }',
        '    Owner:',
        '      - OwnerType: { Name: Responsible, Value: 1 }',
        '        User:',
        '          Id: 501',
        '          Name: Dana Berg',
        '          Email: dana.berg@acme.example',
        '          OrganizationalUnit: { Id: 3 }',
        '    Type:',
        '      - { Lookup: Service, EbaCode: null, IsDora: false }',
        '',
      ].join('\n'),
    );
  });

  it.each(['4711', '0815', '1e3', '0x1F', 'true', 'null', 'yes', 'G-100', 'a.b_c~d'])('quotes the ContractId %s and reads it back unchanged', (id) => {
    const { text } = render({ [id]: { Name: 'x' } });

    expect(text).toContain(`\n  "${id}":\n`);
    expect([...readBack(text).keys()]).toEqual([id]);
  });

  it.each([
    'yes',
    'No',
    'on',
    'OFF',
    'y',
    'true',
    'null',
    '~',
    '',
    '#',
    'a # b',
    ': ',
    'key: value',
    '- dash',
    '0815',
    '1e3',
    '12.50',
    '2027-01-01',
    '2027-01-01T00:00:00Z',
    ' leading and trailing ',
    'quote "x" and it\'s',
    '@at `tick` %pct *star &amp !bang |pipe >gt',
    '{brace} [bracket]',
    'tab\there',
    'multi\nline',
    'multi\nline\n',
    'trailing lines\n\n\n',
    '\n  indented first line',
    'Grüße, 你好 🙂',
    'x'.repeat(300),
  ])('writes the string %j so that it reads back exactly', (value) => {
    const { text } = render({ '4711': { Name: value, Type: [{ Lookup: value || 'x', EbaCode: value, IsDora: false }] } });

    expect(readBack(text).get('4711')).toEqual({ Name: value, Type: [{ Lookup: value || 'x', EbaCode: value, IsDora: false }] });
  });

  it('quotes the words YAML 1.1 reads as booleans, so that every tool reads a string', () => {
    const { text } = render({ '4711': { Name: 'yes', Comment: 'off', Description: 'maybe' } });

    expect(text).toContain('    Comment: "off"\n    Description: maybe\n    Name: "yes"\n');
  });

  it('writes timestamps plain, in UTC, as strings', () => {
    const { text } = render({ '4711': { ValidFrom: '2027-01-01T01:00:00+01:00', ValidTo: '2027-06-30T12:00:00.250Z' } });

    expect(text).toContain('    ValidFrom: 2027-01-01T00:00:00Z\n    ValidTo: 2027-06-30T12:00:00.250Z\n');
    expect(readBack(text).get('4711')).toEqual({ ValidFrom: '2027-01-01T00:00:00Z', ValidTo: '2027-06-30T12:00:00.250Z' });
  });

  it('writes only the set units of a duration, and an all-null duration as {}', () => {
    const { text } = render({ '4711': { SupplierNoticePeriod: { Days: 30, Hours: null, Minutes: 0 }, OrderingPartyNoticePeriod: { Days: null } } });

    expect(text).toContain('    OrderingPartyNoticePeriod: {}\n    SupplierNoticePeriod: { Days: 30, Minutes: 0 }\n');
  });

  it('leaves out a field the service holds as null, and says so', () => {
    const { text, notes } = render({ '4711': { Name: 'x', Comment: null, SupplierNoticePeriod: null, Company: null } });

    expect(readBack(text).get('4711')).toEqual({ Name: 'x' });
    expect(notes.map((note) => `${note.contractId} ${note.field}`)).toEqual(['4711 Comment', '4711 SupplierNoticePeriod', '4711 Company']);
    expect(notes[0]!.message).toMatch(/null in the service; left unmanaged/);
  });

  it('keeps the nulls a member may hold, drops the fields the model does not know, and says so', () => {
    const live = {
      Type: [{ Lookup: 'ICT', EbaCode: null, IsDora: true, Internal: 7 }],
      Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 5, OrganizationalUnit: { Id: null } } }],
    };

    const { text, notes } = render({ '4711': live });

    expect(readBack(text).get('4711')).toEqual({
      Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 5, OrganizationalUnit: { Id: null } } }],
      Type: [{ Lookup: 'ICT', EbaCode: null, IsDora: true }],
    });
    expect(notes.map((note) => note.field)).toEqual(['Type[0].Internal']);
  });

  it('leaves a collection unmanaged when the service holds a member without a non-nullable member field, so that the file validates', () => {
    const live = {
      Name: 'x',
      OrganizationalUnit: [
        { Id: 3, Name: 'FM' },
        { Id: 4, Name: null },
      ],
      Owner: [{ OwnerType: { Value: 1 }, User: { Id: 5 } }],
    };

    const { text, notes } = render({ '4711': live });

    expect(readBack(text).get('4711')).toEqual({ Name: 'x' });
    expect(notes.map((note) => `${note.field}: ${note.message}`)).toEqual([
      'OrganizationalUnit[1].Name: is null in the service; left out (a member field left out is not compared)',
      'OrganizationalUnit: has members without OrganizationalUnit[1].Name in the service; left unmanaged (a desired member must give every non-nullable member field)',
      'Owner: has members without Owner[0].OwnerType.Name in the service; left unmanaged (a desired member must give every non-nullable member field)',
    ]);
  });

  it('writes a file that plans to no op against what was read', () => {
    const live: Readonly<Record<string, unknown>> = { ...EVERY_FIELD, Comment: null, Company: [] };

    const { text } = render({ '4711': live });

    expect(diffContract(live as ContractFields, readBack(text).get('4711')!)).toEqual([]);
  });

  it('is deterministic: the same contracts in any key order give the same text, contracts in the order given', () => {
    const shuffled = Object.fromEntries(Object.entries(EVERY_FIELD).reverse());

    const first = render({ B: EVERY_FIELD, A: { Name: 'a' } });
    const second = render({ B: shuffled, A: { Name: 'a' } });

    expect(second.text).toBe(first.text);
    expect(Object.keys(parse(first.text).contracts)).toEqual(['B', 'A']);
  });

  it('writes a file with no contract as contracts: {}', () => {
    const { text } = render({});

    expect(text).toBe('# yaml-language-server: $schema=../../specs/contracts.schema.json\ntenant: acme\ncontracts: {}\n');
    expect(readBack(text).size).toBe(0);
  });

  it('keeps a value of the wrong kind, so that validation reports it', () => {
    const { text } = render({ '4711': { Area: 'two' } });

    const result = validateDesiredState([{ path: 'contracts/acme/imported.yaml', content: text }], CONFIG);

    expect(result.errors).toEqual([expect.objectContaining({ contractId: '4711', field: 'Area' })]);
  });
});
