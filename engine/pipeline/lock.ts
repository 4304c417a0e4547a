/**
 * The lock stage (runs that send): each tenant's lock is taken one at a time, in one global order
 * (tenant names sorted), and the tenant goes on to learn its known state as soon as its lock is
 * held, while the next lock is awaited.
 *
 * Why one global order (docs/architecture.md section 7): planning every tenant before sending
 * means a run holds all its tenants' locks at once. Taken all at once, two runs could each hold a
 * tenant the other waits for, until the lock timeout. Taken in the same order by every run, a run
 * waiting for tenant T holds only tenants sorted before T, and the run holding T waits, if at all,
 * only for tenants sorted after T: no cycle of waits can form, and each wait ends when the holder
 * has sent to T. A tenant whose lock times out, or that fails before sending, releases its lock at
 * once and is reported as failed; the other tenants go on.
 */
import { INTERRUPTED, RunInterrupted, untilAborted } from '../apply/interrupted.ts';
import { TenantLane } from '../apply/tenant-lane.ts';
import { retryBudget } from '../apply/retry-policy.ts';
import { failedTenant } from './learn.ts';
import type { LearntTenant, RunContext, TenantStart } from './tenant.ts';

/** A tenant's lane: every read and PATCH of the tenant goes through it, at the configured rate. */
export function openLane(context: RunContext, tenant: string): TenantLane {
  const { options, signal } = context;
  return new TenantLane({
    tenant,
    ...options.config.rate,
    budget: retryBudget(options.config.retry.maxAttempts),
    inFlight: context.inFlight,
    tokens: context.tokens,
    ...(context.readTokens ? { readTokens: context.readTokens } : {}),
    clock: context.clock,
    random: context.random,
    logger: context.logger,
    ...(signal ? { signal } : {}),
    serviceHost: new URL(options.config.api.baseUrl).host,
  });
}

/**
 * Locks the tenants in order and hands each to `next` as soon as its lock is held (a tenant whose
 * lock could not be taken is failed, holding none); resolves when every tenant's `next` has.
 */
export async function lockTenants(
  context: RunContext,
  tenants: readonly string[],
  next: (tenant: TenantStart) => Promise<LearntTenant>,
): Promise<LearntTenant[]> {
  context.progress.phase('lock');
  const learning: Promise<LearntTenant>[] = [];
  for (const tenant of tenants) {
    const lane = openLane(context, tenant);
    try {
      // A lock taken after the run stopped waiting for it is released as soon as it comes.
      const lock = await untilAborted(
        context.store.lock(tenant, { timeoutMs: context.options.lockTimeoutMs, owner: context.runId }),
        context.signal,
        (late) => void late.release().catch(() => undefined),
      );
      lane.haltOn(lock.lost);
      learning.push(next({ tenant, lane, lock }));
    } catch (error) {
      context.logger.info({ tenant, code: (error as { code?: unknown }).code }, 'tenant not applied');
      learning.push(Promise.resolve(failedTenant({ tenant, lane }, new Map(), error instanceof RunInterrupted ? new Error(INTERRUPTED) : error)));
    }
  }
  return Promise.all(learning);
}
