/** createTenantTokens against identity providers we do not run: crafted tokens and odd answers, served through fetch. */
import { describe, expect, it } from 'vitest';
import { AuthError, createTenantTokens, type TenantTokensOptions } from '../../engine/auth/index.ts';
import { REDACTED, Redactor } from '../../engine/log/logger.ts';
import { craftToken, fakeIdentityProvider, recordingSleep } from './helpers.ts';

const TENANTS = { acme: { clientId: 'acme-rw', clientSecret: { env: 'ACME_SECRET' } } };
const ENV = { ACME_SECRET: 'acme-secret-new' };

function options(idp: ReturnType<typeof fakeIdentityProvider>, overrides: Partial<TenantTokensOptions> = {}): TenantTokensOptions {
  return { auth: idp.auth, tenants: TENANTS, scopes: ['core:read', 'core:write'], env: ENV, fetch: idp.fetch, ...overrides };
}

describe('claims of the received token', () => {
  it.each([
    [
      'another tenant_id',
      { tenant_id: 'globex', scope: 'core:read core:write' },
      'auth-wrong-tenant',
      'tenant acme: the access token carries tenant_id "globex"; expected tenant_id "acme"',
    ],
    [
      'a missing scope',
      { tenant_id: 'acme', scope: 'core:read' },
      'auth-missing-scope',
      'tenant acme: the access token lacks scope core:write (it has scope "core:read")',
    ],
  ])('refuses a token with %s, caches nothing, and never quotes the token', async (_case, claims, code, message) => {
    const token = await craftToken(claims);
    const idp = fakeIdentityProvider(() => token);
    const redactor = new Redactor();
    const tokens = createTenantTokens(options(idp, { redactor }));

    const first = await tokens.get('acme').catch((error: unknown) => error);
    const second = await tokens.get('acme').catch((error: unknown) => error);

    expect(first).toBeInstanceOf(AuthError);
    expect(first).toMatchObject({ code, tenant: 'acme', message, retryable: false });
    expect(second).toMatchObject({ code });
    expect(idp.tokenRequests()).toBe(2);
    expect(JSON.stringify(first)).not.toContain(token);
    expect(redactor.redact(token)).toBe(REDACTED);
  });

  it('refuses a token that is not a JWT', async () => {
    const idp = fakeIdentityProvider(() => 'an-opaque-access-token');
    const tokens = createTenantTokens(options(idp));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({ code: 'auth-invalid-token', tenant: 'acme', message: expect.not.stringContaining('an-opaque-access-token') });
  });

  it('checks the scopes the instance was created for', async () => {
    const token = await craftToken({ tenant_id: 'acme', scope: 'core:read' });
    const idp = fakeIdentityProvider(() => token);
    const tokens = createTenantTokens(options(idp, { scopes: ['core:read'] }));

    const received = await tokens.get('acme');

    expect(received).toBe(token);
  });
});

describe('answers of the token endpoint', () => {
  it('takes the published 1 h life when expires_in is absent', async () => {
    const idp = fakeIdentityProvider(() => craftToken({ tenant_id: 'acme', scope: 'core:read core:write' }));
    async function withoutExpiresIn(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
      const response = await idp.fetch(input, init);
      if (!String(input).endsWith('/token')) return response;
      const { expires_in: _dropped, ...body } = (await response.json()) as Record<string, unknown>;
      return Response.json(body);
    }
    const clock = { now: Date.UTC(2027, 0, 1) };
    const tokens = createTenantTokens(options(idp, { fetch: withoutExpiresIn as typeof fetch, now: () => clock.now }));
    const first = await tokens.get('acme');

    clock.now += 3540_000 - 1;
    const cached = await tokens.get('acme');
    clock.now += 1;
    const refreshed = await tokens.get('acme');

    expect(cached).toBe(first);
    expect(refreshed).not.toBe(first);
    expect(idp.tokenRequests()).toBe(2);
  });

  it.each([0, -5])('refuses expires_in %s', async (expiresIn) => {
    const idp = fakeIdentityProvider(() => craftToken({ tenant_id: 'acme', scope: 'core:read core:write' }), expiresIn);
    const tokens = createTenantTokens(options(idp));

    await expect(tokens.get('acme')).rejects.toMatchObject({ code: 'auth-token-endpoint', tenant: 'acme', retryable: false });
  });

  it('retries a 502 that is not JSON and reports it as retryable', async () => {
    const idp = fakeIdentityProvider(() => 'unused');
    let requests = 0;
    async function badGateway(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
      if (!String(input).endsWith('/token')) return idp.fetch(input, init);
      requests += 1;
      return new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } });
    }
    const { sleep, waits } = recordingSleep();
    const tokens = createTenantTokens(options(idp, { fetch: badGateway as typeof fetch, sleep, random: () => 0.5 }));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-token-endpoint',
      status: 502,
      retryable: true,
      message: 'tenant acme: token request failed: HTTP 502 (gave up after 3 attempts)',
    });
    expect(requests).toBe(3);
    expect(waits).toEqual([125, 250]);
  });

  it('quotes no secret the server echoes in error_description, even without a redactor passed in', async () => {
    const idp = fakeIdentityProvider(() => 'unused');
    async function echoing(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
      if (!String(input).endsWith('/token')) return idp.fetch(input, init);
      return Response.json({ error: 'invalid_request', error_description: `bad client_secret ${ENV.ACME_SECRET}` }, { status: 400 });
    }
    const tokens = createTenantTokens(options(idp, { fetch: echoing as typeof fetch }));

    const failure = (await tokens.get('acme').catch((error: unknown) => error)) as AuthError;

    expect(failure).toMatchObject({ code: 'auth-token-endpoint', status: 400, error: 'invalid_request' });
    expect(failure.message).toBe(`tenant acme: token request failed: HTTP 400 invalid_request: bad client_secret ${REDACTED}`);
    expect(failure.error_description).toBe(`bad client_secret ${REDACTED}`);
  });

  it('refuses a discovered token endpoint that is plain http on a remote host', async () => {
    const idp = fakeIdentityProvider(() => 'unused');
    async function insecure(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
      const response = await idp.fetch(input, init);
      if (!String(input).endsWith('/openid-configuration')) return response;
      const metadata = (await response.json()) as Record<string, unknown>;
      return Response.json({ ...metadata, token_endpoint: 'http://idp.test/realms/cms/protocol/openid-connect/token' });
    }
    const tokens = createTenantTokens(options(idp, { fetch: insecure as typeof fetch }));

    await expect(tokens.get('acme')).rejects.toMatchObject({ code: 'auth-discovery', message: expect.stringContaining('is not https://') });
    expect(idp.tokenRequests()).toBe(0);
  });
});

describe('options', () => {
  it.each<[string, Partial<TenantTokensOptions>, string]>([
    ['no scopes', { scopes: [] }, 'createTenantTokens: option "scopes" must list at least one scope; got []'],
    ['an unknown scope', { scopes: ['core:admin' as 'core:read'] }, 'createTenantTokens: option "scopes" holds an unknown scope "core:admin"'],
    ['a clock that is not a function', { now: 5 as unknown as () => number }, 'createTenantTokens: option "now" must be a function; got number'],
    ['an auth URL that is not a URL', { auth: { url: 'login', realm: 'cms' } }, 'createTenantTokens: option "auth.url" must be a URL; got "login"'],
    [
      'a zero timeout',
      { auth: { url: 'https://idp.test', realm: 'cms', timeoutMs: 0 } },
      'createTenantTokens: option "auth.timeoutMs" must be a positive integer; got 0',
    ],
    [
      'a remote http:// token endpoint',
      { auth: { url: 'https://idp.test', realm: 'cms', tokenEndpoint: 'http://idp.test/oauth2/token' } },
      'createTenantTokens: option "auth.tokenEndpoint" must be an https:// URL (http:// only on a loopback host); got "http://idp.test/oauth2/token"',
    ],
  ])('refuses %s with a TypeError naming the option', (_case, overrides, message) => {
    const idp = fakeIdentityProvider(() => 'unused');

    expect(() => createTenantTokens(options(idp, overrides))).toThrow(new TypeError(message));
  });
});
