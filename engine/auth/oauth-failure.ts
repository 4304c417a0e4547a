/**
 * What went wrong in an openid-client call, as plain data: the HTTP status, the OAuth error, whether
 * the network failed, and whether the cause may be kept (it never holds a token or a secret).
 */
import * as client from 'openid-client';
import { ANSWER_LIMITS, AnswerTooLargeError, formatBound, readResponseBounded } from '../io/bounded-body.ts';
import { describeNetworkError } from '../io/network-error.ts';

/** A request that got no HTTP answer (connection refused or reset, DNS, timeout). */
export class TransportError extends Error {
  readonly code = 'transport';
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

export interface TransportOptions {
  /** A request and its whole answer, body included, must complete within this many milliseconds. */
  readonly timeoutMs: number;
  /** The bound of an answer's body, in bytes; default ANSWER_LIMITS.identityProvider. */
  readonly maxAnswerBytes?: number;
}

/** An answer of the identity provider past its bound: an answer, so not a TransportError, and not retried. */
export class OversizedAnswerError extends Error {
  readonly code = 'answer-too-large';
  constructor(origin: string, cause: AnswerTooLargeError) {
    super(
      `the answer from ${origin} is larger than ${formatBound(cause.maxBytes)}, the bound for one answer of the identity provider; it was not read further`,
      {
        cause,
      },
    );
    this.name = 'OversizedAnswerError';
  }
}

// Status codes whose Response may not carry a body (the Response constructor refuses one).
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/**
 * The injected fetch, bounded in time and marking every rejection as a TransportError so that it is
 * told apart from a bad answer. The body is read inside the time bound (a provider that sends headers
 * and then hangs is no answer either) and within the size bound (past it: an OversizedAnswerError),
 * and handed on as a buffered Response.
 */
export function createTransport(fetchImpl: typeof fetch, options: TransportOptions): client.CustomFetch {
  const { timeoutMs } = options;
  const maxAnswerBytes = options.maxAnswerBytes ?? ANSWER_LIMITS.identityProvider;
  return async function send(url, init) {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init.signal === undefined || init.signal === null ? deadline : AbortSignal.any([init.signal, deadline]);
    try {
      const response = await fetchImpl(url, { ...init, signal });
      const body = await readResponseBounded(response, maxAnswerBytes);
      const buffered = NULL_BODY_STATUS.has(response.status) || body.byteLength === 0 ? null : body;
      return new Response(buffered, { status: response.status, statusText: response.statusText, headers: response.headers });
    } catch (error) {
      const origin = new URL(url).origin;
      if (error instanceof AnswerTooLargeError) throw new OversizedAnswerError(origin, error);
      if (deadline.aborted) throw new TransportError(`no answer from ${origin} within ${timeoutMs} ms`, { cause: error });
      // undici rejects with "fetch failed" and keeps the reason (ECONNREFUSED, ...) in its cause.
      throw new TransportError(`no answer from ${origin}: ${describeNetworkError(error)}`, { cause: error });
    }
  };
}

export interface OAuthFailure {
  /** Fixed text naming what failed, without any value sent or received. */
  readonly reason: string;
  readonly status?: number;
  readonly error?: string;
  readonly error_description?: string;
  /** No HTTP answer arrived. */
  readonly transport: boolean;
  /** Trying again later may succeed: no answer, a 5xx, or a 429. */
  readonly retryable: boolean;
  /** The original error when it is safe to keep: it cannot hold a token response body. */
  readonly cause?: unknown;
}

function findCause<T>(error: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  let current = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof type) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

function httpFailure(status: number, error: string | undefined, description: string | undefined, cause: unknown): OAuthFailure {
  const reason = error === undefined ? `HTTP ${status}` : `HTTP ${status} ${error}`;
  return {
    reason,
    status,
    ...(error === undefined ? {} : { error }),
    ...(description === undefined ? {} : { error_description: description }),
    transport: false,
    retryable: isRetryableStatus(status),
    cause,
  };
}

/** RFC 6749 `error` / `error_description` of an answer openid-client did not parse (it parses 4xx bodies only). */
async function oauthErrorBody(response: Response): Promise<{ error?: string; error_description?: string }> {
  if (!(response.headers.get('content-type') ?? '').includes('json')) return {};
  try {
    const body = (await response.clone().json()) as Record<string, unknown>;
    return {
      ...(typeof body.error === 'string' ? { error: body.error } : {}),
      ...(typeof body.error_description === 'string' ? { error_description: body.error_description } : {}),
    };
  } catch {
    return {};
  }
}

export async function describeOAuthFailure(error: unknown): Promise<OAuthFailure> {
  const transport = findCause(error, TransportError);
  if (transport !== undefined) return { reason: transport.message, transport: true, retryable: true, cause: transport };
  const oversized = findCause(error, OversizedAnswerError);
  if (oversized !== undefined) return { reason: oversized.message, transport: false, retryable: false, cause: oversized };
  if (error instanceof client.ResponseBodyError) return httpFailure(error.status, error.error, error.error_description, error);
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const parameters = error.cause[0]?.parameters;
    return httpFailure(error.status, parameters?.error, parameters?.error_description, error);
  }
  // An error status openid-client does not parse (5xx, or a 4xx that is not JSON): the cause is the Response.
  const response = (error as { cause?: unknown } | undefined)?.cause;
  if (response instanceof Response && !response.ok) {
    const body = await oauthErrorBody(response);
    return httpFailure(response.status, body.error, body.error_description, error);
  }
  if (errorCode(error) === 'OAUTH_TIMEOUT' || errorCode(error) === 'OAUTH_ABORT') {
    return { reason: 'the request timed out', transport: true, retryable: true, cause: error };
  }
  // Anything else is an answer that failed openid-client's checks; its cause may hold the answer's
  // body (for the token endpoint: the access token), so only the messages are kept.
  const inner = response instanceof Error ? `: ${response.message}` : '';
  const message = error instanceof Error ? error.message : String(error);
  return { reason: `${message}${inner}`, transport: false, retryable: false };
}
