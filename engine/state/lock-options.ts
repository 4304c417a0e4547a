/** Checks the options of StateStore.lock (a bad option is a programming error: TypeError). */
import type { LockOptions } from './types.ts';

export function checkLockOptions(options: LockOptions): void {
  const { timeoutMs, owner } = options;
  // Infinity waits for as long as it takes; 0 tries once (after recovering a stale lock).
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
    throw new TypeError(`options.timeoutMs: expected a number >= 0, got ${typeof timeoutMs === 'string' ? JSON.stringify(timeoutMs) : String(timeoutMs)}`);
  }
  if (typeof owner !== 'string' || owner === '') {
    throw new TypeError(`options.owner: expected a non-empty string, got ${typeof owner === 'string' ? '""' : String(owner)}`);
  }
}
