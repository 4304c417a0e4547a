import { afterEach, describe, expect, it, vi } from 'vitest';
import { Parser } from 'yaml';
import type { Config } from '../../engine/config/index.ts';
import { parseDesiredFile, validateDesiredState, type DesiredFile } from '../../engine/desired/index.ts';
import { fastParseDesired } from '../../engine/desired/fast-parse.ts';
import { DEFAULT_YAML_LIMITS, type YamlLimits } from '../../engine/yaml/yaml-source.ts';

const CONFIG: Pick<Config, 'tenants'> = { tenants: { acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' } } } };

const VALID = [
  'tenant: acme',
  'contracts:',
  '  "4711":',
  '    Name: Cleaning',
  '    Description: "Office cleaning, twice a week"',
  '    Owner:',
  '      - OwnerType: { Name: Responsible, Value: 1 }',
  '        User: { Id: 100 }',
  '  C-2: { Name: Lease, Company: [{ Id: 1, RelationType: Supplier }] }',
  '',
].join('\n');

function problems(content: string | Uint8Array, limits?: YamlLimits): string[] {
  const { errors, warnings } = validateDesiredState([{ path: 'contracts/acme/a.yaml', content }], CONFIG, limits);
  return [...errors, ...warnings].map((d) => `${d.line}:${d.column}  ${d.field}  ${d.message}`);
}

describe('the fast parse path', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads a valid file without the yaml package, with the positions of the tenant and of each ContractId', () => {
    const parse = vi.spyOn(Parser.prototype, 'parse');

    const parsed = parseDesiredFile({ path: 'contracts/acme/a.yaml', content: VALID });

    expect(parse).not.toHaveBeenCalled();
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.tenantPosition).toEqual({ line: 1, column: 9 });
    expect(parsed.contractSet?.contracts.map((c) => [c.id, c.line, c.column])).toEqual([
      ['4711', 3, 3],
      ['C-2', 9, 3],
    ]);
  });

  it('reads a file that ends with an empty value without the yaml package', () => {
    const parse = vi.spyOn(Parser.prototype, 'parse');

    const parsed = parseDesiredFile({
      path: 'contracts/acme/a.yaml',
      content: 'tenant: acme\ncontracts:\n  "1":\n    Type:\n      - Lookup: ICT\n        IsDora: false\n        EbaCode:\n',
    });

    expect(parse).not.toHaveBeenCalled();
    expect(parsed.contractSet?.contracts.map((c) => c.fields)).toEqual([{ Type: [{ Lookup: 'ICT', IsDora: false, EbaCode: null }] }]);
  });

  it('hands a file with a problem to the yaml package, for its exact position', () => {
    const parse = vi.spyOn(Parser.prototype, 'parse');

    const found = problems(VALID.replace('Name: Lease', 'Name: 2'));

    expect(parse).toHaveBeenCalled();
    expect(found).toEqual(['9:16  Name  expected a string, got 2']);
  });

  it('reports cross-file problems at the recorded positions', () => {
    const files: DesiredFile[] = [
      { path: 'contracts/acme/a.yaml', content: VALID },
      { path: 'contracts/acme/b.yaml', content: 'tenant: acme\ncontracts:\n  C-9: {}\n  C-2: { Name: Again }\n' },
      { path: 'contracts/other/c.yaml', content: '# another tenant\ntenant:   "initech"\ncontracts: {}\n' },
    ];

    const { errors } = validateDesiredState(files, CONFIG);

    expect(errors.map((d) => `${d.file}:${d.line}:${d.column} ${d.code} ${d.field}`)).toEqual([
      'contracts/acme/b.yaml:4:3 duplicate-contract contracts.C-2',
      'contracts/other/c.yaml:2:11 unknown-tenant tenant',
    ]);
  });

  it.each([
    ['a number', '  0815: {}', '3:3  contracts.815  ContractId 0815 is read by YAML as 815; quote it: "0815"'],
    ['a merge key', '  <<: {}', '3:3  contracts["<<"]  ContractId << is read by YAML 1.1 tools as a merge key; quote it: "<<"'],
  ])('leaves a ContractId key that YAML reads as %s to the yaml package', (_, line, expected) => {
    const content = `tenant: acme\ncontracts:\n${line}\n`;

    expect(fastParseDesired(content, DEFAULT_YAML_LIMITS)).toBeUndefined();
    expect(problems(content)).toEqual([expected]);
  });
});

/** Each guard refuses a file that js-yaml, unguarded, would read. */
describe('the hostile-input guards on the fast path', () => {
  it('refuses a file over the size limit', () => {
    const limits = { ...DEFAULT_YAML_LIMITS, maxBytes: 100 };

    expect(fastParseDesired(VALID, limits)).toBeDefined();
    expect(problems(VALID, limits)).toEqual([`1:1    file is ${(VALID.length / 1024).toFixed(1)} KiB; the limit is 0.1 KiB`]);
  });

  it('refuses nesting deeper than the limit, counted as the yaml package counts it', () => {
    // Owner[0].OwnerType.Name and Owner[0].User.Id are 6 levels deep.
    const limits = { ...DEFAULT_YAML_LIMITS, maxDepth: 5 };

    expect(fastParseDesired(VALID, DEFAULT_YAML_LIMITS)).toBeDefined();
    expect(fastParseDesired(VALID, limits)).toBeUndefined();
    expect(problems(VALID, limits)).toEqual(['8:21    values are nested more than 5 levels deep']);
  });

  it('refuses deep nesting that js-yaml would read (its own limit is 100 levels)', () => {
    const deep = `tenant: acme\ncontracts:\n  "1": { Comment: ${'['.repeat(70)}x${']'.repeat(70)} }\n`;

    expect(fastParseDesired(deep, DEFAULT_YAML_LIMITS)).toBeUndefined();
    expect(problems(deep)).toEqual(['3:89    values are nested more than 64 levels deep']);
  });

  it('refuses an alias bomb', () => {
    const levels = ['x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `x${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const content = `tenant: acme\ncontracts:\n  "1":\n    Company:\n${levels.map((line) => `      - { ${line} }`).join('\n')}\n`;

    expect(fastParseDesired(content, DEFAULT_YAML_LIMITS)).toBeUndefined();
    expect(problems(content)).toEqual(['1:1    aliases expand too much (more than 100 times their size); refusing a possible alias bomb']);
  });

  it('refuses a second document', () => {
    const content = `${VALID}---\n${VALID}`;

    expect(fastParseDesired(VALID, DEFAULT_YAML_LIMITS)).toBeDefined();
    expect(problems(content)).toEqual(['10:1    a file holds one YAML document; found another']);
  });

  it.each([
    ['a ContractId', VALID.replace('C-2:', '"4711":'), '9:3    duplicate key "4711": each key may appear once in a map'],
    ['a field', VALID.replace('Name: Lease', 'Name: Lease, Name: Again'), '9:23    duplicate key Name: each key may appear once in a map'],
  ])('refuses a duplicate key: %s', (_, content, expected) => {
    expect(fastParseDesired(content, DEFAULT_YAML_LIMITS)).toBeUndefined();
    expect(problems(content)).toEqual([expected]);
  });

  it('refuses NUL bytes and invalid UTF-8 in an otherwise valid file', () => {
    const bytes = new TextEncoder().encode(VALID.replace('Cleaning', 'Clean#ing'));
    const at = bytes.indexOf('#'.charCodeAt(0));
    const withNul = bytes.slice();
    withNul[at] = 0x00;
    const notUtf8 = bytes.slice();
    notUtf8[at] = 0xff;

    expect(parseDesiredFile({ path: 'a.yaml', content: bytes }).contractSet?.contracts).toHaveLength(2);
    expect(problems(withNul)).toEqual(['1:1    file contains NUL bytes: it is binary, not YAML']);
    expect(problems(notUtf8)).toEqual(['1:1    file is not valid UTF-8 text']);
  });

  it('refuses a lone surrogate that js-yaml reads', () => {
    const content = VALID.replace('Name: Cleaning', 'Name: "Clean\\ud800ing"');

    expect(fastParseDesired(content, DEFAULT_YAML_LIMITS)?.value).toBeDefined();
    expect(problems(content)).toEqual(['4:11  Name  expected valid Unicode text, got a lone surrogate \\ud800 at character 6']);
  });

  it('reads a byte order mark as the yaml package does: dropped before the document, kept within it', () => {
    const bom = '\uFEFF';

    // At the text's start, and at the start of a line before the document (a CI failure's counterexample).
    expect(parseDesiredFile({ path: 'contracts/acme/a.yaml', content: `${bom}${VALID}` }).contractSet?.tenant).toBe('acme');
    expect(parseDesiredFile({ path: 'contracts/acme/a.yaml', content: `\n${bom}${VALID}` }).contractSet?.tenant).toBe('acme');
    expect(parseDesiredFile({ path: 'contracts/acme/a.yaml', content: `# contracts of acme\n${bom}${VALID}` }).contractSet?.tenant).toBe('acme');
    expect(fastParseDesired(`\n${bom}${VALID}`, DEFAULT_YAML_LIMITS)).toBeUndefined();
    // Within the document it is text: a key that starts with one is no known field.
    expect(problems(VALID.replace('tenant', `${bom}${bom}tenant`))).toEqual([
      '1:2    missing required field "tenant"',
      `1:2  ["${bom}tenant"]  unknown field "${bom}tenant" (did you mean "tenant"?)`,
    ]);
  });
});
