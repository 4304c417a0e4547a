/** What a test started, stopped after it: one afterEach per file instead of the same block in each. */
import { afterEach } from 'vitest';

export type Cleanup = () => Promise<void>;

/**
 * Registers an afterEach that runs `first` (e.g. closing the file's emulator), then every cleanup
 * pushed onto the returned list during the test, in the order they were pushed.
 */
export function cleanupsAfterEach(first?: Cleanup): Cleanup[] {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    await first?.();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  return cleanups;
}
