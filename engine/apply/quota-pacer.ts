/**
 * Paces one tenant's requests to the quota the service publishes (RateLimit-Policy and RateLimit,
 * draft-ietf-httpapi-ratelimit-headers; see engine/api/rate-headers.ts), so that a config asking
 * for more than the service allows costs neither 429s nor pauses until a whole window resets
 * (docs/architecture.md section 7). Pure: the lane passes `now` in and does the waiting.
 *
 * - A policy of q requests per w: starts are spaced w/q apart, each from the start booked before
 *   it, so that a timer firing late delays one request and not the ones booked after it.
 * - The quota left (r, until t): when the requests still to send fit into what is left, they
 *   need no spacing; when an answer leaves less than the requests already in flight will use, the
 *   tenant holds for the shortfall only: the time the policy takes to restore it, or until the
 *   reset when nothing is left or no policy is published.
 * - Nothing published: no spacing, and the rule of old: hold until the reset once the quota left
 *   is below the lane's concurrency.
 * The configured rate stays the ceiling; it is enforced by the lane's queue, not here, and a policy
 * no slower than it needs no spacing of its own.
 */
import type { QuotaPolicy, RateLimitState } from '../api/rate-headers.ts';

export interface PacerLimits {
  /** The spacing of the configured rate, which the lane's queue keeps: a policy allowing as much or more is not spaced again. */
  readonly configuredIntervalMs: number;
  /**
   * The longest spacing kept. A policy asking for more (one request an hour) is paced at this, and
   * the service's 429 with its Retry-After decides, as without pacing.
   */
  readonly maxIntervalMs: number;
}

export class QuotaPacer {
  readonly #limits: PacerLimits;
  /** w/q of the policy last published, in ms; undefined while none is known. */
  #intervalMs: number | undefined;
  /** The latest start booked, whether paced or not. */
  #last = Number.NEGATIVE_INFINITY;
  /** Sends the service still allows by its last answer, less those started since. */
  #credit = 0;

  constructor(limits: PacerLimits = { configuredIntervalMs: 0, maxIntervalMs: Number.POSITIVE_INFINITY }) {
    this.#limits = limits;
  }

  /** The spacing the published policy asks for, in ms; undefined while none is known. */
  get intervalMs(): number | undefined {
    return this.#intervalMs;
  }

  /**
   * Takes in what an answer reports. `othersInFlight`: requests sent before it arrived and not
   * answered yet, which the service may not have counted in `state.remaining`. Returns how long
   * the tenant should hold, in ms (0: not at all).
   */
  observe(state: RateLimitState | undefined, policy: QuotaPolicy | undefined, othersInFlight: number, concurrency: number): number {
    // A newer policy replaces the old one at once: the service may have lowered or raised it.
    if (policy !== undefined) this.#intervalMs = Math.min(policy.windowMs / policy.quota, this.#limits.maxIntervalMs);
    if (state === undefined) return 0;
    const available = state.remaining - othersInFlight;
    this.#credit = Math.max(0, available);
    if (state.resetMs <= 0) return 0;
    if (this.#intervalMs === undefined) return state.remaining < concurrency ? state.resetMs : 0;
    if (available >= 1) return 0;
    // Nothing left: whether the service restores its quota gradually or all at once, only the
    // reset is sure. Some left but not enough: the policy restores a request every interval.
    if (state.remaining < 1) return state.resetMs;
    return Math.min(state.resetMs, (1 - available) * this.#intervalMs);
  }

  /**
   * Books the next start and returns when it may go (>= now). `backlog`: this request and every
   * other of the lane not sent yet.
   */
  reserve(now: number, backlog: number): number {
    const interval = this.#intervalMs;
    const fits = backlog <= this.#credit;
    this.#credit = Math.max(0, this.#credit - 1);
    // What is left to send fits into the quota left: spacing it out would only make the run longer.
    const spaced = interval !== undefined && interval > this.#limits.configuredIntervalMs && !fits;
    const at = spaced ? Math.max(now, this.#last + interval) : now;
    this.#last = Math.max(this.#last, at);
    return at;
  }
}
