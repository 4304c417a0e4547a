/**
 * The client-credentials grant for one tenant: send it, parse the answer, retry transient failures,
 * and fall back once to the previous secret on `invalid_client`.
 */
import type * as client from 'openid-client';
import type { Logger, Redactor } from '../log/logger.ts';
import type { AuthorizationServer } from './discovery.ts';
import { AuthError, afterAttempts } from './errors.ts';
import { OversizedAnswerError, TransportError } from './oauth-failure.ts';
import { TOKEN_RETRY, withRetry } from './retry.ts';
import type { Scope } from './scope.ts';
import { parseTokenResponse, sendTokenRequest, type GrantedToken } from './token-endpoint.ts';

export { DEFAULT_TOKEN_LIFE_SECONDS, type GrantedToken } from './token-endpoint.ts';

/** A granted token, and whether it took previousClientSecret to get it. */
export interface TenantGrant extends GrantedToken {
  readonly usedPreviousSecret?: true;
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

async function grantOnce(request: GrantRequest, secret: string, deps: GrantDeps): Promise<GrantedToken> {
  let response: Response;
  try {
    response = await sendTokenRequest(deps.server.tokenEndpoint, request, secret, deps.transport);
  } catch (error) {
    if (error instanceof OversizedAnswerError) {
      throw new AuthError(`tenant ${request.tenant}: token request failed: ${error.message}`, {
        code: 'auth-token-endpoint',
        tenant: request.tenant,
        retryable: false,
        cause: error,
      });
    }
    // The transport's message names the origin and the reason, never the request's body.
    const reason = error instanceof TransportError ? error.message : 'the request could not be sent';
    throw new AuthError(`tenant ${request.tenant}: token request failed: ${reason}`, {
      code: 'auth-token-endpoint',
      tenant: request.tenant,
      retryable: error instanceof TransportError,
      ...(error instanceof TransportError ? { cause: error } : {}),
    });
  }
  return parseTokenResponse(request, response, deps.redactor);
}

async function grantWithSecret(request: GrantRequest, secret: string, deps: GrantDeps): Promise<GrantedToken> {
  try {
    return await withRetry(
      () => grantOnce(request, secret, deps),
      (error) => error instanceof AuthError && error.retryable,
      { ...TOKEN_RETRY, random: deps.random, sleep: deps.sleep },
    );
  } catch (error) {
    throw error instanceof AuthError && error.retryable ? afterAttempts(error, TOKEN_RETRY.attempts) : error;
  }
}

async function grantWithPreviousSecret(request: GrantRequest, rejected: AuthError, deps: GrantDeps): Promise<TenantGrant> {
  const { tenant, clientId } = request;
  let previous: string;
  try {
    previous = await request.previousSecret!();
  } catch (error) {
    throw new AuthError(
      `tenant ${tenant}: the token endpoint rejected clientSecret of client ${clientId} (invalid_client), and previousClientSecret cannot be resolved`,
      {
        code: 'auth-invalid-client',
        tenant,
        status: rejected.status,
        error: rejected.error,
        cause: error,
      },
    );
  }
  deps.logger.warn(
    { tenant, clientId, status: rejected.status, error: rejected.error },
    'the identity provider rejected clientSecret (invalid_client); retrying once with previousClientSecret. Rotation is due: register the new secret or correct clientSecret before the previous one expires',
  );
  try {
    return { ...(await grantWithSecret(request, previous, deps)), usedPreviousSecret: true };
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
export async function requestTenantToken(request: GrantRequest, deps: GrantDeps): Promise<TenantGrant> {
  try {
    return await grantWithSecret(request, request.secret, deps);
  } catch (error) {
    if (error instanceof AuthError && error.code === 'auth-invalid-client' && request.previousSecret !== undefined) {
      return grantWithPreviousSecret(request, error, deps);
    }
    throw error;
  }
}
