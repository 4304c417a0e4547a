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

  it('protects the engine config too', () => {
    const content = 'api: &api { baseUrl: https://cms.example.com, again: *api }\nauth: { url: https://login.example.com, realm: cms }\ntenants: {}\n';

    const result = parseConfig('contract-sync.yaml', content);

    expect(result.config).toBeUndefined();
    expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.code}`)).toEqual(['1:54 yaml-alias']);
  });
});
