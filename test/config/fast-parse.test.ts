import { afterEach, describe, expect, it, vi } from 'vitest';
import { Parser } from 'yaml';
import { parseConfig, parseConfigExactly } from '../../engine/config/parse.ts';
import { configYaml } from '../helpers/files.ts';

const EXTRA = [
  'desired: { paths: ["contracts/**/*.yaml"] }',
  'collections: { Company: additive }',
  'rate:',
  '  requestsPerSecond: 0.5',
  'state: { backend: postgres, url: { file: /run/secrets/pg } }',
].join('\n');

describe('the config fast path', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads a valid config without the yaml package, to the same config', () => {
    const parse = vi.spyOn(Parser.prototype, 'parse');
    const content = configYaml(['acme', 'globex'], EXTRA).replace(
      '    clientId: cs-acme',
      '    clientId: cs-acme\n    tenantId: 4711\n    secretRotatedAt: 2026-06-01',
    );

    const result = parseConfig('contract-sync.yaml', content);

    expect(parse).not.toHaveBeenCalled();
    expect(result.diagnostics).toEqual([]);
    expect(result.config?.tenants.acme?.tenantId).toBe('4711');
    expect(result).toStrictEqual(parseConfigExactly('contract-sync.yaml', content));
  });

  it.each([
    ['a schema problem', configYaml(['acme'], 'rate: { concurrency: 0 }'), '7:22  rate.concurrency'],
    ['a URL problem', configYaml(['acme']).replace('https://cms', 'http://cms'), '1:17  api.baseUrl'],
    ['a duplicate key', configYaml(['acme'], 'rate: { concurrency: 1, concurrency: 2 }'), '7:25  '],
    ['an empty file', '', '1:1  '],
  ])('hands a config with %s to the yaml package, for its exact position', (_, content, where) => {
    const parse = vi.spyOn(Parser.prototype, 'parse');

    const result = parseConfig('contract-sync.yaml', content);

    expect(parse).toHaveBeenCalled();
    expect(result.config).toBeUndefined();
    expect(result.diagnostics.map((d) => `${d.line}:${d.column}  ${d.field}`)).toEqual([where]);
    expect(result).toStrictEqual(parseConfigExactly('contract-sync.yaml', content));
  });

  it('hands a valid config that only the yaml package reads exactly (an alias) to it, to the same config', () => {
    const parse = vi.spyOn(Parser.prototype, 'parse');
    const content = configYaml(['acme', 'globex'])
      .replace('clientSecret: { env: ACME_SECRET }', 'clientSecret: &secret { env: ACME_SECRET }')
      .replace('clientSecret: { env: GLOBEX_SECRET }', 'clientSecret: *secret');

    const result = parseConfig('contract-sync.yaml', content);

    expect(parse).toHaveBeenCalled();
    expect(result.config?.tenants.globex?.clientSecret).toEqual({ env: 'ACME_SECRET' });
    expect(result).toStrictEqual(parseConfigExactly('contract-sync.yaml', content));
  });
});
