/**
 * How a failed CMS request is classified (docs/architecture.md sections 1 and 7). The service publishes only
 * 204 for PATCH, so every status the engine does not know is permanent and reported verbatim.
 */
import type { QuotaPolicy, RateLimitState } from './rate-headers.ts';

/**
 * - `retryable`: 429, 500, 502, 503, 504, connection resets, timeouts: worth sending again later
 *   (a PATCH only when it is not ambiguous, see `isAmbiguousPatchStatus`);
 * - `auth`: 401, the token was refused: drop it and retry once with a new one;
 * - `permanent`: 400, 403, 404, 409 and anything else: resending the same request cannot help.
 */
export type ApiFailureKind = 'retryable' | 'auth' | 'permanent';

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

// 500: the service failed somewhere while handling the request, perhaps after applying it; 504: a
// gateway gave up waiting for a service that has the request. 429, 502 and 503 say it was not handled.
const AMBIGUOUS_PATCH_STATUSES: ReadonlySet<number> = new Set([500, 504]);

export function classifyStatus(status: number): ApiFailureKind {
  if (status === 401) return 'auth';
  return RETRYABLE_STATUSES.has(status) ? 'retryable' : 'permanent';
}

/**
 * Whether a PATCH answered with `status` may have been applied all the same (docs/architecture.md
 * section 7): such a patch is settled by a read, or resent only when it is Replace-only.
 */
export function isAmbiguousPatchStatus(status: number): boolean {
  return AMBIGUOUS_PATCH_STATUSES.has(status);
}

export interface ApiErrorDetails {
  readonly kind: ApiFailureKind;
  /** The HTTP status; null when no response arrived (reset, timeout, refused). */
  readonly status: number | null;
  /** A bounded excerpt of the response body with secrets censored; '' when there was none. */
  readonly excerpt: string;
  /**
   * The request may have been applied: the connection broke or timed out after it was sent, a
   * PATCH was answered 500 or 504, or the answer was not the service's (an unexpected 2xx, an HTML
   * page: a proxy or gateway may sit in between). Only
   * a re-read can tell; Add/Remove must never be resent blindly (docs/architecture.md section 7).
   */
  readonly ambiguous: boolean;
  /** The wait the service asked for (Retry-After, or a RateLimit header with nothing remaining), in ms. */
  readonly retryAfterMs?: number;
  /**
   * The answer is one of `api.conflictStatuses`: to an Add/Remove patch it means the service holds
   * other members than the known state says (settled by a read and one re-plan). Default: status 409.
   */
  readonly conflict?: boolean;
  /** The quota left, when the error answer reports it (a 429 often does): the lane's pacer learns from it. */
  readonly rateLimit?: RateLimitState;
  /** The quota policy, when the error answer publishes it. */
  readonly quotaPolicy?: QuotaPolicy;
  readonly cause?: unknown;
}

/** `error` with `note` after its message (why it was not retried), every detail kept. */
export function withNote(error: ApiError, note: string): ApiError {
  return new ApiError(`${error.message}; ${note}`, {
    kind: error.kind,
    status: error.status,
    excerpt: error.excerpt,
    ambiguous: error.ambiguous,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    conflict: error.conflict,
    ...(error.rateLimit === undefined ? {} : { rateLimit: error.rateLimit }),
    ...(error.quotaPolicy === undefined ? {} : { quotaPolicy: error.quotaPolicy }),
    cause: error.cause,
  });
}

export class ApiError extends Error {
  readonly code = 'api';
  readonly kind: ApiFailureKind;
  readonly status: number | null;
  readonly excerpt: string;
  readonly ambiguous: boolean;
  readonly retryAfterMs: number | undefined;
  readonly conflict: boolean;
  readonly rateLimit: RateLimitState | undefined;
  readonly quotaPolicy: QuotaPolicy | undefined;

  constructor(message: string, details: ApiErrorDetails) {
    super(message, { cause: details.cause });
    this.kind = details.kind;
    this.status = details.status;
    this.excerpt = details.excerpt;
    this.ambiguous = details.ambiguous;
    this.retryAfterMs = details.retryAfterMs;
    this.conflict = details.conflict ?? details.status === 409;
    this.rateLimit = details.rateLimit;
    this.quotaPolicy = details.quotaPolicy;
  }
}
