import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseSeed, readSeedFile, SeedError, startEmulator } from '../../emulator/index.ts';
import { emulatorSpecs } from '../../emulator/specs.ts';
import { SEED } from './helpers.ts';

function problemsOf(text: string): readonly string[] {
  try {
    parseSeed(text, 'seed.yaml');
  } catch (error) {
    if (error instanceof SeedError) return error.problems;
    throw error;
  }
  return [];
}

describe('seed schema', () => {
  it.each(Object.keys(emulatorSpecs()))('specs/%s equals its builder (run `npm run specs`)', async (name) => {
    const file = await readFile(new URL(`../../specs/${name}`, import.meta.url), 'utf8');

    expect(JSON.parse(file)).toEqual(emulatorSpecs()[name]);
  });

  it('accepts the example seed and fills in defaults', async () => {
    const seed = await readSeedFile(new URL('../../emulator/seed.example.yaml', import.meta.url).pathname);

    expect(Object.keys(seed.tenants)).toEqual(['acme', 'globex']);
    expect(seed.rateLimit).toEqual({ requestsPerSecond: 50, burst: 50 });
  });

  it('fills in tokenTtlSeconds and rateLimit when absent', () => {
    const seed = parseSeed('realm: cms\ntenants:\n  acme: {}\n', 'seed.yaml');

    expect(seed).toMatchObject({ tokenTtlSeconds: 3600, rateLimit: { requestsPerSecond: 50, burst: 50 } });
  });
});

describe('bad seeds', () => {
  it.each([
    ['a missing realm', 'tenants: { acme: {} }\n', 'seed.yaml:1:1 (root): missing required field "realm"'],
    ['a realm with a slash', 'realm: a/b\ntenants: { acme: {} }\n', 'seed.yaml:1:8 realm: expected a value matching'],
    ['a zero ttl', 'realm: cms\ntokenTtlSeconds: 0\ntenants: { acme: {} }\n', 'seed.yaml:2:18 tokenTtlSeconds: expected a number >= 1, got 0'],
    [
      'a client without secret',
      'realm: cms\ntenants:\n  acme:\n    clients: [{ clientId: c, scopes: [] }]\n',
      'tenants.acme.clients[0]: missing required field "secret"',
    ],
    [
      'a scope with a space',
      'realm: cms\ntenants:\n  acme:\n    clients: [{ clientId: c, secret: s, scopes: ["core:read core:write"] }]\n',
      'tenants.acme.clients[0].scopes[0]',
    ],
    [
      'an unknown contract field',
      'realm: cms\ntenants:\n  acme:\n    contracts:\n      "4711": { Nmae: x }\n',
      'seed.yaml:5:17 tenants.acme.contracts.4711.Nmae: unknown field "Nmae"',
    ],
    [
      'a wrong contract value',
      'realm: cms\ntenants:\n  acme:\n    contracts:\n      "4711": { ValidFrom: 2027-01-01 }\n',
      'tenants.acme.contracts.4711.ValidFrom: expected an ISO 8601 date-time in UTC',
    ],
    [
      'a duplicate member',
      'realm: cms\ntenants:\n  acme:\n    contracts:\n      "1": { Company: [{ Id: 1, RelationType: S }, { Id: 1, RelationType: S }] }\n',
      'duplicate Company member',
    ],
    [
      'a clientId used twice',
      'realm: cms\ntenants:\n  a: { clients: [{ clientId: c, secret: s, scopes: [] }] }\n  b: { clients: [{ clientId: c, secret: t, scopes: [] }] }\n',
      'clientId "c" is already used by tenant a',
    ],
    ['a YAML syntax error', 'realm: cms\ntenants: {\n', 'seed.yaml:3:1'],
    ['a duplicate key', 'realm: cms\nrealm: other\ntenants: {}\n', 'seed.yaml:2:1 Map keys must be unique'],
  ])('names the place and the problem of %s', (_case, text, expected) => {
    const problems = problemsOf(text);

    expect(problems.join('\n')).toContain(expected);
  });

  it('never quotes a secret in an error', () => {
    const problems = problemsOf('realm: cms\ntenants:\n  acme:\n    clients: [{ clientId: c, secret: 12345678, scopes: [] }]\n');

    expect(problems.join('\n')).toContain('secret: expected a string');
    expect(problems.join('\n')).not.toContain('12345678');
  });

  it('is refused by startEmulator with every problem listed', async () => {
    const seed = { ...SEED, realm: '', tokenTtlSeconds: -1 };

    const started = startEmulator(seed);

    await expect(started).rejects.toThrow(SeedError);
    await expect(started).rejects.toMatchObject({ problems: [expect.stringContaining('realm'), expect.stringContaining('tokenTtlSeconds')] });
  });

  it('reports a missing file', async () => {
    await expect(readSeedFile('/nonexistent/seed.yaml')).rejects.toThrow(/file not found/);
  });
});
