/**
 * The client-credentials grant for one tenant: send it (openid-client, `client_secret_post`), parse
 * the answer, retry transient failures, and fall back once to the previous secret on `invalid_client`.
 */
import * as client from 'openid-client';
import type { Logger, Redactor } from '../log/logger.ts';
import type { AuthorizationServer } from './discovery.ts';
import { AuthError } from './errors.ts';
import { describeOAuthFailure } from './oauth-failure.ts';
import { TOKEN_RETRY, withRetry } from './retry.ts';
import type { Scope } from './scope.ts';

/** An access token as received: its life is counted from local receipt by the cache. */
export interface GrantedToken {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
}

export interface GrantRequest {
  readonly tenant: string;
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  readonly secret: string;
  /** Resolves the configured previousClientSecret; called only after `invalid_client`. */
  readonly previousSecret?: () => Promise<string>;
}

export interface GrantDeps {
  readonly server: AuthorizationServer;
  readonly transport: client.CustomFetch;
  readonly random: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly logger: Logger;
  /** Registers received tokens; scrubs server-sent text before it is quoted. */
  readonly redactor: Redactor;
}

/** The life DESIGN.md section 1 publishes, for an answer without `expires_in` (it is only RECOMMENDED by RFC 6749). */
export const DEFAULT_TOKEN_LIFE_SECONDS = 3600;

/** Sends the grant; rejects with openid-client's errors. */
export async function sendClientCredentials(
  request: Pick<GrantRequest, 'clientId' | 'scopes'>,
  secret: string,
  deps: Pick<GrantDeps, 'server' | 'transport'>,
): Promise<client.TokenEndpointResponse> {
  const configuration = new client.Configuration(deps.server.metadata, request.clientId, undefined, client.ClientSecretPost(secret));
  configuration[client.customFetch] = deps.transport;
  if (deps.server.allowHttp) client.allowInsecureRequests(configuration);
  return client.clientCredentialsGrant(configuration, { scope: request.scopes.join(' ') });
}

/** Checks what openid-client has not: a usable lifetime. */
export function parseTokenResponse(tenant: string, response: client.TokenEndpointResponse): GrantedToken {
  const expiresIn = response.expires_in ?? DEFAULT_TOKEN_LIFE_SECONDS;
  if (!Number.isFinite(expiresIn) || expiresIn <= 0) {
    throw new AuthError(`tenant ${tenant}: the token endpoint answered expires_in ${String(expiresIn)}; expected a positive number of seconds`, {
      code: 'auth-token-endpoint',
      tenant,
    });
  }
  return { accessToken: response.access_token, expiresInSeconds: expiresIn };
}

function codeFor(error: string | undefined): 'auth-invalid-client' | 'auth-invalid-scope' | 'auth-token-endpoint' {
  if (error === 'invalid_client') return 'auth-invalid-client';
  if (error === 'invalid_scope') return 'auth-invalid-scope';
  return 'auth-token-endpoint';
}

function describeRefusal(request: Pick<GrantRequest, 'clientId' | 'scopes'>, code: ReturnType<typeof codeFor>, reason: string): string {
  if (code === 'auth-invalid-client') return `the token endpoint rejected client ${request.clientId} (invalid_client)`;
  if (code === 'auth-invalid-scope') return `the token endpoint refused scope "${request.scopes.join(' ')}" for client ${request.clientId} (invalid_scope)`;
  return `token request failed: ${reason}`;
}

/** openid-client's error as an AuthError; server-sent text goes through the redactor before it is quoted. */
export async function grantError(request: Pick<GrantRequest, 'tenant' | 'clientId' | 'scopes'>, error: unknown, redactor: Redactor): Promise<AuthError> {
  if (error instanceof AuthError) return error;
  const failure = await describeOAuthFailure(error);
  const description = failure.error_description === undefined ? undefined : redactor.redact(failure.error_description);
  const code = codeFor(failure.error);
  const what = describeRefusal(request, code, redactor.redact(failure.reason));
  return new AuthError(`tenant ${request.tenant}: ${what}${description === undefined ? '' : `: ${description}`}`, {
    code,
    tenant: request.tenant,
    status: failure.status,
    error: failure.error,
    error_description: description,
    retryable: failure.retryable,
    cause: failure.cause,
  });
}

async function grantWithSecret(request: GrantRequest, secret: string, deps: GrantDeps): Promise<GrantedToken> {
  const response = await withRetry(
    async () => {
      try {
        return await sendClientCredentials(request, secret, deps);
      } catch (error) {
        throw await grantError(request, error, deps.redactor);
      }
    },
    (error) => error instanceof AuthError && error.retryable,
    { ...TOKEN_RETRY, random: deps.random, sleep: deps.sleep },
  );
  // Registered before any check can fail, so that no later log line or message can carry it.
  deps.redactor.add(response.access_token);
  return parseTokenResponse(request.tenant, response);
}

async function grantWithPreviousSecret(request: GrantRequest, rejected: AuthError, deps: GrantDeps): Promise<GrantedToken> {
  const { tenant, clientId } = request;
  let previous: string;
  try {
    previous = await request.previousSecret!();
  } catch (error) {
    throw new AuthError(`tenant ${tenant}: the token endpoint rejected clientSecret of client ${clientId} (invalid_client), and previousClientSecret cannot be resolved`, {
      code: 'auth-invalid-client',
      tenant,
      status: rejected.status,
      error: rejected.error,
      cause: error,
    });
  }
  deps.logger.warn(
    { tenant, clientId, status: rejected.status, error: rejected.error },
    'the identity provider rejected clientSecret (invalid_client); retrying once with previousClientSecret. Rotation is due: register the new secret or correct clientSecret before the previous one expires',
  );
  try {
    return await grantWithSecret(request, previous, deps);
  } catch (error) {
    if (error instanceof AuthError && error.code === 'auth-invalid-client') {
      throw new AuthError(`tenant ${tenant}: the token endpoint rejected both clientSecret and previousClientSecret of client ${clientId} (invalid_client)`, {
        code: 'auth-invalid-client',
        tenant,
        status: error.status,
        error: error.error,
        error_description: error.error_description,
        cause: error,
      });
    }
    throw error;
  }
}

/** One access token for the tenant, or an AuthError. Checks of the token's claims are the caller's. */
export async function requestTenantToken(request: GrantRequest, deps: GrantDeps): Promise<GrantedToken> {
  try {
    return await grantWithSecret(request, request.secret, deps);
  } catch (error) {
    if (error instanceof AuthError && error.code === 'auth-invalid-client' && request.previousSecret !== undefined) {
      return grantWithPreviousSecret(request, error, deps);
    }
    throw error;
  }
}
