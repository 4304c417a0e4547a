import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastParseDesired } from '../../engine/desired/fast-parse.ts';
import { parseDesiredFile, parseDesiredFileExactly } from '../../engine/desired/parse-file.ts';
import { DEFAULT_YAML_LIMITS, parseYamlSource, positionOf } from '../../engine/yaml-source.ts';

/** A YAML node to render with a chosen style. */
type Yaml =
  | { readonly kind: 'scalar'; readonly text: string }
  | { readonly kind: 'block'; readonly header: string; readonly lines: readonly string[] }
  | { readonly kind: 'map'; readonly flow: boolean; readonly entries: readonly (readonly [string, Yaml])[] }
  | { readonly kind: 'seq'; readonly flow: boolean; readonly items: readonly Yaml[] };

// Scalars on which YAML 1.1, YAML 1.2 and the two parsers could disagree, quoted and not.
const ODD_SCALARS = [
  'yes', 'no', 'on', 'off', 'y', 'n', '~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'FALSE',
  '.inf', '-.inf', '+.inf', '.Inf', '.NaN', '.nan', '.NAN', '0o17', '0O17', '0x1F', '0X1F', '-0x1F', '017', '0815', '09', '0b101',
  '1e3', '1E3', '1e400', '-1e400', '1.5e-3', '.5', '1.', '-0', '+0', '-0.0', '+12', '1_000', '12:30', '12:30:00', '1,5',
  '2027-01-01', '2027-01-01T00:00:00Z', '2027-01-01 00:00:00', '123456789012345678901234567890', '9007199254740993', '3.14159',
  '"12"', "'12'", '"0815"', '""', "''", '"yes"', "'~'", '"\\t"', '"a\\tb"', '"\\u00e9t\\u00e9"', '"\\ud83d\\ude00"', "'it''s'",
  '"\\x41"', '"\\"q\\""', '"\\\\"', 'a b c', 'a #b', 'a#b', 'é', '"\\0"', '-a', '?a', ':a', 'a:b', '"a: b"', "'#x'", '"\\ud800"',
];
const WORDS = ['cleaning', 'security', 'Supplier', 'Client', 'ICT', 'lease', 'Unit 4', 'x', 'Contract 12: lease'];

function scalar(texts: fc.Arbitrary<string>): fc.Arbitrary<Yaml> {
  return texts.map((text) => ({ kind: 'scalar', text }));
}
const word = fc.constantFrom(...WORDS);
const quoted = word.chain((w) => fc.constantFrom(w, `"${w}"`, `'${w}'`));
const odd = fc.constantFrom(...ODD_SCALARS);
const stringValue = scalar(fc.oneof({ weight: 4, arbitrary: quoted }, { weight: 1, arbitrary: odd }));
const intValue = scalar(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 1000 }).map(String) }, { weight: 1, arbitrary: odd }));
const amount = scalar(fc.oneof({ weight: 4, arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true }).map((n) => String(Math.round(n * 100) / 100)) }, { weight: 1, arbitrary: odd }));
const timestamp = scalar(
  fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 2020, max: 2030 }).map((year) => `${year}-01-01T00:00:00Z`) }, { weight: 1, arbitrary: odd }),
);
const blockText: fc.Arbitrary<Yaml> = fc.record({
  header: fc.constantFrom('|', '|-', '|+', '>', '>-', '>+', '|2'),
  lines: fc.array(fc.constantFrom('line one', 'line two: with colon', '  more indented', '', '# not a comment', 'x'), { minLength: 1, maxLength: 4 }),
}).map(({ header, lines }) => ({ kind: 'block', header, lines }));

function map(flow: fc.Arbitrary<boolean>, entries: Record<string, fc.Arbitrary<Yaml>>): fc.Arbitrary<Yaml> {
  return fc.tuple(flow, fc.record(entries, { requiredKeys: [] })).map(([isFlow, record]) => ({
    kind: 'map',
    flow: isFlow,
    entries: Object.entries(record).filter((entry): entry is [string, Yaml] => entry[1] !== undefined),
  }));
}
const style = fc.boolean();
const company = map(style, { Id: intValue, RelationType: stringValue });
const owner = map(style, { OwnerType: map(style, { Name: stringValue, Value: intValue }), User: map(style, { Id: intValue, Email: stringValue }) });
const type = map(style, { Lookup: stringValue, EbaCode: scalar(fc.constantFrom('null', '~', '', 'E1')), IsDora: scalar(fc.constantFrom('true', 'false', 'yes', 'True')) });
function seq(item: fc.Arbitrary<Yaml>): fc.Arbitrary<Yaml> {
  return fc.tuple(style, fc.array(item, { maxLength: 3 })).map(([flow, items]) => ({ kind: 'seq', flow, items }));
}

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

/** Renders `node` as the value after `key:` (or `- `) of a line indented by `indent`. */
function render(node: Yaml, indent: number, inFlow = false): string {
  const pad = ' '.repeat(indent + 2);
  switch (node.kind) {
    case 'scalar':
      return node.text;
    case 'block':
      if (inFlow) return '"block"';
      return `${node.header}\n${node.lines.map((line) => (line === '' ? '' : `${pad}${line}`)).join('\n')}`;
    case 'map':
      if (node.flow || inFlow || node.entries.length === 0) return `{ ${node.entries.map(([key, value]) => `${key}: ${render(value, indent, true)}`).join(', ')} }`;
      return `\n${node.entries.map(([key, value]) => `${pad}${key}:${spaced(render(value, indent + 2))}`).join('\n')}`;
    case 'seq':
      if (node.flow || inFlow || node.items.length === 0) return `[${node.items.map((item) => render(item, indent, true)).join(', ')}]`;
      return `\n${node.items.map((item) => `${pad}-${spaced(render(item, indent + 2))}`).join('\n')}`;
  }
}

function spaced(rendered: string): string {
  return rendered.startsWith('\n') ? rendered : ` ${rendered}`;
}

const realisticFile = fc
  .record({
    tenant: fc.constantFrom('acme', '"acme"', "'acme'", 'acme # the tenant', '12', '~'),
    contracts: fc.array(fc.tuple(contractId, contract), { maxLength: 5 }),
    flowContracts: fc.boolean(),
    comment: fc.boolean(),
    start: fc.constantFrom('', '---\n', '# header\n', '%YAML 1.2\n---\n', '\uFEFF'),
    end: fc.constantFrom('\n', '\n...\n', '\n# end\n', ''),
    crlf: fc.boolean(),
  })
  .map(({ tenant, contracts, flowContracts, comment, start, end, crlf }) => {
    const entries: Yaml = { kind: 'map', flow: flowContracts, entries: contracts };
    const body = contracts.length === 0 ? ' {}' : spaced(render(entries, 0));
    const text = `${start}tenant: ${tenant}\n${comment ? '# contracts follow\n' : ''}contracts:${body}${end}`;
    return crlf ? text.replace(/\n/g, '\r\n') : text;
  });

/** Realistic files with an edit at a random place: anchors, aliases, tags, merge keys, flow breaks, tabs. */
const editedFile = fc
  .tuple(realisticFile, fc.nat(), fc.constantFrom('&a ', '*a', '!!str ', '<<: ', '\t', '\n', '\r', ' #c', '[', '}', ', ', '---\n', '? ', '"', "'", '- ', '  ', '\\'))
  .map(([text, at, insert]) => {
    const index = text.length === 0 ? 0 : at % text.length;
    return text.slice(0, index) + insert + text.slice(index);
  });

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
    expect(valid).toBeGreaterThan(runs / 50);
  }, 120_000);
});
