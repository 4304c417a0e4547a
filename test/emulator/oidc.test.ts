import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../emulator/index.ts';
import { decodeJwtPayload, requestToken, SEED, start, tokenUrl } from './helpers.ts';

let emulator: Emulator;

beforeAll(async () => {
  emulator = await start();
});

afterAll(async () => {
  await emulator.close();
});

function discoveryUrl(): string {
  return `${emulator.urls.authUrl}/realms/${emulator.urls.realm}/.well-known/openid-configuration`;
}

describe('discovery', () => {
  it('serves an issuer equal to the URL the document was fetched from', async () => {
    const response = await fetch(discoveryUrl());

    const metadata = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(200);
    expect(`${String(metadata.issuer)}/.well-known/openid-configuration`).toBe(discoveryUrl());
    expect(metadata.token_endpoint).toBe(tokenUrl(emulator));
    expect(metadata.grant_types_supported).toContain('client_credentials');
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(['client_secret_basic', 'client_secret_post']));
  });
});

describe('client-credentials grant', () => {
  it('issues an RS256 JWT with tenant_id, the asked scope, the seed ttl and the API audience (client_secret_post)', async () => {
    const response = await requestToken(emulator, 'acme-rw', 'acme-secret-new', 'core:write');

    const body = (await response.json()) as { access_token: string; expires_in: number; token_type: string; scope: string };
    expect(response.status).toBe(200);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: SEED.tokenTtlSeconds, scope: 'core:write' });
    const metadata = (await (await fetch(discoveryUrl())).json()) as { jwks_uri: string; issuer: string };
    const { payload, protectedHeader } = await jwtVerify(body.access_token, createRemoteJWKSet(new URL(metadata.jwks_uri)), {
      issuer: metadata.issuer,
      audience: emulator.urls.baseUrl,
    });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ tenant_id: 'acme', scope: 'core:write', client_id: 'acme-rw' });
    expect(payload.exp! - payload.iat!).toBe(SEED.tokenTtlSeconds);
  });

  it('accepts client_secret_basic', async () => {
    const basic = Buffer.from(`${encodeURIComponent('globex-rw')}:${encodeURIComponent('globex-secret')}`).toString('base64');

    const response = await fetch(tokenUrl(emulator), {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'core:read' }),
    });

    const body = (await response.json()) as { access_token: string };
    expect(response.status).toBe(200);
    expect(decodeJwtPayload(body.access_token)).toMatchObject({ tenant_id: 'globex', scope: 'core:read' });
  });

  it.each([
    ['a wrong secret', 'acme-rw', 'not-the-secret'],
    ['an unknown client', 'nobody', 'acme-secret-new'],
    ["another client's secret", 'acme-ro', 'acme-secret-new'],
  ])('answers invalid_client (401) for %s', async (_case, clientId, secret) => {
    const response = await requestToken(emulator, clientId, secret, 'core:read');

    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('accepts both the secret and the previous secret during rotation', async () => {
    const current = await requestToken(emulator, 'acme-rw', 'acme-secret-new', 'core:read');
    const previous = await requestToken(emulator, 'acme-rw', 'acme-secret-old', 'core:read');
    const noOverlap = await requestToken(emulator, 'acme-ro', 'acme-secret-old', 'core:read');

    expect(current.status).toBe(200);
    expect(previous.status).toBe(200);
    expect(noOverlap.status).toBe(401);
  });

  it.each([
    ['a registered scope the client lacks', 'core:read core:write'],
    ['a scope nobody has', 'core:read core:admin'],
  ])('answers invalid_scope (400) for %s', async (_case, scope) => {
    const response = await requestToken(emulator, 'acme-ro', 'acme-ro-secret', scope);

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_scope' });
  });

  it('grants only the scopes asked for', async () => {
    const response = await requestToken(emulator, 'acme-rw', 'acme-secret-new', 'core:read');

    const body = (await response.json()) as { access_token: string; scope: string };
    expect(body.scope).toBe('core:read');
    expect(decodeJwtPayload(body.access_token).scope).toBe('core:read');
  });
  it('refuses a resource indicator other than the API (invalid_target)', async () => {
    const response = await fetch(tokenUrl(emulator), {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'acme-rw',
        client_secret: 'acme-secret-new',
        resource: 'https://elsewhere.example',
      }),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_target' });
  });

  it('serves a client with no scopes: a token without scope, and invalid_scope for any asked', async () => {
    const bare = await start({ realm: 'bare', tenants: { solo: { clients: [{ clientId: 'c', secret: 's', scopes: [] }] } } });
    try {
      const plain = await requestToken(bare, 'c', 's', '');
      const asked = await requestToken(bare, 'c', 's', 'core:read');

      const body = (await plain.json()) as { access_token: string };
      expect(plain.status).toBe(200);
      expect(decodeJwtPayload(body.access_token)).toMatchObject({ tenant_id: 'solo' });
      expect(decodeJwtPayload(body.access_token).scope).toBeUndefined();
      expect(asked.status).toBe(400);
    } finally {
      await bare.close();
    }
  });
});

describe('interoperability with openid-client v6', () => {
  it.each([
    ['client_secret_post', client.ClientSecretPost('acme-secret-new')],
    ['client_secret_basic', client.ClientSecretBasic('acme-secret-new')],
  ])('completes discovery and the client-credentials grant (%s)', async (_method, authentication) => {
    const server = new URL(`${emulator.urls.authUrl}/realms/${emulator.urls.realm}`);

    const config = await client.discovery(server, 'acme-rw', undefined, authentication, { execute: [client.allowInsecureRequests] });
    const tokens = await client.clientCredentialsGrant(config, { scope: 'core:read core:write' });

    expect(config.serverMetadata().issuer).toBe(server.href);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expiresIn()).toBeGreaterThan(SEED.tokenTtlSeconds - 5);
    expect(decodeJwtPayload(tokens.access_token)).toMatchObject({ tenant_id: 'acme', scope: 'core:read core:write' });
  });

  it('surfaces invalid_client as a ResponseBodyError', async () => {
    const server = new URL(`${emulator.urls.authUrl}/realms/${emulator.urls.realm}`);
    const config = await client.discovery(server, 'acme-rw', 'wrong-secret', undefined, { execute: [client.allowInsecureRequests] });

    const failure = client.clientCredentialsGrant(config, { scope: 'core:read' });

    await expect(failure).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
  });
});
