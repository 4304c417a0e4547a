import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastParseDesired } from '../../engine/desired/fast-parse.ts';
import { parseDesiredFile, parseDesiredFileExactly } from '../../engine/desired/parse-file.ts';
import { DEFAULT_YAML_LIMITS, parseYamlSource, positionOf } from '../../engine/yaml/yaml-source.ts';
import { blockText, DOCUMENT_END, DOCUMENT_START, edited, map, odd, render, scalar, seq, spaced, type Yaml } from '../helpers/yaml-arbitraries.ts';

const WORDS = ['cleaning', 'security', 'Supplier', 'Client', 'ICT', 'lease', 'Unit 4', 'x', 'Contract 12: lease'];

const word = fc.constantFrom(...WORDS);
const quoted = word.chain((w) => fc.constantFrom(w, `"${w}"`, `'${w}'`));
const stringValue = scalar(fc.oneof({ weight: 4, arbitrary: quoted }, { weight: 1, arbitrary: odd }));
const intValue = scalar(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 1000 }).map(String) }, { weight: 1, arbitrary: odd }));
const amount = scalar(
  fc.oneof({ weight: 4, arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true }).map((n) => String(Math.round(n * 100) / 100)) }, { weight: 1, arbitrary: odd }),
);
const timestamp = scalar(
  fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 2020, max: 2030 }).map((year) => `${year}-01-01T00:00:00Z`) }, { weight: 1, arbitrary: odd }),
);
const style = fc.boolean();
const company = map(style, { Id: intValue, RelationType: stringValue });
const owner = map(style, { OwnerType: map(style, { Name: stringValue, Value: intValue }), User: map(style, { Id: intValue, Email: stringValue }) });
const type = map(style, {
  Lookup: stringValue,
  EbaCode: scalar(fc.constantFrom('null', '~', '', 'E1')),
  IsDora: scalar(fc.constantFrom('true', 'false', 'yes', 'True')),
});
const contract = map(style, {
  Name: stringValue,
  Description: fc.oneof(stringValue, blockText),
  AnnualExpensesAmount: amount,
  AnnualExpensesCurrencyId: intValue,
  Category: intValue,
  ValidFrom: timestamp,
  ValidTo: timestamp,
  SupplierNoticePeriod: map(style, { Days: intValue }),
  Company: seq(company),
  Owner: seq(owner),
  Type: seq(type),
  Nmae: stringValue,
});
const contractId = fc.oneof(
  fc.nat(30).map((n) => `C-${n}`),
  fc.constantFrom('"4711"', "'4712'", '4713', '0815', '"0815"', 'x1', '"x1"', '12345678901234567890', 'C-1', 'null', '"a/b"', '__proto__', '<<'),
);

const realisticFile = fc
  .record({
    tenant: fc.constantFrom('acme', '"acme"', "'acme'", 'acme # the tenant', '12', '~'),
    contracts: fc.array(fc.tuple(contractId, contract), { maxLength: 5 }),
    flowContracts: fc.boolean(),
    comment: fc.boolean(),
    start: DOCUMENT_START,
    end: DOCUMENT_END,
    crlf: fc.boolean(),
  })
  .map(({ tenant, contracts, flowContracts, comment, start, end, crlf }) => {
    const entries: Yaml = { kind: 'map', flow: flowContracts, entries: contracts };
    const body = contracts.length === 0 ? ' {}' : spaced(render(entries, 0));
    const text = `${start}tenant: ${tenant}\n${comment ? '# contracts follow\n' : ''}contracts:${body}${end}`;
    return crlf ? text.replace(/\n/g, '\r\n') : text;
  });

/** Realistic files with an edit at a random place. */
const editedFile = edited(realisticFile);

describe('the fast parse path against the yaml package', () => {
  it('gives the same values, positions and diagnostics as the yaml package, and takes most realistic files', () => {
    let vouched = 0;
    let valid = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: realisticFile }, { weight: 2, arbitrary: editedFile }), (content) => {
        runs += 1;
        const file = { path: 'contracts/acme/a.yaml', content };

        const result = parseDesiredFile(file);
        const exact = parseDesiredFileExactly(file);
        const fast = fastParseDesired(content, DEFAULT_YAML_LIMITS);

        expect(result).toEqual(exact);
        if (fast === undefined) return;
        vouched += 1;
        if (result.contractSet && result.diagnostics.length === 0) valid += 1;
        // What the fast path vouches for, the yaml package reads, to the same value and positions.
        const parsed = parseYamlSource(file.path, content);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(fast.value).toEqual(parsed.value);
        for (const [id, position] of fast.contractPositions) expect(position).toEqual(positionOf(parsed.source, ['contracts', id], true));
        if (typeof fast.value.tenant === 'string') expect(fast.tenantPosition).toEqual(positionOf(parsed.source, ['tenant']));
      }),
      { numRuns: 250 },
    );

    // Not vacuous: many inputs take the fast path, and many of those are valid files.
    expect(vouched).toBeGreaterThan(runs / 10);
    expect(valid).toBeGreaterThan(runs / 100); // about 6 % in practice
  }, 120_000);
});
