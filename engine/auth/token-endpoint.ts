/**
 * The client-credentials request to the token endpoint as a pair: `sendTokenRequest` builds and
 * sends it (`client_secret_post`, as docs/architecture.md section 1 publishes), `parseTokenResponse`
 * checks the answer and is testable with a canned Response. The answer is read as the service
 * publishes it: `{access_token, expires_in}`, `token_type` and `scope` optional (RFC 6749 section 5.1).
 */
import type * as client from 'openid-client';
import type { Redactor } from '../log/logger.ts';
import { AuthError, type AuthErrorCode } from './errors.ts';
import type { Scope } from './scope.ts';

/** An access token as received: its life is counted from local receipt by the cache. */
export interface GrantedToken {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
  /** The response's `scope`, when it has one: what was granted, which may differ from what was asked. */
  readonly scopes?: readonly string[];
}

export interface TokenRequest {
  readonly tenant: string;
  readonly clientId: string;
  readonly scopes: readonly Scope[];
}

/** The life docs/architecture.md section 1 publishes, for an answer without `expires_in` (it is only RECOMMENDED by RFC 6749). */
export const DEFAULT_TOKEN_LIFE_SECONDS = 3600;

/** A longer life is refused: a token the engine would hold for days is more likely a unit error than a policy. */
export const MAX_TOKEN_LIFE_SECONDS = 86_400;

/** Sends the grant. Redirects are not followed: the body holds the client secret. Rejects with the transport's errors. */
export function sendTokenRequest(
  endpoint: URL,
  request: Pick<TokenRequest, 'clientId' | 'scopes'>,
  secret: string,
  transport: client.CustomFetch,
): Promise<Response> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: request.clientId, client_secret: secret, scope: request.scopes.join(' ') });
  return transport(endpoint.href, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
    body,
    redirect: 'manual',
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A value the server sent, short enough for a message; strings go through the redactor. */
function shown(value: unknown, redactor: Redactor): string {
  const text = redactor.redact(JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function codeFor(error: string | undefined): AuthErrorCode {
  if (error === 'invalid_client') return 'auth-invalid-client';
  if (error === 'invalid_scope') return 'auth-invalid-scope';
  return 'auth-token-endpoint';
}

/** `error` and `error_description` of an error answer: its JSON body, else its WWW-Authenticate challenge. */
function oauthError(response: Response, text: string): { error?: string; error_description?: string } {
  const body = parseJson(text);
  if (isRecord(body) && typeof body.error === 'string') {
    return { error: body.error, ...(typeof body.error_description === 'string' ? { error_description: body.error_description } : {}) };
  }
  const challenge = response.headers.get('www-authenticate') ?? '';
  const error = /\berror="([^"]*)"/.exec(challenge)?.[1];
  const description = /\berror_description="([^"]*)"/.exec(challenge)?.[1];
  return { ...(error === undefined ? {} : { error }), ...(description === undefined ? {} : { error_description: description }) };
}

function refusal(request: TokenRequest, response: Response, text: string, redactor: Redactor): AuthError {
  const { status } = response;
  const { error, error_description: received } = oauthError(response, text);
  const description = received === undefined ? undefined : redactor.redact(received);
  const code = codeFor(error);
  let what: string;
  if (code === 'auth-invalid-client') what = `the token endpoint rejected client ${request.clientId} (invalid_client)`;
  else if (code === 'auth-invalid-scope')
    what = `the token endpoint refused scope "${request.scopes.join(' ')}" for client ${request.clientId} (invalid_scope)`;
  else if (status >= 300 && status < 400) what = `token request failed: HTTP ${status} redirect (not followed: the request carries the client secret)`;
  else what = `token request failed: HTTP ${status}${error === undefined ? '' : ` ${redactor.redact(error)}`}`;
  return new AuthError(`tenant ${request.tenant}: ${what}${description === undefined ? '' : `: ${description}`}`, {
    code,
    tenant: request.tenant,
    status,
    ...(error === undefined ? {} : { error }),
    ...(description === undefined ? {} : { error_description: description }),
    retryable: status >= 500 || status === 429,
  });
}

function unusable(request: TokenRequest, what: string): AuthError {
  return new AuthError(`tenant ${request.tenant}: ${what}`, { code: 'auth-token-endpoint', tenant: request.tenant, status: 200 });
}

function tokenLife(request: TokenRequest, value: unknown, redactor: Redactor): number {
  if (value === undefined) return DEFAULT_TOKEN_LIFE_SECONDS;
  // Some providers send the number as a string; the value is checked all the same.
  const seconds = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_TOKEN_LIFE_SECONDS) {
    throw unusable(
      request,
      `the token endpoint answered expires_in ${shown(value, redactor)}; expected a whole number of seconds from 1 to ${MAX_TOKEN_LIFE_SECONDS} (24 h)`,
    );
  }
  return seconds;
}

/** Checks the answer; any failure is an AuthError that quotes no token. The access token is registered with the redactor first. */
export async function parseTokenResponse(request: TokenRequest, response: Response, redactor: Redactor): Promise<GrantedToken> {
  const text = await response.text();
  if (response.status !== 200) throw refusal(request, response, text, redactor);
  const body = parseJson(text);
  if (!isRecord(body)) throw unusable(request, 'the token endpoint answered HTTP 200 with a body that is not a JSON object');
  const accessToken = body.access_token;
  if (typeof accessToken !== 'string' || accessToken === '') throw unusable(request, 'the token endpoint answered without an access_token');
  // Registered before any check can fail, so that no later log line or message can carry it.
  redactor.add(accessToken);
  // The service publishes {access_token, expires_in}: a missing token_type means Bearer.
  const tokenType = body.token_type;
  if (tokenType !== undefined && (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer')) {
    throw unusable(request, `the token endpoint answered token_type ${shown(tokenType, redactor)}; only Bearer tokens are supported`);
  }
  const expiresInSeconds = tokenLife(request, body.expires_in, redactor);
  const scope = body.scope;
  if (scope !== undefined && typeof scope !== 'string')
    throw unusable(request, `the token endpoint answered scope ${shown(scope, redactor)}; expected a space-separated string`);
  return { accessToken, expiresInSeconds, ...(scope === undefined ? {} : { scopes: splitScope(scope) }) };
}

/** RFC 6749 section 3.3: scopes are separated by spaces. */
export function splitScope(scope: string): readonly string[] {
  return scope.split(' ').filter((item) => item !== '');
}
