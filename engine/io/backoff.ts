/**
 * Exponential backoff with "full jitter" (AWS Architecture Blog, Exponential Backoff and Jitter):
 * a uniform wait in [0, min(max, base * 2^retry)), so that many clients do not retry in step.
 * Shared by the token endpoint's retries and the apply lanes'.
 */
export interface BackoffShape {
  /** The ceiling before the first retry; doubled for every further retry. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** In [0, 1). */
  readonly random: () => number;
}

/** The wait before retry number `retry` (0 for the first retry). */
export function backoffDelayMs(retry: number, shape: BackoffShape): number {
  const ceiling = Math.min(shape.maxDelayMs, shape.baseDelayMs * 2 ** retry);
  return Math.floor(shape.random() * ceiling);
}
