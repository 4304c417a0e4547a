/** Issue 21, item 10: numbers JSON cannot carry exactly, and tags in place of plain maps, are errors at file:line. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/parse.ts';
import { parseDesiredFile, parseDesiredFileExactly } from '../../engine/desired/parse-file.ts';
import { configYaml } from '../helpers/files.ts';

function problems(content: string): string[] {
  const parsed = parseDesiredFile({ path: 'contracts/acme/a.yaml', content });
  // The fast path and the yaml package's path agree.
  expect(parseDesiredFileExactly({ path: 'contracts/acme/a.yaml', content }).diagnostics).toEqual(parsed.diagnostics);
  return parsed.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}  ${d.field}  ${d.message}`);
}

function contract(fields: string): string {
  return `tenant: acme\ncontracts:\n  "1":\n${fields}`;
}

describe('numbers', () => {
  it.each([
    [
      'an integer beyond 2^53 in a duration',
      '    SupplierNoticePeriod: { Days: 9007199254740993 }\n',
      '4:35  SupplierNoticePeriod.Days  expected a number <= 10675199, got 9007199254740992',
    ],
    [
      'an integer beyond 2^53',
      '    Area: 9007199254740993\n',
      '4:11  Area  expected a number between -9007199254740991 and 9007199254740991 (larger ones lose precision)',
    ],
    [
      'a hexadecimal integer beyond 2^53',
      '    Category: 0x20000000000001\n',
      '4:15  Category  expected a number between -9007199254740991 and 9007199254740991 (larger ones lose precision)',
    ],
    ['underflow to 0 in an integer field', '    Area: 1e-400\n', '4:11  contracts.1.Area  1e-400 is too small for a JSON number; it would be sent as 0'],
    [
      'underflow to 0 in a number field',
      '    AnnualExpensesAmount: 0.5e-330\n',
      '4:27  contracts.1.AnnualExpensesAmount  0.5e-330 is too small for a JSON number; it would be sent as 0',
    ],
    ['overflow', '    AnnualExpensesAmount: 1e400\n', '4:27  AnnualExpensesAmount  expected a finite number, got Infinity'],
    [
      'a duration beyond any sane bound',
      '    SupplierNoticePeriod: { Days: 1e26 }\n',
      '4:35  SupplierNoticePeriod.Days  expected a number <= 10675199, got 1e+26',
    ],
  ])('%s', (_, fields, expected) => {
    const found = problems(contract(fields));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`contracts/acme/a.yaml:${expected}`);
  });

  it('ordinary numbers stay fine: 0, 0.0, -0, 1e3, 1.5, 2^53 - 1, a long duration', () => {
    for (const fields of [
      '    Area: 0\n',
      '    AnnualExpensesAmount: 0.0\n',
      '    Area: -0\n',
      '    Area: 1e3\n',
      '    AnnualExpensesAmount: 1.5\n',
      '    Area: 9007199254740991\n',
      '    SupplierNoticePeriod: { Days: 3650, Hours: 12 }\n',
    ]) {
      expect(problems(contract(fields))).toEqual([]);
    }
  });

  it('the config too', () => {
    const { diagnostics } = parseConfig('contract-sync.yaml', configYaml(['acme'], 'rate: { requestsPerSecond: 1e-400 }\n'));
    expect(diagnostics.map((d) => `${d.line}:${d.column} ${d.code}`)).toContain('7:28 inexact-number');
  });
});

describe('tags and shapes in place of plain maps', () => {
  it.each([
    ['contracts: !!omap [a: 1]', '2:19  contracts  unexpected YAML tag !!omap'],
    ['contracts: !!set { a }', '2:18  contracts  unexpected YAML tag !!set'],
    ['contracts: !!pairs [a: 1]', '2:20  contracts  unexpected YAML tag !!pairs'],
    ['contracts:\n  "1": { Name: !!binary aGVsbG8= }', '3:25  contracts.1.Name  unexpected YAML tag !!binary'],
    ['contracts: !custom { "1": { Name: x } }', '2:20  contracts  unexpected YAML tag !custom'],
  ])('%s', (text, expected) => {
    const found = problems(`tenant: acme\n${text}\n`).filter((line) => line.includes('unexpected YAML tag'));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`contracts/acme/a.yaml:${expected}`);
  });

  it.each([
    ['contracts: [1, 2]', 'contracts'],
    ['contracts: 5', 'contracts'],
  ])('%s is an error, never "0 valid contracts"', (text, field) => {
    const parsed = parseDesiredFile({ path: 'contracts/acme/a.yaml', content: `tenant: acme\n${text}\n` });
    expect(parsed.diagnostics.some((d) => d.severity === 'error' && d.field === field)).toBe(true);
    expect(parsed.contractSet).toBeUndefined();
  });

  it('core tags that change nothing are fine', () => {
    expect(problems(contract('    Name: !!str 2027\n    Area: !!int 5\n'))).toEqual([]);
  });
});
