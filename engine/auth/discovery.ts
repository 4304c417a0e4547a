/**
 * The realm's token endpoint: named in the config (`auth.tokenEndpoint`), or found by OIDC discovery at
 * `{auth.url}/realms/{realm}/.well-known/openid-configuration`, with the `issuer` checked by
 * openid-client against `{auth.url}/realms/{realm}` and the token endpoint kept to the origin of
 * `auth.url` (docs/architecture.md section 7): the client secret goes only where the config points.
 */
import * as client from 'openid-client';
import { isLoopbackHttp } from '../config/parse.ts';
import type { Config } from '../config/types.ts';
import { AuthError, afterAttempts } from './errors.ts';
import { describeOAuthFailure } from './oauth-failure.ts';
import { TOKEN_RETRY, withRetry } from './retry.ts';

/** Where every tenant's client sends its grant. */
export interface AuthorizationServer {
  /** https://, or http:// on a loopback host. */
  readonly tokenEndpoint: URL;
}

export interface DiscoveryDeps {
  readonly transport: client.CustomFetch;
  /** The transport's bound; openid-client's own (whole seconds) is set just above it. */
  readonly timeoutMs: number;
  readonly random: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

// openid-client builds a per-client Configuration from discovery; the one it returns here is only
// read for its server metadata, so the client id is a placeholder.
const DISCOVERY_CLIENT_ID = 'contract-sync-discovery';

/** `{auth.url}/realms/{realm}`: the issuer identifier the discovered metadata must name. */
export function issuerUrl(auth: Config['auth']): URL {
  return new URL(`${auth.url.replace(/\/+$/, '')}/realms/${encodeURIComponent(auth.realm)}`);
}

async function discoveryError(issuer: URL, error: unknown): Promise<AuthError> {
  if (error instanceof AuthError) return error;
  const attribute = (error as { cause?: { attribute?: unknown; body?: { issuer?: unknown } } }).cause;
  if (attribute?.attribute === 'issuer') {
    return new AuthError(`OIDC discovery: the metadata at ${issuer.href} names issuer ${String(attribute.body?.issuer)}, expected ${issuer.href}`, {
      code: 'auth-discovery',
      cause: error,
    });
  }
  const failure = await describeOAuthFailure(error);
  return new AuthError(`OIDC discovery at ${issuer.href} failed: ${failure.reason}`, {
    code: 'auth-discovery',
    status: failure.status,
    error: failure.error,
    error_description: failure.error_description,
    retryable: failure.retryable,
    cause: failure.cause,
  });
}

/** A token endpoint that is an https:// URL, or an http:// one on a loopback host; otherwise undefined. */
export function secureEndpoint(value: string | undefined): URL | undefined {
  if (value === undefined || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== 'https:' && !isLoopbackHttp(url)) return undefined;
  return url;
}

function checkTokenEndpoint(issuer: URL, authUrl: URL, metadata: client.ServerMetadata): URL {
  const endpoint = metadata.token_endpoint;
  if (endpoint === undefined || !URL.canParse(endpoint)) {
    throw new AuthError(`OIDC discovery: the metadata of ${issuer.href} has no valid token_endpoint`, { code: 'auth-discovery' });
  }
  const url = new URL(endpoint);
  // Plain HTTP only to a loopback host, which the config allows only for a loopback auth.url.
  if (secureEndpoint(endpoint) === undefined) {
    throw new AuthError(`OIDC discovery: the token endpoint ${url.origin}${url.pathname} of ${issuer.href} is not https://`, { code: 'auth-discovery' });
  }
  // The grant carries the client secret: a discovery document may not send it to another origin.
  if (url.origin !== authUrl.origin) {
    throw new AuthError(
      `OIDC discovery: the metadata of ${issuer.href} names token endpoint ${url.origin}${url.pathname}, which is not on the origin of auth.url (${authUrl.origin}); no client secret was sent. If that endpoint is right, name it in auth.tokenEndpoint`,
      { code: 'auth-discovery' },
    );
  }
  return url;
}

async function discoverOnce(issuer: URL, deps: DiscoveryDeps): Promise<client.ServerMetadata> {
  const configuration = await client.discovery(issuer, DISCOVERY_CLIENT_ID, undefined, client.None(), {
    [client.customFetch]: deps.transport,
    // The transport's own bound ends the request first; openid-client's default would be 30 s.
    timeout: Math.ceil(deps.timeoutMs / 1000) + 1,
    execute: isLoopbackHttp(issuer) ? [client.allowInsecureRequests] : [],
  });
  // A plain copy: serverMetadata() adds helper functions.
  return { ...configuration.serverMetadata() };
}

/** The configured token endpoint without any request, or the discovered one; transient failures are retried with backoff. */
export async function discoverAuthorizationServer(auth: Config['auth'], deps: DiscoveryDeps): Promise<AuthorizationServer> {
  // Checked by createTenantTokens (and by the config before it): https://, or http:// on a loopback host.
  if (auth.tokenEndpoint !== undefined) return { tokenEndpoint: new URL(auth.tokenEndpoint) };
  const issuer = issuerUrl(auth);
  let metadata: client.ServerMetadata;
  try {
    metadata = await withRetry(
      async () => {
        try {
          return await discoverOnce(issuer, deps);
        } catch (error) {
          throw await discoveryError(issuer, error);
        }
      },
      (error) => error instanceof AuthError && error.retryable,
      { ...TOKEN_RETRY, random: deps.random, sleep: deps.sleep },
    );
  } catch (error) {
    const failure = await discoveryError(issuer, error);
    throw failure.retryable ? afterAttempts(failure, TOKEN_RETRY.attempts) : failure;
  }
  return { tokenEndpoint: checkTokenEndpoint(issuer, new URL(auth.url), metadata) };
}
