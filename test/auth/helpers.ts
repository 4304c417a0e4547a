/** Shared fixtures of the auth suites: configs pointing at an emulator, request-log reads, crafted tokens. */
import { SignJWT, generateKeyPair, type JWTPayload } from 'jose';
import type { Emulator, RequestLogEntry } from '../../emulator/index.ts';
import type { TenantTokensOptions } from '../../engine/auth/index.ts';
import type { TenantConfig } from '../../engine/config/index.ts';
import { admin } from '../emulator/helpers.ts';

export function authOf(emulator: Emulator): TenantTokensOptions['auth'] {
  return { url: emulator.urls.authUrl, realm: emulator.urls.realm };
}

/** acme and globex of test/emulator/helpers.ts SEED, with their secrets in ACME_SECRET / GLOBEX_SECRET. */
export const TENANTS: Readonly<Record<string, TenantConfig>> = {
  acme: { clientId: 'acme-rw', clientSecret: { env: 'ACME_SECRET' } },
  globex: { clientId: 'globex-rw', clientSecret: { env: 'GLOBEX_SECRET' } },
};

export const ENV = { ACME_SECRET: 'acme-secret-new', GLOBEX_SECRET: 'globex-secret' } as const;

export async function tokenRequests(emulator: Emulator): Promise<RequestLogEntry[]> {
  const entries = (await (await admin(emulator, 'GET', '/requests')).json()) as RequestLogEntry[];
  return entries.filter((entry) => entry.kind === 'token');
}

/** A fetch that passes every request to the real one and records its URL. */
export function recordingFetch(): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  function recorded(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
    urls.push(String(input));
    return fetch(input, init);
  }
  return { fetch: recorded, urls };
}

/** A sleep that returns at once and records what it was asked to wait. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  async function sleep(ms: number): Promise<void> {
    waits.push(ms);
  }
  return { sleep, waits };
}

/** A JWT signed with a throwaway key: what an identity provider we do not run could hand out. */
export async function craftToken(claims: JWTPayload): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' }).setIssuedAt().setExpirationTime('1h').sign(privateKey);
}

/**
 * An identity provider at https://idp.test answering through fetch only: discovery for realm `cms`
 * and a token endpoint that hands out `accessToken()`. Stands in for the server, not for the client code under test.
 */
export function fakeIdentityProvider(
  accessToken: () => Promise<string> | string,
  expiresIn = 3600,
): { fetch: typeof fetch; auth: TenantTokensOptions['auth']; tokenRequests: () => number } {
  const issuer = 'https://idp.test/realms/cms';
  let requests = 0;
  async function serve(input: Parameters<typeof fetch>[0]): Promise<Response> {
    const url = String(input);
    if (url === `${issuer}/.well-known/openid-configuration`) {
      return Response.json({ issuer, token_endpoint: `${issuer}/protocol/openid-connect/token`, grant_types_supported: ['client_credentials'] });
    }
    if (url === `${issuer}/protocol/openid-connect/token`) {
      requests += 1;
      return Response.json({ access_token: await accessToken(), token_type: 'Bearer', expires_in: expiresIn });
    }
    return Response.json({ error: 'not_found' }, { status: 404 });
  }
  return { fetch: serve as typeof fetch, auth: { url: 'https://idp.test', realm: 'cms' }, tokenRequests: () => requests };
}
