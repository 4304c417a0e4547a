import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/index.ts';
import { parseYamlSource } from '../../engine/yaml/yaml-source.ts';

describe('parseYamlSource', () => {
  it.each([
    ['a list holding itself', 'a: &a [1, *a]\n', '1:11 a[1] alias *a is inside the value it names: circular values are not allowed'],
    ['a map holding itself', '&top\nb: { c: *top }\n', '2:9 b.c alias *top is inside the value it names: circular values are not allowed'],
    ['a complex key', '? [a, b]\n: 1\n', '1:3  a map key must be a plain name or number, got a list'],
  ])('refuses %s and returns no value', (_, content, expected) => {
    const result = parseYamlSource('x.yaml', content);

    expect(result.ok).toBe(false);
    expect('value' in result).toBe(false);
    expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.field} ${d.message}`)).toEqual([expected]);
  });

  it('keeps aliases that name an earlier, separate value', () => {
    const result = parseYamlSource('x.yaml', 'a: &a [1]\nb: [*a, *a]\n');

    expect(result.ok && result.value).toEqual({ a: [1], b: [[1], [1]] });
  });

  it.each([
    ['an unclosed quote, at its opening', 'a: 1\nb: "open\nc: 2\n', '2:4 invalid YAML: Missing closing "quote: the quote opened here is never closed'],
    ['an unclosed quote in a flow map', 'a: { b: "open }\nc: 2\n', '1:9 invalid YAML: Missing closing "quote: the quote opened here is never closed'],
    [
      'a line indented too deep, at that line',
      'a:\n  b: 1\n   c: 2\n',
      '3:4 invalid YAML: this line is indented deeper than line 2, whose key has its value already',
    ],
    ['a key indented differently after a comment, at the key', 'a: 1\n# note\n  b: 2\n', '3:3 invalid YAML: All mapping items must start at the same column'],
    ['a line indented too little, at its key', 'a:\n  b: 1\n c: 2\n', '3:2 invalid YAML: All mapping items must start at the same column'],
  ])('says where the mistake starts: %s', (_, content, expected) => {
    const result = parseYamlSource('x.yaml', content);

    expect(result.ok).toBe(false);
    const [first] = result.diagnostics;
    expect(`${first!.line}:${first!.column} ${first!.message}`.startsWith(expected), `${first!.line}:${first!.column} ${first!.message}`).toBe(true);
  });

  it('a config indentation mistake is said at the line indented too deep', () => {
    const content =
      'api: { baseUrl: https://cms.example.com }\nauth: { url: https://login.example.com, realm: cms }\ntenants:\n  acme:\n    clientId: cs-acme\n      clientSecret: { env: ACME_SECRET }\n';

    const result = parseConfig('contract-sync.yaml', content);

    expect(result.config).toBeUndefined();
    expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`)).toEqual([
      '6:7 yaml-syntax invalid YAML: this line is indented deeper than line 5, whose key has its value already: indent it as the keys beside it',
    ]);
  });

  it('protects the engine config too', () => {
    const content = 'api: &api { baseUrl: https://cms.example.com, again: *api }\nauth: { url: https://login.example.com, realm: cms }\ntenants: {}\n';

    const result = parseConfig('contract-sync.yaml', content);

    expect(result.config).toBeUndefined();
    expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.code}`)).toEqual(['1:54 yaml-alias']);
  });
});
