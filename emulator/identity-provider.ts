/**
 * The realm's OpenID Connect provider: oidc-provider with Keycloak's paths, the client-credentials
 * grant only, and RS256 JWT access tokens carrying `tenant_id` and the granted `scope`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
// Before oidc-provider: its "Unsupported runtime" warning on Node 20 is dropped (see the module).
import { restoreWarnings } from './quiet-runtime-warning.ts';
import { errors, Provider, type KoaContextLike } from 'oidc-provider';
import type { JWK } from 'jose';
import type { Logger } from 'pino';
import { memoryAdapterFactory } from './memory-adapter.ts';
import { SERVICE_SCOPES } from './scopes.ts';
import type { ResolvedSeed } from './seed.ts';

restoreWarnings();

/** Keycloak's endpoint paths, relative to /realms/{realm}. */
export const REALM_ROUTES = {
  token: '/protocol/openid-connect/token',
  jwks: '/protocol/openid-connect/certs',
  authorization: '/protocol/openid-connect/auth',
  userinfo: '/protocol/openid-connect/userinfo',
  end_session: '/protocol/openid-connect/logout',
  revocation: '/protocol/openid-connect/revoke',
  introspection: '/protocol/openid-connect/token/introspect',
} as const;

export interface IdentityProviderOptions {
  readonly seed: ResolvedSeed;
  /** `{authUrl}/realms/{realm}`. */
  readonly issuer: string;
  /** The `aud` of every access token: the CMS base URL, checked by the API. */
  readonly audience: string;
  /** The RS256 signing key, private JWK with `kid`. */
  readonly signingKey: JWK;
  readonly logger: Logger;
}

export interface IdentityProvider {
  /** Serves one request whose URL starts with the realm's mount path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The tenant of the client a token request authenticated as (or tried to), once handled. */
  tenantOf(req: IncomingMessage): string | null;
  /** Every access token issued so far becomes invalid. */
  revokeIssued(): void;
  isRevoked(jti: string): boolean;
}

interface ClientEntry {
  readonly tenant: string;
  readonly scopes: ReadonlySet<string>;
  /** SHA-256 of each accepted secret: compared in constant time. */
  readonly secretHashes: readonly Buffer[];
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function clientTable(seed: ResolvedSeed): Map<string, ClientEntry> {
  const table = new Map<string, ClientEntry>();
  for (const [tenant, { clients = [] }] of Object.entries(seed.tenants)) {
    for (const client of clients) {
      const secrets = client.previousSecret === undefined ? [client.secret] : [client.secret, client.previousSecret];
      table.set(client.clientId, { tenant, scopes: new Set(client.scopes), secretHashes: secrets.map(sha256) });
    }
  }
  return table;
}

export function createIdentityProvider(options: IdentityProviderOptions): IdentityProvider {
  const { seed, issuer, audience, signingKey, logger } = options;
  const clients = clientTable(seed);
  // The service's own scopes (audit:read included) are known even when no seed client holds them.
  const allScopes = [...new Set([...SERVICE_SCOPES, ...[...clients.values()].flatMap((client) => [...client.scopes])])];
  const mountPath = new URL(issuer).pathname;
  const tenants = new WeakMap<IncomingMessage, string>();
  const issued = new Set<string>();
  const revoked = new Set<string>();

  async function getResourceServerInfo(ctx: KoaContextLike, indicator: string, client: { clientId: string }): Promise<object> {
    if (indicator !== audience) throw new errors.InvalidTarget(`the only resource of this realm is ${audience}`);
    // oidc-provider refuses only the registered scopes a client lacks; this also refuses unknown ones.
    const allowed = clients.get(client.clientId)?.scopes ?? new Set<string>();
    const asked = String(ctx.oidc?.params?.scope ?? '')
      .split(' ')
      .filter(Boolean);
    const refused = asked.find((scope) => !allowed.has(scope));
    if (refused !== undefined) throw new errors.InvalidScope('requested scope is not allowed', refused);
    return {
      scope: allScopes.join(' '),
      audience,
      accessTokenTTL: seed.tokenTtlSeconds,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'RS256' } },
    };
  }

  const provider = new Provider(issuer, {
    clients: Object.values(seed.tenants).flatMap(({ clients: list = [] }) =>
      list.map((client) => ({
        client_id: client.clientId,
        // Not used for authentication (see compareClientSecret below); oidc-provider wants one.
        client_secret: client.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        // oidc-provider refuses an empty scope list; getResourceServerInfo refuses every scope then.
        ...(client.scopes.length > 0 ? { scope: client.scopes.join(' ') } : {}),
      })),
    ),
    adapter: memoryAdapterFactory(),
    jwks: { keys: [signingKey] },
    scopes: allScopes,
    claims: { openid: ['sub'] },
    routes: REALM_ROUTES,
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => audience,
        useGrantedResource: async () => true,
        getResourceServerInfo,
      },
      rpInitiatedLogout: { enabled: false },
    },
    clientBasedCORS: () => false,
    extraTokenClaims: async (_ctx: KoaContextLike, token: { clientId: string }) => ({ tenant_id: clients.get(token.clientId)?.tenant }),
    // Every ttl explicit: the defaults print notices on stdout, which carries only the ready line.
    ttl: Object.fromEntries(
      ['ClientCredentials', 'AccessToken', 'IdToken', 'Grant', 'Session', 'Interaction', 'RefreshToken'].map((name) => [name, seed.tokenTtlSeconds]),
    ),
    // No interactions, so no cookies are ever set; oidc-provider still wants keys.
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // Client-credentials only: no user ever logs in.
    findAccount: async () => undefined,
    renderError: async (ctx: { type: string; body: unknown }, out: Record<string, string>) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });

  // Two secrets may be valid at once (rotation overlap): the secret and previousSecret of the seed.
  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientId: string }, actual: string): boolean {
    const hash = sha256(String(actual));
    let matches = false;
    for (const expected of clients.get(this.clientId)?.secretHashes ?? []) matches = timingSafeEqual(hash, expected) || matches;
    return matches;
  };

  provider.use(async function recordTenant(ctx, next) {
    try {
      await next();
    } finally {
      const clientId = ctx.oidc?.client?.clientId;
      const tenant = clientId === undefined ? undefined : clients.get(clientId)?.tenant;
      if (tenant !== undefined) tenants.set(ctx.req, tenant);
    }
  });

  provider.on('client_credentials.issued', function remember(token: { jti: string }) {
    issued.add(token.jti);
  });
  provider.on('server_error', function logError(_ctx: unknown, error: Error) {
    logger.error({ error: error.message }, 'identity provider error');
  });

  const callback = provider.callback();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Mounted like Express would: the provider sees the path below the mount, and the mount in originalUrl.
    const original = req.url ?? '/';
    Object.assign(req, { originalUrl: original, url: original.slice(mountPath.length) || '/' });
    await callback(req, res);
  }

  return {
    handle,
    tenantOf: (req) => tenants.get(req) ?? null,
    revokeIssued() {
      for (const jti of issued) revoked.add(jti);
    },
    isRevoked: (jti) => revoked.has(jti),
  };
}
