/** fast-check generators of YAML text in many styles, for the property tests that hold the fast YAML path to the yaml package. */
import fc from 'fast-check';

/** A YAML node to render with a chosen style. */
export type Yaml =
  | { readonly kind: 'scalar'; readonly text: string }
  | { readonly kind: 'block'; readonly header: string; readonly lines: readonly string[] }
  | { readonly kind: 'map'; readonly flow: boolean; readonly entries: readonly (readonly [string, Yaml])[] }
  | { readonly kind: 'seq'; readonly flow: boolean; readonly items: readonly Yaml[] };

/** Scalars on which YAML 1.1, YAML 1.2 and the two parsers could disagree, quoted and not. */
export const ODD_SCALARS = [
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  '~',
  'null',
  'Null',
  'NULL',
  'true',
  'True',
  'TRUE',
  'false',
  'FALSE',
  '.inf',
  '-.inf',
  '+.inf',
  '.Inf',
  '.NaN',
  '.nan',
  '.NAN',
  '0o17',
  '0O17',
  '0x1F',
  '0X1F',
  '-0x1F',
  '017',
  '0815',
  '09',
  '0b101',
  '1e3',
  '1E3',
  '1e400',
  '-1e400',
  '1.5e-3',
  '.5',
  '1.',
  '-0',
  '+0',
  '-0.0',
  '+12',
  '1_000',
  '12:30',
  '12:30:00',
  '1,5',
  '2027-01-01',
  '2027-01-01T00:00:00Z',
  '2027-01-01 00:00:00',
  '123456789012345678901234567890',
  '9007199254740993',
  '3.14159',
  '"12"',
  "'12'",
  '"0815"',
  '""',
  "''",
  '"yes"',
  "'~'",
  '"\\t"',
  '"a\\tb"',
  '"\\u00e9t\\u00e9"',
  '"\\ud83d\\ude00"',
  "'it''s'",
  '"\\x41"',
  '"\\"q\\""',
  '"\\\\"',
  'a b c',
  'a #b',
  'a#b',
  'é',
  '"\\0"',
  '-a',
  '?a',
  ':a',
  'a:b',
  '"a: b"',
  "'#x'",
  '"\\ud800"',
];

export function scalar(texts: fc.Arbitrary<string>): fc.Arbitrary<Yaml> {
  return texts.map((text) => ({ kind: 'scalar', text }));
}

export const odd = fc.constantFrom(...ODD_SCALARS);

export const blockText: fc.Arbitrary<Yaml> = fc
  .record({
    header: fc.constantFrom('|', '|-', '|+', '>', '>-', '>+', '|2'),
    lines: fc.array(fc.constantFrom('line one', 'line two: with colon', '  more indented', '', '# not a comment', 'x'), { minLength: 1, maxLength: 4 }),
  })
  .map(({ header, lines }) => ({ kind: 'block', header, lines }));

/** A map with some of `entries` (in their order), written in flow or block style as `flow` says. */
export function map(flow: fc.Arbitrary<boolean>, entries: Record<string, fc.Arbitrary<Yaml>>): fc.Arbitrary<Yaml> {
  return fc.tuple(flow, fc.record(entries, { requiredKeys: [] })).map(([isFlow, record]) => ({
    kind: 'map',
    flow: isFlow,
    entries: Object.entries(record).filter((entry): entry is [string, Yaml] => entry[1] !== undefined),
  }));
}

/** Up to three `item`s, in flow or block style. */
export function seq(item: fc.Arbitrary<Yaml>): fc.Arbitrary<Yaml> {
  return fc.tuple(fc.boolean(), fc.array(item, { maxLength: 3 })).map(([flow, items]) => ({ kind: 'seq', flow, items }));
}

/** Renders `node` as the value after `key:` (or `- `) of a line indented by `indent`. */
export function render(node: Yaml, indent: number, inFlow = false): string {
  const pad = ' '.repeat(indent + 2);
  switch (node.kind) {
    case 'scalar':
      return node.text;
    case 'block':
      if (inFlow) return '"block"';
      return `${node.header}\n${node.lines.map((line) => (line === '' ? '' : `${pad}${line}`)).join('\n')}`;
    case 'map':
      if (node.flow || inFlow || node.entries.length === 0)
        return `{ ${node.entries.map(([key, value]) => `${key}: ${render(value, indent, true)}`).join(', ')} }`;
      return `\n${node.entries.map(([key, value]) => `${pad}${key}:${spaced(render(value, indent + 2))}`).join('\n')}`;
    case 'seq':
      if (node.flow || inFlow || node.items.length === 0) return `[${node.items.map((item) => render(item, indent, true)).join(', ')}]`;
      return `\n${node.items.map((item) => `${pad}-${spaced(render(item, indent + 2))}`).join('\n')}`;
  }
}

/** A rendered value after `key:`: on the next lines as it is, else after a space. */
export function spaced(rendered: string): string {
  return rendered.startsWith('\n') ? rendered : ` ${rendered}`;
}

/** What the text before and after a document may hold: comments, markers, directives, a BOM. */
export const DOCUMENT_START = fc.constantFrom('', '---\n', '# header\n', '%YAML 1.2\n---\n', '\uFEFF');
export const DOCUMENT_END = fc.constantFrom('\n', '\n...\n', '\n# end\n', '');

/** Files of `files` with an edit at a random place: anchors, aliases, tags, merge keys, flow breaks, tabs. */
export function edited(files: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(files, fc.nat(), fc.constantFrom('&a ', '*a', '!!str ', '<<: ', '\t', '\n', '\r', ' #c', '[', '}', ', ', '---\n', '? ', '"', "'", '- ', '  ', '\\'))
    .map(([text, at, insert]) => {
      const index = text.length === 0 ? 0 : at % text.length;
      return text.slice(0, index) + insert + text.slice(index);
    });
}
