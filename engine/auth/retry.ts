/** Bounded exponential backoff with full jitter, for transient failures of the identity provider. */
import { backoffDelayMs, type BackoffShape } from '../io/backoff.ts';

export interface RetryPolicy extends BackoffShape {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** The token endpoint is asked at most 3 times per grant, waiting at most 0.25 s and then 0.5 s. */
export const TOKEN_RETRY = { attempts: 3, baseDelayMs: 250, maxDelayMs: 2_000 } as const;

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
