import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/index.ts';
import { configYaml } from '../helpers/files.ts';

function problems(content: string) {
  return parseConfig('contract-sync.yaml', content).diagnostics.map((d) => `${d.line}:${d.column}  ${d.field}  ${d.message}`);
}

/** A config whose api section holds `lines` after baseUrl. */
function api(lines: string): string {
  return configYaml(['acme']).replace('api: { baseUrl: https://cms.example.com }\n', `api:\n  baseUrl: https://cms.example.com\n${lines}`);
}

describe('parseConfig', () => {
  it('applies the defaults of docs/architecture.md section 5', () => {
    const { config, diagnostics } = parseConfig('contract-sync.yaml', configYaml(['acme']));

    expect(diagnostics).toEqual([]);
    expect(config).toEqual({
      api: { baseUrl: 'https://cms.example.com', patch: { contentType: 'application/json' }, conflictStatuses: [409], timeoutMs: 30_000 },
      auth: { url: 'https://login.example.com', realm: 'cms', timeoutMs: 10_000 },
      tenants: { acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' } } },
      desired: { paths: ['contracts/**/*.yaml'] },
      collections: { Company: 'authoritative', OrganizationalUnit: 'authoritative', Owner: 'authoritative', Type: 'authoritative' },
      rate: { requestsPerSecond: 5, concurrency: 2, maxInFlight: 16 },
      retry: { maxAttempts: 5 },
      state: { backend: 'file', path: '.contract-sync/state' },
      safety: { maxRemovals: 25 },
    });
  });

  it('reads the settings of unpublished behaviours, with their defaults, and refuses bad values at their position', () => {
    const set = parseConfig(
      'contract-sync.yaml',
      api(
        '  read: { path: "/contract/{id}", pointer: /Contract, timestamps: utc }\n  patch: { contentType: application/json-patch+json }\n  conflictStatuses: [409, 422]\n',
      ),
    );
    const defaults = parseConfig('contract-sync.yaml', api('  read: { path: "/contract/{id}" }\n'));

    expect(set.diagnostics).toEqual([]);
    expect(set.config?.api).toMatchObject({
      read: { path: '/contract/{id}', pointer: '/Contract', timestamps: 'utc' },
      patch: { contentType: 'application/json-patch+json' },
      conflictStatuses: [409, 422],
    });
    expect(defaults.config?.api).toMatchObject({
      read: { path: '/contract/{id}', pointer: '', timestamps: 'error' },
      patch: { contentType: 'application/json' },
      conflictStatuses: [409],
    });
    expect(problems(api('  read: { path: "/contract/{id}", pointer: Contract, timestamps: local }\n'))).toEqual([
      expect.stringMatching(/ {2}api\.read\.pointer {2}expected a value matching/),
      expect.stringMatching(/ {2}api\.read\.timestamps {2}expected one of "utc", "error"/),
    ]);
    expect(problems(api('  conflictStatuses: [200]\n'))).toEqual([expect.stringMatching(/ {2}api\.conflictStatuses\[0\] {2}.*>= 400/)]);
  });

  it('reads safety.maxRemovals, and refuses a bad value at its position', () => {
    const good = parseConfig('contract-sync.yaml', configYaml(['acme'], 'safety: { maxRemovals: 0 }'));
    const negative = problems(configYaml(['acme'], 'safety:\n  maxRemovals: -1'));
    const text = problems(configYaml(['acme'], 'safety:\n  maxRemovals: many'));
    const unknown = problems(configYaml(['acme'], 'safety:\n  maxRemoval: 3'));

    expect(good.diagnostics).toEqual([]);
    expect(good.config?.safety).toEqual({ maxRemovals: 0 });
    expect(negative).toEqual([expect.stringMatching(/^\d+:16 {2}safety\.maxRemovals {2}.*>= 0/)]);
    expect(text).toEqual([expect.stringMatching(/^\d+:16 {2}safety\.maxRemovals {2}.*integer/)]);
    expect(unknown).toEqual([expect.stringMatching(/^\d+:3 {2}safety(\.maxRemoval)? {2}.*maxRemoval/)]);
  });

  it('reads every documented setting', () => {
    const extra = [
      'desired: { paths: ["contracts/**/*.yaml", "more/*.yml"] }',
      'collections: { Company: additive }',
      'rate: { requestsPerSecond: 0.5, concurrency: 1, maxInFlight: 4 }',
      'retry: { maxAttempts: 3 }',
      'state: { backend: postgres, url: { file: /run/secrets/pg } }',
    ].join('\n');
    const content = configYaml(['acme'], extra).replace(
      '    clientSecret: { env: ACME_SECRET }',
      '    clientSecret: { file: /run/secrets/acme }\n    previousClientSecret: { env: OLD }\n    secretRotatedAt: 2026-06-01\n    paths: ["contracts/acme/**"]',
    );

    const { config, diagnostics } = parseConfig('contract-sync.yaml', content);

    expect(diagnostics).toEqual([]);
    expect(config?.tenants.acme).toEqual({
      clientId: 'cs-acme',
      clientSecret: { file: '/run/secrets/acme' },
      previousClientSecret: { env: 'OLD' },
      secretRotatedAt: '2026-06-01',
      paths: ['contracts/acme/**'],
    });
    expect(config?.collections).toEqual({ Company: 'additive', OrganizationalUnit: 'authoritative', Owner: 'authoritative', Type: 'authoritative' });
    expect(config?.rate).toEqual({ requestsPerSecond: 0.5, concurrency: 1, maxInFlight: 4 });
    expect(config?.state).toEqual({ backend: 'postgres', url: { file: '/run/secrets/pg' } });
  });

  it('reads the postgres state schema, and refuses one that is not a plain lower-case name', () => {
    const good = parseConfig('contract-sync.yaml', configYaml(['acme'], 'state: { backend: postgres, url: { env: DATABASE_URL }, schema: cs_state }'));
    const bad = parseConfig('contract-sync.yaml', configYaml(['acme'], 'state: { backend: postgres, url: { env: DATABASE_URL }, schema: "x; DROP" }'));

    expect(good.config?.state).toEqual({ backend: 'postgres', url: { env: 'DATABASE_URL' }, schema: 'cs_state' });
    expect(bad.config).toBeUndefined();
    expect(bad.diagnostics.map((d) => d.field)).toContain('state.schema');
  });

  it('refuses a literal secret without ever quoting it', () => {
    const content = configYaml(['acme']).replace('{ env: ACME_SECRET }', 'hunter2-very-secret');

    const { config, diagnostics } = parseConfig('contract-sync.yaml', content);

    expect(config).toBeUndefined();
    expect(diagnostics.map((d) => `${d.line}:${d.column}  ${d.field}  ${d.message}`)).toEqual([
      '6:19  tenants.acme.clientSecret  expected a secret reference { env: NAME } or { file: PATH }; literal secrets are not allowed in this file',
    ]);
    expect(JSON.stringify(diagnostics)).not.toContain('hunter2');
  });

  it('refuses a secret reference with both forms, once', () => {
    const content = configYaml(['acme']).replace('{ env: ACME_SECRET }', '{ env: A, file: /b }');

    expect(problems(content)).toEqual([
      '6:19  tenants.acme.clientSecret  expected a secret reference { env: NAME } or { file: PATH }; literal secrets are not allowed in this file',
    ]);
  });

  it.each([
    [
      'http to a remote host',
      'api: { baseUrl: http://cms.example.com }',
      '1:17  api.baseUrl  http:// is allowed only for loopback hosts; use https:// for cms.example.com',
    ],
    [
      'credentials in a URL',
      'api: { baseUrl: "https://user:pw@cms.example.com" }',
      '1:17  api.baseUrl  credentials in a URL are not allowed; configure the tenant clients instead',
    ],
    ['not a URL', 'api: { baseUrl: cms }', '1:17  api.baseUrl  expected a URL, got "cms"'],
    ['not http(s)', 'api: { baseUrl: "ftp://cms.example.com" }', '1:17  api.baseUrl  expected an https:// URL, got ftp:'],
    ['unknown key', 'api: { baseUrl: https://cms.example.com, retries: 3 }', '1:42  api.retries  unknown field "retries"'],
    [
      'read path without {id}',
      'api: { baseUrl: https://cms.example.com, read: { path: /contract } }',
      '1:56  api.read.path  expected a value matching ^/.*\\{id\\}, got "/contract"',
    ],
  ])('refuses %s', (_, apiLine, expected) => {
    const content = configYaml(['acme']).replace('api: { baseUrl: https://cms.example.com }', apiLine);

    expect(problems(content)).toEqual([expected]);
  });

  it.each(['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080'])('allows http:// to loopback %s', (url) => {
    const content = configYaml(['acme']).replace('https://cms.example.com', `"${url}"`);

    expect(problems(content)).toEqual([]);
  });

  it.each([
    ['an unknown top-level key', 'tenant: {}', '7:1  tenant  unknown field "tenant" (did you mean "tenants"?)'],
    ['an unknown collection mode', 'collections: sometimes', '7:14  collections  expected one of "authoritative", "additive", got "sometimes"'],
    ['a collection mode for a non-collection', 'collections: { Name: additive }', '7:16  collections.Name  unknown field "Name"'],
    ['a zero concurrency', 'rate: { concurrency: 0 }', '7:22  rate.concurrency  expected a number >= 1, got 0'],
  ])('refuses %s', (_, extra, expected) => {
    expect(problems(configYaml(['acme'], extra))).toEqual([expected]);
  });

  describe('identity provider settings', () => {
    const AUTH_LINE = 'auth: { url: https://login.example.com, realm: cms }';

    it('reads auth.tokenEndpoint and auth.timeoutMs', () => {
      const content = configYaml(['acme']).replace(
        AUTH_LINE,
        'auth: { url: https://login.example.com, realm: cms, tokenEndpoint: "https://login.example.com/oauth2/token", timeoutMs: 2500 }',
      );

      const { config, diagnostics } = parseConfig('contract-sync.yaml', content);

      expect(diagnostics).toEqual([]);
      expect(config?.auth).toEqual({
        url: 'https://login.example.com',
        realm: 'cms',
        tokenEndpoint: 'https://login.example.com/oauth2/token',
        timeoutMs: 2500,
      });
    });

    it.each([
      ['an integer', '4711', '4711'],
      ['a string', '"0f8fad5b-d9cb-469f-a165-70867728950e"', '0f8fad5b-d9cb-469f-a165-70867728950e'],
      ['a quoted number', '"007"', '007'],
    ])('reads tenants.<key>.tenantId written as %s, as text', (_case, written, expected) => {
      const content = configYaml(['acme']).replace('    clientId: cs-acme', `    clientId: cs-acme\n    tenantId: ${written}`);

      const { config, diagnostics } = parseConfig('contract-sync.yaml', content);

      expect(diagnostics).toEqual([]);
      expect(config?.tenants.acme?.tenantId).toBe(expected);
    });

    it.each([
      [
        'a remote http:// token endpoint',
        'tokenEndpoint: "http://login.example.com/oauth2/token"',
        '2:68  auth.tokenEndpoint  http:// is allowed only for loopback hosts; use https:// for login.example.com',
      ],
      [
        'credentials in the token endpoint',
        'tokenEndpoint: "https://u:p@login.example.com/token"',
        '2:68  auth.tokenEndpoint  credentials in a URL are not allowed; configure the tenant clients instead',
      ],
      ['a zero timeout', 'timeoutMs: 0', '2:64  auth.timeoutMs  expected a number >= 1, got 0'],
      ['a fractional timeout', 'timeoutMs: 1.5', '2:64  auth.timeoutMs  expected an integer, got 1.5'],
    ])('refuses %s', (_case, setting, expected) => {
      const content = configYaml(['acme']).replace(AUTH_LINE, `auth: { url: https://login.example.com, realm: cms, ${setting} }`);

      expect(problems(content)).toEqual([expected]);
    });

    it.each([
      ['an empty tenantId', '""', 'expected a non-empty string'],
      ['a fractional tenantId', '1.5', 'expected a string, got 1.5'],
      [
        'a tenantId beyond exact integers',
        '12345678901234567890',
        'expected a number between -9007199254740991 and 9007199254740991 (larger ones lose precision), got 12345678901234567000',
      ],
      ['a list', '[1]', 'expected a string, got a list'],
    ])('refuses %s', (_case, written, message) => {
      const content = configYaml(['acme']).replace('    clientId: cs-acme', `    clientId: cs-acme\n    tenantId: ${written}`);

      expect(problems(content)).toEqual([`6:15  tenants.acme.tenantId  ${message}`]);
    });
  });

  it('refuses a config without tenants and says what is missing', () => {
    expect(problems('api: { baseUrl: https://cms.example.com }\nauth: { url: https://login.example.com, realm: cms }\n')).toEqual([
      '1:1    missing required field "tenants"',
    ]);
  });

  it('refuses an empty config', () => {
    expect(problems('')).toEqual(['1:1    the config file is empty']);
  });
});
