/** `--lock-timeout SECONDS`, for the commands that lock tenants (apply, drift --fix). */
import { UsageError } from './io.ts';

const DEFAULT_LOCK_TIMEOUT_SECONDS = 60;

/** Milliseconds to wait for another run's lock on each tenant (a run takes its tenants' locks one at a time). */
export function parseLockTimeout(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LOCK_TIMEOUT_SECONDS * 1000;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`--lock-timeout must be a number of seconds; got "${value}"`);
  return Number(value) * 1000;
}
