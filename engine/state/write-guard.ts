/**
 * The checks of a lock holder's write (WriteGuard, types.ts) that every backend shares. Pure but
 * for the AbortController a lock handle's `lost` signal comes from.
 */
import { LastAppliedChangedError, LockLostError, type TenantRunRecord, type WriteGuard } from './types.ts';

/** Refuses `guard`'s compare-and-set when the stored run record (undefined: none) names another commit. */
export function checkLastApplied(tenant: string, guard: WriteGuard | undefined, current: TenantRunRecord | undefined): void {
  if (guard?.lastAppliedCommit === undefined) return;
  const now = current?.lastAppliedCommit ?? null;
  if (now !== guard.lastAppliedCommit) throw new LastAppliedChangedError(tenant, guard.lastAppliedCommit, now);
}

/**
 * A lock handle's `lost` signal, and how the store fires it: once, with the first reason as the
 * signal's; each call returns the error of its own reason (the write refused says why it was).
 */
export interface LossSignal {
  readonly signal: AbortSignal;
  lose(why: string): LockLostError;
}

export function lossSignal(tenant: string): LossSignal {
  const controller = new AbortController();
  return {
    signal: controller.signal,
    lose(why: string): LockLostError {
      const error = new LockLostError(tenant, why);
      if (!controller.signal.aborted) controller.abort(error);
      return error;
    },
  };
}
