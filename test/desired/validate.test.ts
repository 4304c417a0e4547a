import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../engine/config/index.ts';
import { validateDesiredState, type DesiredFile } from '../../engine/desired/index.ts';

const CONFIG: Pick<Config, 'tenants'> = {
  tenants: {
    acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' }, paths: ['contracts/acme/**'] },
    globex: { clientId: 'cs-globex', clientSecret: { env: 'GLOBEX_SECRET' } },
  },
};

/** A file for tenant acme whose contract "4711" has `body` (indented to sit under the id). */
function contractFile(body: string): DesiredFile {
  const indented = body
    .trim()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return { path: 'contracts/acme/a.yaml', content: `tenant: acme\ncontracts:\n  "4711":\n${indented}\n` };
}

function problems(files: readonly DesiredFile[]) {
  const { errors, warnings } = validateDesiredState(files, CONFIG);
  return [...errors, ...warnings].map((d) => `${d.file}:${d.line}:${d.column}  ${d.field}  ${d.message}`);
}

describe('validateDesiredState: one problem in one contract', () => {
  // Line 4 is the first line of the contract body.
  it.each([
    ['wrong type', 'Name: 2027', '4:11  Name  expected a string, got 2027'],
    ['integer written as text', 'Area: 12a', '4:11  Area  expected an integer, got "12a"'],
    ['fractional integer', 'Category: 1.5', '4:15  Category  expected an integer, got 1.5'],
    ['null where not nullable', 'Comment: null', '4:14  Comment  expected a string, got null'],
    ['non-finite number', 'AnnualExpensesAmount: .inf', '4:27  AnnualExpensesAmount  expected a finite number, got Infinity'],
    ['NaN', 'AnnualExpensesAmount: .nan', '4:27  AnnualExpensesAmount  expected a finite number, got NaN'],
    [
      'unsafe integer',
      'AnnualExpensesCurrencyId: 9007199254740993',
      '4:31  AnnualExpensesCurrencyId  expected a number between -9007199254740991 and 9007199254740991 (larger ones lose precision), got 9007199254740992',
    ],
    ['unknown field with a suggestion', 'Nmae: x', '4:5  Nmae  unknown field "Nmae" (did you mean "Name"?)'],
    ['unknown field', 'Colour: red', '4:5  Colour  unknown field "Colour"'],
    ['__proto__ key', '__proto__: { polluted: true }', '4:5  __proto__  unknown field "__proto__"'],
    [
      'date-only timestamp',
      'ValidFrom: 2027-01-01',
      '4:16  ValidFrom  expected an ISO 8601 date-time in UTC like 2027-01-01T00:00:00Z, got "2027-01-01" (a date without a time)',
    ],
    [
      'non-UTC timestamp',
      'ValidTo: 2027-01-01T00:00:00+01:00',
      '4:14  ValidTo  expected an ISO 8601 date-time in UTC like 2027-01-01T00:00:00Z, got "2027-01-01T00:00:00+01:00" (not in UTC: use Z, not an offset)',
    ],
    [
      'impossible date',
      'ValidTo: 2027-02-30T00:00:00Z',
      '4:14  ValidTo  expected an ISO 8601 date-time in UTC like 2027-01-01T00:00:00Z, got "2027-02-30T00:00:00Z" (not a real date or time)',
    ],
    [
      'ValidFrom after ValidTo',
      'ValidFrom: 2028-01-01T00:00:00Z\nValidTo: 2027-01-01T00:00:00Z',
      '5:14  ValidTo  ValidTo 2027-01-01T00:00:00Z is before ValidFrom 2028-01-01T00:00:00Z',
    ],
    ['unknown duration unit', 'SupplierNoticePeriod: { Days: 30, Weeks: 2 }', '4:39  SupplierNoticePeriod.Weeks  unknown field "Weeks"'],
    ['duration as a number', 'SupplierNoticePeriod: 30', '4:27  SupplierNoticePeriod  expected a map, got 30'],
    [
      'member field of the wrong type',
      'Company:\n  - { Id: 12, RelationType: S }\n  - { Id: "12a", RelationType: S }',
      '6:15  Company[1].Id  expected an integer, got "12a"',
    ],
    [
      'member without its identity',
      'Company:\n  - { RelationType: Client }',
      '5:9  Company[0]  missing member field "Id": every Company member gives Id, RelationType (only nullable fields may be left out)',
    ],
    [
      'nested identity missing',
      'Owner:\n  - { OwnerType: { Name: R }, User: { Id: 1 } }',
      '5:22  Owner[0].OwnerType  missing member field "Value": every Owner member gives OwnerType.Name, OwnerType.Value, User.Id (only nullable fields may be left out)',
    ],
    ['boolean written as yes', 'Type:\n  - { Lookup: ICT, IsDora: yes }', '5:32  Type[0].IsDora  expected true or false, got "yes"'],
    [
      'duplicate member identity',
      'Company:\n  - { Id: 12, RelationType: Supplier }\n  - { Id: 12.0, RelationType: Supplier }',
      '6:9  Company[1]  same identity (Id 12, RelationType "Supplier") as Company[0]; each member may appear once',
    ],
    [
      'duplicate member identity, nested key',
      'Owner:\n  - { OwnerType: { Value: 1, Name: X }, User: { Id: 5 } }\n  - { OwnerType: { Value: 1, Name: X }, User: { Id: 5, Name: Y } }',
      '6:9  Owner[1]  same identity (OwnerType.Value 1, User.Id 5) as Owner[0]; each member may appear once',
    ],
    ['collection as a map', 'Company: { Id: 12 }', '4:14  Company  expected a list, got a map'],
    [
      'an incomplete OrganizationalUnit member',
      'OrganizationalUnit:\n  - { Id: 4 }',
      '5:9  OrganizationalUnit[0]  missing member field "Name": every OrganizationalUnit member gives Id, Name (only nullable fields may be left out)',
    ],
    [
      'an incomplete Owner member',
      'Owner:\n  - { OwnerType: { Value: 1 }, User: { Id: 501 } }',
      '5:22  Owner[0].OwnerType  missing member field "Name": every Owner member gives OwnerType.Name, OwnerType.Value, User.Id (only nullable fields may be left out)',
    ],
    [
      'an incomplete Type member',
      'Type:\n  - { Lookup: ICT, EbaCode: null }',
      '5:9  Type[0]  missing member field "IsDora": every Type member gives Lookup, IsDora (only nullable fields may be left out)',
    ],
  ])('%s', (_, body, expected) => {
    expect(problems([contractFile(body)])).toEqual([`contracts/acme/a.yaml:${expected}`]);
  });

  it('accepts null where the model says nullable', () => {
    expect(problems([contractFile('Type:\n  - { Lookup: ICT, EbaCode: null, IsDora: false }\nSupplierNoticePeriod: { Days: null, Hours: 4 }')])).toEqual([]);
  });

  it('keeps the valid contracts of a file with an invalid one', () => {
    const file: DesiredFile = {
      path: 'contracts/acme/a.yaml',
      content: 'tenant: acme\ncontracts:\n  "1": { Name: ok }\n  "2": { Name: 2 }\n',
    };

    const result = validateDesiredState([file], CONFIG);

    expect(result.errors).toHaveLength(1);
    expect(result.contractSets[0]!.contracts.map((c) => [c.id, c.line, c.column])).toEqual([['1', 3, 3]]);
  });
});

describe('validateDesiredState: file shape', () => {
  it.each([
    ['missing tenant', 'contracts: {}\n', '1:1    missing required field "tenant"'],
    ['unknown top-level key', 'tenant: acme\ncontracts: {}\ncontract: {}\n', '3:1  contract  unknown field "contract" (did you mean "contracts"?)'],
    ['contracts as a list', 'tenant: acme\ncontracts: []\n', '2:12  contracts  expected a map, got a list'],
    ['a list at the top', '- tenant: acme\n', '1:1    expected a map with "tenant" and "contracts", got a list'],
    [
      'invalid ContractId',
      'tenant: acme\ncontracts:\n  " a": {}\n',
      '3:3  contracts[" a"]  invalid name " a": a ContractId is non-empty, at most 256 characters, without control, invisible or bidirectional characters or leading or trailing white space',
    ],
    ['ContractId read as a number', 'tenant: acme\ncontracts:\n  0815: {}\n', '3:3  contracts.815  ContractId 0815 is read by YAML as 815; quote it: "0815"'],
    ['duplicate ContractId in a file', 'tenant: acme\ncontracts:\n  "1": {}\n  "1": {}\n', '4:3    duplicate key "1": each key may appear once in a map'],
    [
      'YAML syntax error',
      'tenant: acme\ncontracts:\n  "1": { Name: [ }\n',
      '3:18    invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] (and 1 more error after it)',
    ],
    ['a second document', 'tenant: acme\ncontracts: {}\n---\ntenant: acme\n', '3:1    a file holds one YAML document; found another'],
    [
      'a quote opened on line 4 and never closed: said at the quote, not at the end of the file',
      'tenant: acme\ncontracts:\n  c4711:\n    Name: "Facility cleaning\n    Category: 3\n',
      '4:11    invalid YAML: Missing closing "quote: the quote opened here is never closed (a quoted value runs on, across lines, to its closing quote)',
    ],
    [
      'a single quote never closed, other contracts after it',
      "tenant: acme\ncontracts:\n  c4711:\n    Name: 'Facility cleaning\n    Category: 3\n  c4712:\n    Name: ok\n",
      "4:11    invalid YAML: Missing closing 'quote: the quote opened here is never closed (a quoted value runs on, across lines, to its closing quote)",
    ],
    [
      'a line indented deeper than the key above it: said at that line, not the one above',
      'tenant: acme\ncontracts:\n  c4711:\n    Name: Cleaning\n      Category: 3\n',
      '5:7    invalid YAML: this line is indented deeper than line 4, whose key has its value already: indent it as the keys beside it',
    ],
  ])('%s', (_, content, expected) => {
    expect(problems([{ path: 'contracts/acme/a.yaml', content }])).toEqual([`contracts/acme/a.yaml:${expected}`]);
  });
});

describe('validateDesiredState: across files', () => {
  it('reports a ContractId declared twice for one tenant, with the first place', () => {
    const files = [
      { path: 'contracts/acme/a.yaml', content: 'tenant: acme\ncontracts:\n  "4711": { Name: A }\n' },
      { path: 'contracts/acme/b.yaml', content: 'tenant: acme\ncontracts:\n  "9": {}\n  "4711": { Name: B }\n' },
    ];

    expect(problems(files)).toEqual([
      'contracts/acme/b.yaml:4:3  contracts.4711  contract 4711 of tenant "acme" is already declared at contracts/acme/a.yaml:3:3',
    ]);
  });

  it('allows the same ContractId for two tenants', () => {
    const files = [
      { path: 'contracts/acme/a.yaml', content: 'tenant: acme\ncontracts:\n  "4711": {}\n' },
      { path: 'contracts/globex/a.yaml', content: 'tenant: globex\ncontracts:\n  "4711": {}\n' },
    ];

    expect(problems(files)).toEqual([]);
  });

  it('reports a tenant the config does not know', () => {
    const files = [{ path: 'contracts/acme/a.yaml', content: 'tenant: initech\ncontracts: {}\n' }];

    expect(problems(files)).toEqual(['contracts/acme/a.yaml:1:9  tenant  tenant "initech" is not configured in contract-sync.yaml (known: acme, globex)']);
  });

  it("reports a file outside the tenant's paths", () => {
    const files = [{ path: 'contracts/globex/a.yaml', content: 'tenant: acme\ncontracts: {}\n' }];

    expect(problems(files)).toEqual([
      'contracts/globex/a.yaml:1:9  tenant  this file may not declare tenant "acme": it is outside the tenant\'s paths (tenants.acme.paths in the config: contracts/acme/**)',
    ]);
  });
});

describe('validateDesiredState: hostile input', () => {
  function only(content: string | Uint8Array) {
    return problems([{ path: 'contracts/acme/x.yaml', content }]);
  }

  it('warns about an empty file', () => {
    expect(only('')).toEqual(['contracts/acme/x.yaml:1:1    file is empty: it declares no tenant and no contracts']);
    expect(only('# only a comment\n')).toHaveLength(1);
  });

  it('refuses an alias bomb quickly', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );

    expect(only(`${levels.join('\n')}\n`)).toEqual([
      'contracts/acme/x.yaml:1:1    aliases expand too much (more than 100 times their size); refusing a possible alias bomb',
    ]);
  });

  it('refuses a file over the size limit without parsing it', () => {
    const big = `tenant: acme\ncontracts:\n  "1":\n    Description: "${'x'.repeat(50 * 1024 * 1024)}"\n`;

    expect(only(big)).toEqual(['contracts/acme/x.yaml:1:1    file is 50.0 MiB; the limit is 16.0 MiB']);
  });

  it.each([
    ['flow', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['block', Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n'],
    ['compact sequences', `${'- '.repeat(10_000)}x\n`],
  ])('refuses deeply nested %s values without crashing', (_, content) => {
    const [problem] = only(content);

    expect(problem).toMatch(/^contracts\/acme\/x\.yaml:\d+:\d+ {4}values are nested more than 64 levels deep$/);
  });

  it('refuses binary garbage', () => {
    expect(only(new Uint8Array([0x00, 0x01, 0x02, 0x74, 0x65]))).toEqual(['contracts/acme/x.yaml:1:1    file contains NUL bytes: it is binary, not YAML']);
    expect(only(new Uint8Array([0xff, 0xfe, 0xfd, 0x41]))).toEqual(['contracts/acme/x.yaml:1:1    file is not valid UTF-8 text']);
  });

  it('never pollutes prototypes', () => {
    const content = 'tenant: acme\n__proto__: { polluted: true }\ncontracts:\n  "1": { constructor: { prototype: { polluted: true } } }\n';

    const found = only(content);

    expect(found).toEqual([
      'contracts/acme/x.yaml:2:1  __proto__  unknown field "__proto__"',
      'contracts/acme/x.yaml:4:10  constructor  unknown field "constructor"',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('validateDesiredState: cases found by fuzzing', () => {
  /** Every warning the process could print while `act` runs: process.emitWarning, console.warn/error, stderr. */
  function printedWhile<T>(act: () => T): { result: T; printed: unknown[][] } {
    const printed: unknown[][] = [];
    const spies = [
      vi.spyOn(process, 'emitWarning').mockImplementation((...args: unknown[]) => void printed.push(args)),
      vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void printed.push(args)),
      vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void printed.push(args)),
      vi.spyOn(process.stderr, 'write').mockImplementation((...args: unknown[]) => {
        printed.push(args);
        return true;
      }),
    ];
    try {
      return { result: act(), printed };
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  }

  it.each([
    ['17 digits', '12345678901234567'],
    ['20 digits', '12345678901234567890'],
  ])('a quoted ContractId of %s: its error is at its field, and the contract is not also valid', (_, id) => {
    const content = `tenant: acme\ncontracts:\n  "4711": { Name: ok }\n  "${id}": { Name: 2 }\n`;

    const result = validateDesiredState([{ path: 'contracts/acme/a.yaml', content }], CONFIG);

    const column = 2 + id.length + 2 + ': { Name: '.length + 1;
    expect(result.errors.map((d) => [`${d.line}:${d.column}`, d.field, d.contractId, d.message])).toEqual([
      [`4:${column}`, 'Name', id, 'expected a string, got 2'],
    ]);
    expect(result.contractSets[0]!.contracts.map((c) => c.id)).toEqual(['4711']);
  });

  it('keeps a valid quoted ContractId of 20 digits exactly as written', () => {
    const content = 'tenant: acme\ncontracts:\n  "12345678901234567890": { Name: ok }\n';

    const result = validateDesiredState([{ path: 'contracts/acme/a.yaml', content }], CONFIG);

    expect(result.errors).toEqual([]);
    expect(result.contractSets[0]!.contracts.map((c) => [c.id, c.line, c.column])).toEqual([['12345678901234567890', 3, 3]]);
  });

  it.each([
    ['a list', 'tenant: acme\ncontracts:\n  ? [a, b]\n  : { Name: x }\n', '3:5  contracts  a map key must be a plain name or number, got a list'],
    ['a map', 'tenant: acme\ncontracts:\n  "1":\n    ? { a: 1 }\n    : x\n', '4:7  contracts.1  a map key must be a plain name or number, got a map'],
    [
      'an alias to a list',
      'tenant: acme\nx: &k [a]\ncontracts:\n  ? *k\n  : { Name: x }\n',
      '4:5  contracts  a map key must be a plain name or number, got a list',
    ],
  ])('a complex key (%s) is a clear error, and the yaml package prints nothing', (_, content, expected) => {
    const { result, printed } = printedWhile(() => problems([{ path: 'contracts/acme/a.yaml', content }]));

    expect(result).toEqual([`contracts/acme/a.yaml:${expected}`]);
    expect(printed).toEqual([]);
  });

  it.each([
    [
      'the contract itself',
      'tenant: acme\ncontracts:\n  "1": &a { Name: x, Comment: *a }\n',
      '3:31  contracts.1.Comment  alias *a is inside the value it names: circular values are not allowed',
    ],
    [
      'a member',
      'tenant: acme\ncontracts:\n  "1":\n    Company: &c\n      - { Id: 1, RelationType: S }\n      - *c\n',
      '6:9  contracts.1.Company[1]  alias *c is inside the value it names: circular values are not allowed',
    ],
    [
      'the whole file',
      '&f\ntenant: acme\ncontracts: { "1": { Comment: *f } }\n',
      '3:30  contracts.1.Comment  alias *f is inside the value it names: circular values are not allowed',
    ],
  ])('an alias to %s that contains it is an error', (_, content, expected) => {
    expect(problems([{ path: 'contracts/acme/a.yaml', content }])).toEqual([`contracts/acme/a.yaml:${expected}`]);
  });

  it('accepts an alias to a value that does not contain it', () => {
    const content = 'tenant: acme\ncontracts:\n  "1": { Company: [&m { Id: 1, RelationType: S }] }\n  "2": { Company: [*m] }\n';

    const result = validateDesiredState([{ path: 'contracts/acme/a.yaml', content }], CONFIG);

    expect(result.errors).toEqual([]);
    expect(result.contractSets[0]!.contracts.map((c) => c.fields.Company)).toEqual([[{ Id: 1, RelationType: 'S' }], [{ Id: 1, RelationType: 'S' }]]);
  });

  it.each([
    ['a high surrogate', 'Name: "\\ud800"', '4:11  Name  expected valid Unicode text, got a lone surrogate \\ud800 at character 1'],
    ['a low surrogate after text', 'Description: "ab\\udfff"', '4:18  Description  expected valid Unicode text, got a lone surrogate \\udfff at character 3'],
    [
      'a member field',
      'Company:\n  - { Id: 1, RelationType: "x\\udc00y" }',
      '5:32  Company[0].RelationType  expected valid Unicode text, got a lone surrogate \\udc00 at character 2',
    ],
    ['reversed pair', 'Name: "\\udc00\\ud800"', '4:11  Name  expected valid Unicode text, got a lone surrogate \\udc00 at character 1'],
  ])('refuses a string with %s, naming the field', (_, body, expected) => {
    const file = contractFile(body);

    const result = validateDesiredState([file], CONFIG);

    expect(problems([file])).toEqual([`contracts/acme/a.yaml:${expected}`]);
    expect(result.contractSets[0]!.contracts).toEqual([]);
  });

  it('accepts a surrogate pair (a character outside the BMP)', () => {
    expect(problems([contractFile('Name: "\\ud83d\\ude00 cleaning"')])).toEqual([]);
  });
});
