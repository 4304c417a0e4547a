/**
 * What to do after a failed request (docs/architecture.md section 7). Pure: the caller owns counting and
 * waiting, this decides.
 */
import type { ApiError } from '../api/errors.ts';
import { backoffDelayMs } from '../io/backoff.ts';

export interface RetryBudget {
  /** `retry.maxAttempts`: sends of one request that failed with a 5xx, reset or timeout. */
  readonly maxAttempts: number;
  /** Waits the service asked for (429/503 Retry-After); bounded separately, see THROTTLE_FACTOR. */
  readonly maxThrottles: number;
}

export interface AttemptHistory {
  /** Failed sends counted against maxAttempts. */
  readonly failures: number;
  /** Waits taken because the service asked for them. */
  readonly throttles: number;
  /** Whether the token was already renewed once for this request. */
  readonly reauthenticated: boolean;
}

export type RetryDecision =
  | { readonly action: 'throttle'; readonly waitMs: number }
  | { readonly action: 'backoff'; readonly waitMs: number }
  | { readonly action: 'reauthenticate' }
  /** `reason`: why a request the service asked to retry later is not, said after its error. */
  | { readonly action: 'give-up'; readonly reason?: string };

/**
 * A service that says when to come back is not failing; it is pacing us. Its waits do not use
 * up `maxAttempts`, but a service that keeps asking is given up on after this many times as many.
 */
export const THROTTLE_FACTOR = 4;

/** Backoff ceiling and base: the first retry waits up to 0.5 s, later ones up to 30 s. */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 30_000;
/** The longest single wait a Retry-After may ask for before the request is given up. */
export const MAX_THROTTLE_WAIT_MS = 300_000;

export function retryBudget(maxAttempts: number): RetryBudget {
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new TypeError(`retry.maxAttempts: expected an integer >= 1, got ${maxAttempts}`);
  return { maxAttempts, maxThrottles: maxAttempts * THROTTLE_FACTOR };
}

/** `86400 s`, `300.001 s`: a wait as the messages say it. */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** The wait after `failures` failed sends: full jitter in [0, min(cap, base * 2^(failures-1))). */
export function backoffDelay(failures: number, random: () => number): number {
  return backoffDelayMs(Math.max(0, failures - 1), { baseDelayMs: BACKOFF_BASE_MS, maxDelayMs: BACKOFF_CAP_MS, random });
}

/**
 * The decision after `error`. `resendable` says whether sending the same request again is safe
 * when the outcome is ambiguous (reads and Replace-only patches); an ambiguous failure that is not
 * resendable is given up here so that the caller can reconcile it.
 */
export function decideRetry(error: ApiError, history: AttemptHistory, budget: RetryBudget, resendable: boolean, random: () => number): RetryDecision {
  if (error.kind === 'auth') return history.reauthenticated ? { action: 'give-up' } : { action: 'reauthenticate' };
  if (error.kind === 'permanent') return { action: 'give-up' };
  if (error.ambiguous && !resendable) return { action: 'give-up' };
  if (error.retryAfterMs !== undefined) {
    if (error.retryAfterMs > MAX_THROTTLE_WAIT_MS) {
      const reason = `not retried: the service asked to wait ${seconds(error.retryAfterMs)} (Retry-After), longer than the ${seconds(MAX_THROTTLE_WAIT_MS)} contract-sync waits for one request; run again later`;
      return { action: 'give-up', reason };
    }
    if (history.throttles >= budget.maxThrottles) {
      const reason = `not retried: the service asked to wait ${budget.maxThrottles + 1} times (Retry-After), more than the ${budget.maxThrottles} waits retry.maxAttempts ${budget.maxAttempts} allows (${THROTTLE_FACTOR} per attempt)`;
      return { action: 'give-up', reason };
    }
    return { action: 'throttle', waitMs: error.retryAfterMs };
  }
  // `failures` includes this one: maxAttempts sends in all.
  if (history.failures >= budget.maxAttempts) return { action: 'give-up' };
  return { action: 'backoff', waitMs: backoffDelay(history.failures, random) };
}
