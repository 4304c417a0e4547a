/** createTenantTokens against the real emulator (oidc-provider) over real HTTP. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../emulator/index.ts';
import { AuthError, createTenantTokens, type TenantTokensOptions } from '../../engine/auth/index.ts';
import { REDACTED, Redactor } from '../../engine/log/logger.ts';
import { admin, decodeJwtPayload, read, start } from '../emulator/helpers.ts';
import { authOf, ENV, recordingFetch, recordingSleep, TENANTS, tokenRequests } from './helpers.ts';
import { captureLog } from './log-capture.ts';
import { closedPort } from '../helpers/closed-port.ts';

let emulator: Emulator;

beforeAll(async () => {
  emulator = await start();
});

beforeEach(async () => {
  await admin(emulator, 'POST', '/reset');
});

afterAll(async () => {
  await emulator.close();
});

function options(overrides: Partial<TenantTokensOptions> = {}): TenantTokensOptions {
  return { auth: authOf(emulator), tenants: TENANTS, scopes: ['core:read', 'core:write'], env: ENV, ...overrides };
}

describe('discovery and grant', () => {
  it('gets a token of the tenant with the scopes asked, in one token request for 50 concurrent calls', async () => {
    const tokens = createTenantTokens(options());

    const results = await Promise.all(Array.from({ length: 50 }, () => tokens.get('acme')));

    expect(new Set(results).size).toBe(1);
    expect(decodeJwtPayload(results[0]!)).toMatchObject({ tenant_id: 'acme', scope: 'core:read core:write', client_id: 'acme-rw' });
    expect(await tokenRequests(emulator)).toEqual([expect.objectContaining({ tenant: 'acme', status: 200 })]);
    expect((await read(emulator, results[0]!, '4711')).status).toBe(200);
  });

  it('asks only for the scopes it was given', async () => {
    const tokens = createTenantTokens(options({ scopes: ['core:read'] }));

    const token = await tokens.get('acme');

    expect(decodeJwtPayload(token).scope).toBe('core:read');
  });

  it('discovers once per instance for every tenant, and fetches one token per tenant', async () => {
    const { fetch, urls } = recordingFetch();
    const tokens = createTenantTokens(options({ fetch }));

    await Promise.all([...Array.from({ length: 10 }, () => tokens.get('acme')), ...Array.from({ length: 10 }, () => tokens.get('globex'))]);

    expect(urls.filter((url) => url.endsWith('/.well-known/openid-configuration'))).toHaveLength(1);
    const requests = await tokenRequests(emulator);
    expect(requests.map((request) => request.tenant).sort()).toEqual(['acme', 'globex']);
  });

  it('fetches one new token after many requests invalidate the one the API revoked', async () => {
    const tokens = createTenantTokens(options());
    const revoked = await tokens.get('acme');
    await admin(emulator, 'POST', '/revoke-tokens');

    for (let request = 0; request < 16; request += 1) tokens.invalidate('acme', revoked);
    const renewed = await Promise.all(Array.from({ length: 16 }, () => tokens.get('acme')));

    expect(new Set(renewed).size).toBe(1);
    expect(renewed[0]).not.toBe(revoked);
    expect((await read(emulator, renewed[0]!, '4711')).status).toBe(200);
    expect(await tokenRequests(emulator)).toHaveLength(2);
  });

  it('refuses a discovery document whose issuer is not the realm it was fetched from', async () => {
    // Forwards to the emulator, but the discovery document names another issuer.
    async function forgedIssuer(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/.well-known/openid-configuration')) return response;
      const metadata = (await response.json()) as Record<string, unknown>;
      return Response.json({ ...metadata, issuer: 'http://127.0.0.1:1/realms/evil' });
    }
    const tokens = createTenantTokens(options({ fetch: forgedIssuer as typeof fetch }));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toBeInstanceOf(AuthError);
    await expect(failure).rejects.toMatchObject({
      code: 'auth-discovery',
      retryable: false,
      message: `OIDC discovery: the metadata at ${emulator.urls.authUrl}/realms/cms names issuer http://127.0.0.1:1/realms/evil, expected ${emulator.urls.authUrl}/realms/cms`,
    });
    expect(await tokenRequests(emulator)).toEqual([]);
  });

  it('reports an unreachable identity provider as a retryable discovery error after 3 attempts, and tries again on the next call', async () => {
    const { sleep, waits } = recordingSleep();
    const auth = { url: `http://127.0.0.1:${await closedPort()}`, realm: 'cms' };
    const tokens = createTenantTokens(options({ auth, sleep, random: () => 0.5 }));

    const first = await tokens.get('acme').catch((error: unknown) => error);
    const second = await tokens.get('acme').catch((error: unknown) => error);

    expect(first).toMatchObject({ code: 'auth-discovery', retryable: true, message: expect.stringContaining('ECONNREFUSED') });
    expect(second).toMatchObject({ code: 'auth-discovery' });
    expect(waits).toEqual([125, 250, 125, 250]);
  });

  it('refuses a tenant the config does not declare', async () => {
    const tokens = createTenantTokens(options());

    await expect(tokens.get('initech')).rejects.toMatchObject({ code: 'auth-unknown-tenant', tenant: 'initech' });
  });
});

describe('token endpoint failures', () => {
  it('retries 503s with full-jitter backoff and converges', async () => {
    await admin(emulator, 'POST', '/faults', { seed: 1, token: { status: { 503: 0.5 } } });
    const { sleep, waits } = recordingSleep();
    const tokens = createTenantTokens(options({ sleep, random: () => 0.999 }));

    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => tokens.get(index % 2 === 0 ? 'acme' : 'globex')));

    const requests = await tokenRequests(emulator);
    const failed = requests.filter((request) => request.status === 503).length;
    expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(failed).toBeGreaterThan(0);
    expect(
      requests
        .filter((request) => request.status === 200)
        .map((request) => request.tenant)
        .sort(),
    ).toEqual(['acme', 'globex']);
    expect(waits).toHaveLength(failed);
    for (const wait of waits) expect([249, 499]).toContain(wait);
  });

  it('gives up after 3 attempts with a retryable error naming the tenant, and the next call tries again', async () => {
    await admin(emulator, 'POST', '/faults', { seed: 1, token: { status: { 503: 1 } } });
    const { sleep, waits } = recordingSleep();
    const tokens = createTenantTokens(options({ sleep, random: () => 0 }));

    const failure = await tokens.get('acme').catch((error: unknown) => error);
    const attempts = (await tokenRequests(emulator)).length;
    await admin(emulator, 'POST', '/faults', {});
    const token = await tokens.get('acme');

    expect(failure).toBeInstanceOf(AuthError);
    expect(failure).toMatchObject({
      code: 'auth-token-endpoint',
      tenant: 'acme',
      status: 503,
      error: 'temporarily_unavailable',
      retryable: true,
      message: 'tenant acme: token request failed: HTTP 503 temporarily_unavailable: injected fault: 503 (gave up after 3 attempts)',
    });
    expect(attempts).toBe(3);
    expect(waits).toEqual([0, 0]);
    expect(decodeJwtPayload(token).tenant_id).toBe('acme');
  });

  it('does not retry invalid_scope and names the tenant and the scope', async () => {
    const tenants = { acme: { clientId: 'acme-ro', clientSecret: { env: 'RO_SECRET' } } };
    const tokens = createTenantTokens(options({ tenants, env: { RO_SECRET: 'acme-ro-secret' }, scopes: ['core:write'] }));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-invalid-scope',
      tenant: 'acme',
      status: 400,
      error: 'invalid_scope',
      retryable: false,
      message: expect.stringMatching(/^tenant acme: the token endpoint refused scope "core:write" for client acme-ro \(invalid_scope\)/),
    });
    expect(await tokenRequests(emulator)).toHaveLength(1);
  });

  it("refuses a token whose tenant_id is another tenant's (a client id configured under the wrong tenant)", async () => {
    const tenants = { globex: { clientId: 'acme-rw', clientSecret: { env: 'ACME_SECRET' } } };
    const tokens = createTenantTokens(options({ tenants }));

    const failure = tokens.get('globex');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-wrong-tenant',
      tenant: 'globex',
      message: 'tenant globex: the access token carries tenant_id "acme"; expected tenant_id "globex"',
    });
  });
});

describe('client secrets', () => {
  const ROTATING = { acme: { ...TENANTS.acme!, previousClientSecret: { env: 'ACME_SECRET_OLD' } } };

  it('retries once with previousClientSecret on invalid_client and warns that rotation is due', async () => {
    const { logger, entries } = captureLog();
    const env = { ACME_SECRET: 'acme-secret-not-registered', ACME_SECRET_OLD: 'acme-secret-old' };
    const tokens = createTenantTokens(options({ tenants: ROTATING, env, logger }));

    const token = await tokens.get('acme');

    expect(decodeJwtPayload(token).tenant_id).toBe('acme');
    expect((await tokenRequests(emulator)).map((request) => request.status)).toEqual([401, 200]);
    expect(entries().filter((entry) => entry.level === 40)).toEqual([
      expect.objectContaining({ tenant: 'acme', clientId: 'acme-rw', status: 401, error: 'invalid_client', msg: expect.stringContaining('Rotation is due') }),
      // No secretRotatedAt: the end of the overlap is unknown, which the run reports too.
      expect.objectContaining({ tenant: 'acme', secretRotatedAt: null, overlapEndedOn: null, msg: expect.stringContaining('after the rotation overlap') }),
    ]);
    expect(tokens.warnings?.()).toEqual([expect.objectContaining({ code: 'secret-overlap-ended', tenant: 'acme', overlapEndedOn: null })]);
  });

  it('fails with auth-invalid-client when the previous secret is rejected too, without retrying further', async () => {
    const env = { ACME_SECRET: 'acme-secret-not-registered', ACME_SECRET_OLD: 'acme-secret-also-wrong' };
    const tokens = createTenantTokens(options({ tenants: ROTATING, env }));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-invalid-client',
      tenant: 'acme',
      status: 401,
      retryable: false,
      message: 'tenant acme: the token endpoint rejected both clientSecret and previousClientSecret of client acme-rw (invalid_client)',
    });
    expect(await tokenRequests(emulator)).toHaveLength(2);
  });

  it('fails with auth-invalid-client after one request when no previous secret is configured', async () => {
    const tokens = createTenantTokens(options({ env: { ...ENV, ACME_SECRET: 'acme-secret-not-registered' } }));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({ code: 'auth-invalid-client', tenant: 'acme', status: 401, error: 'invalid_client', retryable: false });
    expect(await tokenRequests(emulator)).toHaveLength(1);
  });

  it('fails with secret-unresolved naming the variable, before any request', async () => {
    const { fetch, urls } = recordingFetch();
    const tokens = createTenantTokens(options({ env: { GLOBEX_SECRET: ENV.GLOBEX_SECRET }, fetch }));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'secret-unresolved',
      tenant: 'acme',
      message: 'tenant acme: clientSecret cannot be resolved: environment variable ACME_SECRET is not set',
    });
    expect(urls).toEqual([]);
  });

  it.each([
    ['warns once per tenant when secretRotatedAt is 12 months old', '2026-01-01', Date.UTC(2027, 0, 1), 1],
    ['does not warn a day before', '2026-01-02', Date.UTC(2027, 0, 1), 0],
  ])('%s', async (_case, secretRotatedAt, now, warnings) => {
    const { logger, entries } = captureLog();
    const tenants = { acme: { ...TENANTS.acme!, secretRotatedAt } };
    const tokens = createTenantTokens(options({ tenants, logger, now: () => now }));

    const first = await tokens.get('acme');
    tokens.invalidate('acme', first);
    await tokens.get('acme');

    const found = entries().filter((entry) => entry.msg === 'client secret is older than 12 months; rotate it');
    expect(found).toHaveLength(warnings);
    expect(found).toEqual(found.map(() => expect.objectContaining({ level: 40, tenant: 'acme', secretRotatedAt, maxAgeMonths: 12 })));
    expect(await tokenRequests(emulator)).toHaveLength(2);
  });
});

describe('no secret or token leaks', () => {
  it('registers secrets and tokens with the redactor and never writes them into a log line or an error', async () => {
    const { logger, lines } = captureLog();
    const redactor = new Redactor();
    const tenants = { ...TENANTS, acme: { ...TENANTS.acme!, previousClientSecret: { env: 'ACME_SECRET_OLD' }, secretRotatedAt: '2020-01-01' } };
    const env = { ...ENV, ACME_SECRET: 'acme-secret-not-registered', ACME_SECRET_OLD: 'acme-secret-old' };
    const tokens = createTenantTokens(options({ tenants, env, logger, redactor }));
    const wrongTenant = createTenantTokens(options({ tenants: { globex: TENANTS.acme! }, logger, redactor }));
    const rejected = createTenantTokens(options({ tenants: { acme: TENANTS.acme! }, env: { ACME_SECRET: 'acme-secret-wrong' }, logger, redactor }));

    const acme = await tokens.get('acme');
    const globex = await tokens.get('globex');
    const errors = await Promise.all([wrongTenant.get('globex').catch((error: unknown) => error), rejected.get('acme').catch((error: unknown) => error)]);

    const secrets = ['acme-secret-not-registered', 'acme-secret-old', 'globex-secret', 'acme-secret-wrong'];
    for (const value of [...secrets, acme, globex]) expect(redactor.redact(`<${value}>`)).toBe(`<${REDACTED}>`);
    const written = [...lines, ...errors.map((error) => `${String(error)} ${JSON.stringify(error)} ${String((error as Error).cause)}`)].join('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(errors.map((error) => (error as AuthError).code)).toEqual(['auth-wrong-tenant', 'auth-invalid-client']);
    for (const value of [...secrets, acme, globex, 'eyJ']) expect(written).not.toContain(value);
  });
});
