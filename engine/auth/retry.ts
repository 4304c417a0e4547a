/** Bounded exponential backoff with full jitter, for transient failures of the identity provider. */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** The backoff ceiling before the first retry; doubled for every further retry. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** In [0, 1). */
  readonly random: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** The token endpoint is asked at most 3 times per grant, waiting at most 0.25 s and then 0.5 s. */
export const TOKEN_RETRY = { attempts: 3, baseDelayMs: 250, maxDelayMs: 2_000 } as const;

/** Full jitter: a uniform wait in [0, min(max, base * 2^retry)), so that many clients do not retry in step. */
export function backoffDelayMs(retry: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'random'>): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(policy.random() * ceiling);
}

/** Runs `operation` until it succeeds, fails with an error `isRetryable` refuses, or runs out of attempts. */
export async function withRetry<T>(operation: () => Promise<T>, isRetryable: (error: unknown) => boolean, policy: RetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= policy.attempts || !isRetryable(error)) throw error;
      await policy.sleep(backoffDelayMs(attempt - 1, policy));
    }
  }
}
