/** Shared fixtures for the emulator suites: a two-tenant seed and small HTTP helpers. */
import { startEmulator, type Emulator, type EmulatorOptions, type Seed } from '../../emulator/index.ts';

export const SEED = {
  realm: 'cms',
  tokenTtlSeconds: 300,
  rateLimit: { requestsPerSecond: 1000, burst: 1000 },
  tenants: {
    acme: {
      clients: [
        { clientId: 'acme-rw', secret: 'acme-secret-new', previousSecret: 'acme-secret-old', scopes: ['core:read', 'core:write'] },
        { clientId: 'acme-ro', secret: 'acme-ro-secret', scopes: ['core:read'] },
      ],
      contracts: {
        '4711': { Name: 'Facility cleaning', Company: [{ Id: 12, RelationType: 'Supplier' }] },
        '4712': { Name: 'Catering' },
      },
    },
    globex: {
      clients: [{ clientId: 'globex-rw', secret: 'globex-secret', scopes: ['core:read', 'core:write'] }],
      contracts: { '9001': { Name: 'Globex lease', Area: 3 } },
    },
  },
} as const satisfies Seed;

export async function start(seed: unknown = SEED, options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator(seed, options);
}

export function tokenUrl(emulator: Emulator): string {
  return `${emulator.urls.authUrl}/realms/${emulator.urls.realm}/protocol/openid-connect/token`;
}

export async function requestToken(emulator: Emulator, clientId: string, secret: string, scope = 'core:read core:write'): Promise<Response> {
  return fetch(tokenUrl(emulator), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope }),
  });
}

export async function token(emulator: Emulator, clientId = 'acme-rw', secret = 'acme-secret-new', scope = 'core:read core:write'): Promise<string> {
  const response = await requestToken(emulator, clientId, secret, scope);
  const body = (await response.json()) as { access_token?: string };
  if (response.status !== 200 || !body.access_token) throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

export function patch(emulator: Emulator, accessToken: string, id: string, body: unknown, contentType = 'application/json'): Promise<Response> {
  return fetch(`${emulator.urls.baseUrl}/contract/${id}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function read(emulator: Emulator, accessToken: string, id: string): Promise<Response> {
  return fetch(`${emulator.urls.baseUrl}/contract/${id}`, { headers: { Authorization: `Bearer ${accessToken}` } });
}

/** The live contract, through the admin endpoint (no token, no rate limit). */
export async function live(emulator: Emulator, tenant: string, id: string): Promise<unknown> {
  const response = await fetch(`${emulator.urls.adminUrl}/contracts/${tenant}/${id}`);
  return response.status === 200 ? response.json() : undefined;
}

export async function admin(emulator: Emulator, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${emulator.urls.adminUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export function decodeJwtPayload(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
