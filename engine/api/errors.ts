/**
 * How a failed CMS request is classified (DESIGN.md sections 1 and 7). The service publishes only
 * 204 for PATCH, so every status the engine does not know is permanent and reported verbatim.
 */

/**
 * - `retryable`: 429, 502, 503, 504, connection resets, timeouts: worth sending again later;
 * - `auth`: 401, the token was refused: drop it and retry once with a new one;
 * - `permanent`: 400, 403, 404, 409 and anything else: resending the same request cannot help.
 */
export type ApiFailureKind = 'retryable' | 'auth' | 'permanent';

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export function classifyStatus(status: number): ApiFailureKind {
  if (status === 401) return 'auth';
  return RETRYABLE_STATUSES.has(status) ? 'retryable' : 'permanent';
}

export interface ApiErrorDetails {
  readonly kind: ApiFailureKind;
  /** The HTTP status; null when no response arrived (reset, timeout, refused). */
  readonly status: number | null;
  /** A bounded excerpt of the response body with secrets censored; '' when there was none. */
  readonly excerpt: string;
  /**
   * The request may have been applied: the connection broke or timed out after it was sent. Only
   * a re-read can tell; Add/Remove must never be resent blindly (DESIGN.md section 7).
   */
  readonly ambiguous: boolean;
  /** The wait the service asked for (Retry-After, or a RateLimit header with nothing remaining), in ms. */
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

export class ApiError extends Error {
  readonly code = 'api';
  readonly kind: ApiFailureKind;
  readonly status: number | null;
  readonly excerpt: string;
  readonly ambiguous: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ApiErrorDetails) {
    super(message, { cause: details.cause });
    this.kind = details.kind;
    this.status = details.status;
    this.excerpt = details.excerpt;
    this.ambiguous = details.ambiguous;
    this.retryAfterMs = details.retryAfterMs;
  }
}
