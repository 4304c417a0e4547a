/**
 * createTenantTokens over real loopback HTTP against identity providers the emulator does not
 * imitate: token responses as the service publishes them, odd values, foreign token endpoints, hangs.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthError, createTenantTokens, type TenantTokensOptions } from '../../engine/auth/index.ts';
import { REDACTED, Redactor } from '../../engine/log/logger.ts';
import { craftToken, recordingSleep } from './helpers.ts';
import { DISCOVERY_PATH, discoveryDocument, sendJson, startLocalServer, TOKEN_PATH, type LocalServer, type ReceivedRequest } from './local-server.ts';

const SECRET = 'acme-secret-throwaway';
const TENANTS = { acme: { clientId: 'acme-rw', clientSecret: { env: 'ACME_SECRET' } } };

let servers: LocalServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function start(handle: (request: ReceivedRequest, response: ServerResponse, self: string) => void): Promise<LocalServer> {
  let self = '';
  const server = await startLocalServer((request, response) => handle(request, response, self));
  self = server.url;
  servers.push(server);
  return server;
}

/** Discovery of realm cms pointing at itself, and a token endpoint answering `body` (a function of nothing, to craft once per request). */
function provider(body: () => Promise<Record<string, unknown>>): Promise<LocalServer> {
  return start((request, response, self) => {
    if (request.path === DISCOVERY_PATH) return sendJson(response, 200, discoveryDocument(self));
    if (request.path === TOKEN_PATH && request.method === 'POST') {
      void body().then((answer) => sendJson(response, 200, answer));
      return;
    }
    sendJson(response, 404, { error: 'not_found' });
  });
}

function options(server: LocalServer, overrides: Partial<TenantTokensOptions> = {}): TenantTokensOptions {
  return { auth: { url: server.url, realm: 'cms' }, tenants: TENANTS, scopes: ['core:read', 'core:write'], env: { ACME_SECRET: SECRET }, ...overrides };
}

function tokenPosts(server: LocalServer): ReceivedRequest[] {
  return server.requests.filter((request) => request.method === 'POST');
}

const GOOD_CLAIMS = { tenant_id: 'acme', scope: 'core:read core:write' };

describe('token responses as the service publishes them', () => {
  it('accepts {access_token, expires_in} without token_type as a Bearer token', async () => {
    const token = await craftToken(GOOD_CLAIMS);
    const server = await provider(async () => ({ access_token: token, expires_in: 3600 }));
    const tokens = createTenantTokens(options(server));

    const received = await tokens.get('acme');

    expect(received).toBe(token);
    expect(tokenPosts(server)).toEqual([
      expect.objectContaining({ form: { grant_type: 'client_credentials', client_id: 'acme-rw', client_secret: SECRET, scope: 'core:read core:write' } }),
    ]);
  });

  it.each(['Bearer', 'bearer', 'BEARER'])('accepts token_type %s', async (tokenType) => {
    const token = await craftToken(GOOD_CLAIMS);
    const server = await provider(async () => ({ access_token: token, token_type: tokenType, expires_in: 3600 }));

    await expect(createTenantTokens(options(server)).get('acme')).resolves.toBe(token);
  });

  it.each<[string, unknown, string]>([
    ['DPoP', 'DPoP', 'tenant acme: the token endpoint answered token_type "DPoP"; only Bearer tokens are supported'],
    ['mac', 'mac', 'tenant acme: the token endpoint answered token_type "mac"; only Bearer tokens are supported'],
    ['a number', 1, 'tenant acme: the token endpoint answered token_type 1; only Bearer tokens are supported'],
  ])('refuses a present token_type other than Bearer: %s', async (_case, tokenType, message) => {
    const server = await provider(async () => ({ access_token: await craftToken(GOOD_CLAIMS), token_type: tokenType, expires_in: 3600 }));

    const failure = createTenantTokens(options(server)).get('acme');

    await expect(failure).rejects.toBeInstanceOf(AuthError);
    await expect(failure).rejects.toMatchObject({ code: 'auth-token-endpoint', tenant: 'acme', retryable: false, message });
    expect(tokenPosts(server)).toHaveLength(1);
  });
});

describe('granted scopes (RFC 6749 section 5.1)', () => {
  it('takes a response and a token without scope as granting what was asked', async () => {
    const token = await craftToken({ tenant_id: 'acme' });
    const server = await provider(async () => ({ access_token: token, expires_in: 3600 }));

    await expect(createTenantTokens(options(server)).get('acme')).resolves.toBe(token);
  });

  it("takes the response's scope over the token's claim, and refuses when it lacks what the command needs", async () => {
    const server = await provider(async () => ({ access_token: await craftToken(GOOD_CLAIMS), expires_in: 3600, scope: 'core:read' }));

    const failure = createTenantTokens(options(server)).get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-missing-scope',
      tenant: 'acme',
      message: 'tenant acme: the access token lacks scope core:write (the token response grants scope "core:read")',
    });
  });

  it("accepts a response scope that covers the command, whatever the token's claim says", async () => {
    const token = await craftToken({ tenant_id: 'acme', scope: 'profile' });
    const server = await provider(async () => ({ access_token: token, expires_in: 3600, scope: 'core:write core:read' }));

    await expect(createTenantTokens(options(server)).get('acme')).resolves.toBe(token);
  });

  it('refuses a token whose scope claim lacks what the command needs when the response has no scope', async () => {
    const server = await provider(async () => ({ access_token: await craftToken({ tenant_id: 'acme', scope: 'core:read' }), expires_in: 3600 }));

    await expect(createTenantTokens(options(server)).get('acme')).rejects.toMatchObject({
      code: 'auth-missing-scope',
      message: 'tenant acme: the access token lacks scope core:write (it has scope "core:read")',
    });
  });

  it('refuses a scope that is not a string', async () => {
    const server = await provider(async () => ({ access_token: await craftToken(GOOD_CLAIMS), expires_in: 3600, scope: ['core:read', 'core:write'] }));

    await expect(createTenantTokens(options(server)).get('acme')).rejects.toMatchObject({
      code: 'auth-token-endpoint',
      message: expect.stringMatching(/^tenant acme: the token endpoint answered scope \["core:read","core:write"\]; expected a space-separated string$/),
    });
  });
});

describe('tenants.<key>.tenantId', () => {
  it.each<[string, unknown]>([
    ['a number', 4711],
    ['a string', '4711'],
  ])('accepts a token whose tenant_id is %s equal to the configured tenantId as text', async (_case, tenantId) => {
    const token = await craftToken({ ...GOOD_CLAIMS, tenant_id: tenantId });
    const server = await provider(async () => ({ access_token: token, expires_in: 3600 }));
    const tenants = { acme: { ...TENANTS.acme, tenantId: '4711' } };

    await expect(createTenantTokens(options(server, { tenants })).get('acme')).resolves.toBe(token);
  });

  it('stops the tenant on a mismatch, naming both values', async () => {
    const server = await provider(async () => ({ access_token: await craftToken({ ...GOOD_CLAIMS, tenant_id: 4712 }), expires_in: 3600 }));
    const tenants = { acme: { ...TENANTS.acme, tenantId: '4711' } };

    const failure = createTenantTokens(options(server, { tenants })).get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-wrong-tenant',
      tenant: 'acme',
      message: 'tenant acme: the access token carries tenant_id 4712; expected tenant_id "4711" (tenants.acme.tenantId)',
    });
  });
});

describe('expires_in', () => {
  it.each<[string, unknown]>([
    ['zero', 0],
    ['negative', -5],
    ['a fraction', 1.5],
    ['more than 24 h', 86_401],
    ['a word', 'soon'],
    ['null', null],
    ['a boolean', true],
  ])('refuses %s with a message naming the value and the range', async (_case, expiresIn) => {
    const server = await provider(async () => ({ access_token: await craftToken(GOOD_CLAIMS), expires_in: expiresIn }));

    const failure = createTenantTokens(options(server)).get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-token-endpoint',
      tenant: 'acme',
      retryable: false,
      message: `tenant acme: the token endpoint answered expires_in ${JSON.stringify(expiresIn)}; expected a whole number of seconds from 1 to 86400 (24 h)`,
    });
  });

  it.each<[string, unknown, number]>([
    ['24 h', 86_400, 86_400],
    ['1 s', 1, 1],
    ['a number sent as a string', '600', 600],
  ])('accepts %s and refreshes the token 60 s before (or half way through) its life', async (_case, expiresIn, seconds) => {
    const server = await provider(async () => ({ access_token: await craftToken(GOOD_CLAIMS), expires_in: expiresIn }));
    const clock = { now: Date.UTC(2027, 0, 1) };
    const tokens = createTenantTokens(options(server, { now: () => clock.now }));
    const first = await tokens.get('acme');
    const refreshAfterMs = seconds > 120 ? (seconds - 60) * 1000 : (seconds * 1000) / 2;

    clock.now += refreshAfterMs - 1;
    const cached = await tokens.get('acme');
    clock.now += 1;
    await tokens.get('acme');

    expect(cached).toBe(first);
    expect(tokenPosts(server)).toHaveLength(2);
  });
});

describe('the token endpoint stays on the origin of auth.url', () => {
  it('refuses a discovery document that names a token endpoint elsewhere, before the secret is sent anywhere', async () => {
    const foreign = await start((_request, response) => sendJson(response, 200, { access_token: 'should-never-be-asked', expires_in: 3600 }));
    const server = await start((_request, response, self) => sendJson(response, 200, discoveryDocument(self, `${foreign.url}${TOKEN_PATH}`)));
    const tokens = createTenantTokens(options(server));

    const failure = tokens.get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-discovery',
      retryable: false,
      message: `OIDC discovery: the metadata of ${server.url}/realms/cms names token endpoint ${foreign.url}${TOKEN_PATH}, which is not on the origin of auth.url (${server.url}); no client secret was sent. If that endpoint is right, name it in auth.tokenEndpoint`,
    });
    expect(foreign.requests).toEqual([]);
    expect(server.requests.map((request) => request.method)).toEqual(['GET']);
  });

  it('uses auth.tokenEndpoint as named, on another origin, without asking for discovery', async () => {
    const token = await craftToken(GOOD_CLAIMS);
    const server = await start((_request, response) => sendJson(response, 500, { error: 'not_expected' }));
    const endpoint = await start((_request, response) => sendJson(response, 200, { access_token: token, expires_in: 3600 }));
    const auth = { url: server.url, realm: 'cms', tokenEndpoint: `${endpoint.url}/oauth2/token` };

    const received = await createTenantTokens(options(server, { auth })).get('acme');

    expect(received).toBe(token);
    expect(server.requests).toEqual([]);
    expect(endpoint.requests).toEqual([
      expect.objectContaining({ method: 'POST', path: '/oauth2/token', form: expect.objectContaining({ client_id: 'acme-rw' }) }),
    ]);
  });

  it('does not follow a redirect of the token endpoint: the request carries the secret', async () => {
    const elsewhere = await start((_request, response) => sendJson(response, 200, { access_token: 'should-never-be-asked', expires_in: 3600 }));
    const server = await start((request, response, self) => {
      if (request.path === DISCOVERY_PATH) return sendJson(response, 200, discoveryDocument(self));
      response.writeHead(307, { location: `${elsewhere.url}${TOKEN_PATH}` }).end();
    });

    const failure = createTenantTokens(options(server)).get('acme');

    await expect(failure).rejects.toMatchObject({
      code: 'auth-token-endpoint',
      status: 307,
      retryable: false,
      message: 'tenant acme: token request failed: HTTP 307 redirect (not followed: the request carries the client secret)',
    });
    expect(elsewhere.requests).toEqual([]);
  });
});

describe('a hung identity provider', () => {
  const TIMEOUT_MS = 200;
  // 3 attempts of 200 ms, the backoff waits injected away; the rest is slack for a busy machine.
  const BOUND_MS = 3 * TIMEOUT_MS + 1_500;

  it.each<[string, (request: ReceivedRequest, response: ServerResponse, self: string) => void, string, string[]]>([
    [
      'discovery that never answers',
      () => undefined,
      'OIDC discovery at {url}/realms/cms failed: no answer from {url} within 200 ms (gave up after 3 attempts)',
      ['GET', 'GET', 'GET'],
    ],
    [
      'a token endpoint that never answers',
      (request, response, self) => {
        if (request.path === DISCOVERY_PATH) sendJson(response, 200, discoveryDocument(self));
      },
      'tenant acme: token request failed: no answer from {url} within 200 ms (gave up after 3 attempts)',
      ['GET', 'POST', 'POST', 'POST'],
    ],
    [
      'a token endpoint that sends its headers and then hangs',
      (request, response, self) => {
        if (request.path === DISCOVERY_PATH) return sendJson(response, 200, discoveryDocument(self));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"access_token": "');
      },
      'tenant acme: token request failed: no answer from {url} within 200 ms (gave up after 3 attempts)',
      ['GET', 'POST', 'POST', 'POST'],
    ],
  ])('fails the tenant within about attempts x timeout on %s', async (_case, handle, message, methods) => {
    const server = await start(handle);
    const { sleep, waits } = recordingSleep();
    const tokens = createTenantTokens(options(server, { auth: { url: server.url, realm: 'cms', timeoutMs: TIMEOUT_MS }, sleep }));
    const started = performance.now();

    const failure = await tokens.get('acme').catch((error: unknown) => error);

    const elapsed = performance.now() - started;
    expect(failure).toBeInstanceOf(AuthError);
    expect(failure).toMatchObject({ retryable: true, message: message.replaceAll('{url}', server.url) });
    expect(elapsed).toBeGreaterThanOrEqual(3 * TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(BOUND_MS);
    expect(waits).toHaveLength(2);
    expect(server.requests.map((request) => request.method)).toEqual(methods);
  });
});

describe('no token in a message', () => {
  it('registers the access token before refusing an answer it came in', async () => {
    const token = await craftToken(GOOD_CLAIMS);
    const server = await provider(async () => ({ access_token: token, token_type: token, expires_in: 3600 }));
    const redactor = new Redactor();

    const failure = (await createTenantTokens(options(server, { redactor }))
      .get('acme')
      .catch((error: unknown) => error)) as AuthError;

    expect(failure.message).not.toContain(token.slice(0, 30));
    expect(failure.message).toContain(REDACTED);
    expect(redactor.redact(token)).toBe(REDACTED);
  });
});
