/** Time as the engine sees it: injected everywhere, so expiry, pauses and backoff are tested without sleeping. */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Rejects (and clears its timer) when `signal` aborts, so that a wait nobody needs keeps nothing alive. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The one place that reads the system clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(Math.max(0, ms), undefined, signal ? { signal } : {}),
};
