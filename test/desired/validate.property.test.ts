import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../engine/config/index.ts';
import { validateDesiredState } from '../../engine/desired/index.ts';
import { FIELD_NAMES } from '../../engine/model/index.ts';

const CONFIG: Pick<Config, 'tenants'> = { tenants: { acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' } } } };

// Pieces the fuzzer that found section 6's cases combined: ids, anchors, aliases, complex keys,
// escapes, flow and block collections.
const FRAGMENTS = [
  'tenant: acme\n',
  'contracts:\n',
  '  "4711":\n',
  '  "12345678901234567":\n',
  '  "12345678901234567890": ',
  '  0815: ',
  '    ',
  '  ',
  '- ',
  ': ',
  '? ',
  '[a, b]',
  '{ a: 1 }',
  '&a ',
  '*a',
  '&b ',
  '*b',
  '"\\ud800"',
  '"\\udfff\\ud83d"',
  '"\\ud83d\\ude00"',
  '{ ',
  ' }',
  '[',
  ']',
  ', ',
  '\n',
  'null',
  '2027-01-01T00:00:00Z',
  '12',
  '1e400',
  '"x"',
  '{ Id: 12, RelationType: Supplier }',
  '{ Days: 30 }',
  ...FIELD_NAMES.map((name) => `${name}: `),
];

const VALUES = [
  'x',
  '2',
  '12',
  'null',
  '"\\ud800"',
  '"a\\udc00"',
  '"\\ud83d\\ude00"',
  '*a',
  '&a x',
  '&a { Name: *a }',
  '[*a]',
  '2027-01-01T00:00:00Z',
  '{ Days: 30 }',
  '[{ Id: 1, RelationType: S }]',
  '[a, b]',
];
const IDS = [
  '"4711"',
  '"12345678901234567"',
  '"12345678901234567890"',
  '"99999999999999999999"',
  '0815',
  '4712',
  '&a "4713"',
  '*a',
  '? [a, b]\n  :',
  '? { a: 1 }\n  :',
  '"\\ud800"',
];

/** A desired-state file shaped like a real one, with mistakes in its ids, values and anchors. */
const contractFile = fc
  .array(
    fc.tuple(
      fc.constantFrom(...IDS),
      fc.option(fc.constantFrom('&a ', '&b '), { nil: '' }),
      fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES, 'Nmae'), fc.constantFrom(...VALUES)), { maxLength: 4 }),
    ),
    { maxLength: 5 },
  )
  .map((contracts) => {
    const lines = contracts.map(([id, anchor, fields]) => `  ${id} ${anchor}{ ${fields.map(([field, value]) => `${field}: ${value}`).join(', ')} }`);
    return `tenant: acme\ncontracts:\n${lines.join('\n')}\n`;
  });

const yamlish = fc.oneof(
  contractFile,
  fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 20 }).map((parts) => `tenant: acme\ncontracts:\n  "1":\n    ${parts.join('')}`),
  fc.string({ maxLength: 200, unit: 'binary' }),
);

describe('validateDesiredState on arbitrary YAML-ish input', () => {
  const printed: unknown[][] = [];
  beforeEach(() => {
    printed.length = 0;
    vi.spyOn(process, 'emitWarning').mockImplementation((...args: unknown[]) => void printed.push(args));
    vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void printed.push(args));
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void printed.push(args));
    vi.spyOn(process.stderr, 'write').mockImplementation((...args: unknown[]) => {
      printed.push(args);
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('never throws, never prints, and never returns a contract that is both valid and in error', () => {
    fc.assert(
      fc.property(yamlish, (content) => {
        printed.length = 0;

        const result = validateDesiredState([{ path: 'contracts/acme/a.yaml', content }], CONFIG);

        const inError = new Set(result.errors.map((d) => `${d.file}#${d.contractId}`));
        for (const set of result.contractSets) {
          for (const contract of set.contracts) {
            expect(inError.has(`${set.file}#${contract.id}`)).toBe(false);
            // Acyclic and plain JSON: the plan and the PATCH body are built from it.
            expect(() => JSON.stringify(contract.fields)).not.toThrow();
            expect(contract.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._~-]*$/);
          }
        }
        for (const d of [...result.errors, ...result.warnings]) expect(d.line).toBeGreaterThanOrEqual(1);
        expect(printed).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});
