/** Time as the engine sees it: injected everywhere, so expiry, pauses and backoff are tested without sleeping. */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The one place that reads the system clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => delay(Math.max(0, ms)),
};
