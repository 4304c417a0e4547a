/** A per-tenant token bucket: `burst` requests at once, refilled at `requestsPerSecond`. */

export interface RateLimitPolicy {
  readonly requestsPerSecond: number;
  readonly burst: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Whole requests left in the bucket after this one. */
  readonly remaining: number;
  /** Seconds until a request would be allowed again (0 when allowed). */
  readonly retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  readonly resetSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class RateLimiter {
  readonly policy: RateLimitPolicy;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(policy: RateLimitPolicy, now: () => number) {
    if (!(policy.requestsPerSecond > 0)) throw new TypeError(`rateLimit.requestsPerSecond must be > 0, got ${policy.requestsPerSecond}`);
    if (!(policy.burst >= 1)) throw new TypeError(`rateLimit.burst must be >= 1, got ${policy.burst}`);
    this.policy = policy;
    this.#now = now;
  }

  take(tenant: string): RateDecision {
    const { requestsPerSecond, burst } = this.policy;
    const now = this.#now();
    const bucket = this.#buckets.get(tenant) ?? { tokens: burst, updatedMs: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.updatedMs) / 1000) * requestsPerSecond);
    bucket.updatedMs = now;
    this.#buckets.set(tenant, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    // Retry-After is whole seconds (RFC 9110), rounded up so that a retry at that time succeeds.
    const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / requestsPerSecond));
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      retryAfterSeconds,
      resetSeconds: Math.ceil((burst - bucket.tokens) / requestsPerSecond),
    };
  }

  /**
   * The fields of draft-ietf-httpapi-ratelimit-headers-10 (structured fields): `RateLimit-Policy`
   * (quota q per window w seconds) and `RateLimit` (r remaining, t seconds until the quota is
   * restored: the whole bucket, or while nothing is left the next request). The window is the time
   * the bucket takes to refill, in whole seconds; the quota is what the refill rate lets through
   * in it (at least the burst), so that a client pacing to q/w gets the sustained rate, never more.
   */
  headers(decision: RateDecision): Record<string, string> {
    const { requestsPerSecond, burst } = this.policy;
    const window = Math.max(1, Math.ceil(burst / requestsPerSecond));
    const quota = Math.max(1, Math.floor(requestsPerSecond * window));
    const t = decision.allowed ? decision.resetSeconds : decision.retryAfterSeconds;
    return {
      'RateLimit-Policy': `"tenant";q=${quota};w=${window}`,
      RateLimit: `"tenant";r=${decision.remaining};t=${t}`,
    };
  }

  reset(): void {
    this.#buckets.clear();
  }
}
