/** The one error class of engine/auth: a stable `code`, the tenant, and the OAuth details when there are any. */

export type AuthErrorCode =
  /** Discovery failed: unreachable, not JSON, issuer mismatch, no usable token endpoint. */
  | 'auth-discovery'
  /** The token endpoint refused the client's credentials (every configured secret). */
  | 'auth-invalid-client'
  /** The token endpoint refused the scopes asked for (`invalid_scope`). */
  | 'auth-invalid-scope'
  /** Any other token-endpoint failure: an HTTP error, a network error, an unusable answer. */
  | 'auth-token-endpoint'
  /** The access token is not a JWT, so its tenant cannot be checked. */
  | 'auth-invalid-token'
  /** The access token's `tenant_id` is not the tenant it was requested for. */
  | 'auth-wrong-tenant'
  /** The access token's `scope` lacks a scope the command needs. */
  | 'auth-missing-scope'
  /** `get()` was called for a tenant the config does not declare. */
  | 'auth-unknown-tenant'
  /** A client secret reference leads to no value. */
  | 'secret-unresolved';

export interface AuthErrorDetails {
  readonly code: AuthErrorCode;
  readonly tenant?: string;
  /** The HTTP status, when an HTTP answer caused the error. */
  readonly status?: number;
  /** OAuth 2.0 `error`, as the server sent it. */
  readonly error?: string;
  /** OAuth 2.0 `error_description`, as the server sent it. */
  readonly error_description?: string;
  /** True when trying again later may succeed (token endpoint 5xx or 429, network errors, timeouts). */
  readonly retryable?: boolean;
  readonly cause?: unknown;
}

/** Never carries a secret or a token: not in the message, not in a property, not in the cause. */
export class AuthError extends Error {
  readonly code: AuthErrorCode;
  readonly tenant: string | undefined;
  readonly status: number | undefined;
  readonly error: string | undefined;
  readonly error_description: string | undefined;
  readonly retryable: boolean;

  constructor(message: string, details: AuthErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'AuthError';
    this.code = details.code;
    this.tenant = details.tenant;
    this.status = details.status;
    this.error = details.error;
    this.error_description = details.error_description;
    this.retryable = details.retryable ?? false;
  }
}

/** The same error, saying that it is the last of `attempts` tries (only retryable errors are tried again). */
export function afterAttempts(error: AuthError, attempts: number): AuthError {
  return new AuthError(`${error.message} (gave up after ${attempts} attempts)`, {
    code: error.code,
    ...(error.tenant === undefined ? {} : { tenant: error.tenant }),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.error === undefined ? {} : { error: error.error }),
    ...(error.error_description === undefined ? {} : { error_description: error.error_description }),
    retryable: true,
    cause: error.cause,
  });
}
