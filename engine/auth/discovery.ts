/**
 * OIDC discovery of the realm's token endpoint: `{auth.url}/realms/{realm}/.well-known/openid-configuration`,
 * with the `issuer` checked by openid-client against `{auth.url}/realms/{realm}`.
 */
import * as client from 'openid-client';
import { isLoopbackHttp } from '../config/parse.ts';
import type { Config } from '../config/types.ts';
import { AuthError } from './errors.ts';
import { describeOAuthFailure } from './oauth-failure.ts';
import { TOKEN_RETRY, withRetry } from './retry.ts';

/** The realm's metadata, shared by every tenant's client. */
export interface AuthorizationServer {
  readonly issuer: string;
  readonly metadata: client.ServerMetadata;
  /** Plain-HTTP requests are allowed: only when the auth URL is an http:// loopback URL. */
  readonly allowHttp: boolean;
}

export interface DiscoveryDeps {
  readonly transport: client.CustomFetch;
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

function checkTokenEndpoint(issuer: URL, metadata: client.ServerMetadata, allowHttp: boolean): void {
  const endpoint = metadata.token_endpoint;
  if (endpoint === undefined || !URL.canParse(endpoint)) {
    throw new AuthError(`OIDC discovery: the metadata of ${issuer.href} has no valid token_endpoint`, { code: 'auth-discovery' });
  }
  const url = new URL(endpoint);
  // Plain HTTP is allowed for the whole client once allowed at all; keep it to loopback endpoints.
  if (url.protocol !== 'https:' && !(allowHttp && isLoopbackHttp(url))) {
    throw new AuthError(`OIDC discovery: the token endpoint ${url.origin}${url.pathname} of ${issuer.href} is not https://`, { code: 'auth-discovery' });
  }
}

async function discoverOnce(issuer: URL, allowHttp: boolean, deps: DiscoveryDeps): Promise<client.ServerMetadata> {
  const configuration = await client.discovery(issuer, DISCOVERY_CLIENT_ID, undefined, client.None(), {
    [client.customFetch]: deps.transport,
    execute: allowHttp ? [client.allowInsecureRequests] : [],
  });
  // A plain copy: serverMetadata() adds helper functions that a new Configuration would have to clone.
  return { ...configuration.serverMetadata() };
}

/** Fetches and checks the realm's metadata; transient failures are retried with backoff. */
export async function discoverAuthorizationServer(auth: Config['auth'], deps: DiscoveryDeps): Promise<AuthorizationServer> {
  const issuer = issuerUrl(auth);
  const allowHttp = isLoopbackHttp(issuer);
  try {
    const metadata = await withRetry(
      async () => {
        try {
          return await discoverOnce(issuer, allowHttp, deps);
        } catch (error) {
          throw await discoveryError(issuer, error);
        }
      },
      (error) => error instanceof AuthError && error.retryable,
      { ...TOKEN_RETRY, random: deps.random, sleep: deps.sleep },
    );
    checkTokenEndpoint(issuer, metadata, allowHttp);
    return { issuer: metadata.issuer, metadata, allowHttp };
  } catch (error) {
    throw await discoveryError(issuer, error);
  }
}
