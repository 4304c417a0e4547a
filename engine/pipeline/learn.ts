/**
 * The learn stage: a tenant's known state, from the state store or read live through its lane,
 * and, in a run that sends, what its previous run left (the run record, read under the lock).
 */
import { messageOf, statusOf } from '../apply/failure.ts';
import { RunInterrupted } from '../apply/interrupted.ts';
import { ServiceUnreachable } from '../apply/service-unreachable.ts';
import { notOnServiceReason, type ContractResult } from '../apply/run-report.ts';
import type { KnownContract } from '../model/types.ts';
import type { PendingContract } from '../state/types.ts';
import type { LearntTenant, RunContext, TenantStart } from './tenant.ts';

/** A tenant that cannot go on: nothing is sent for it; its lock is released by the caller. */
export function failedTenant(start: TenantStart, unreadable: Map<string, ContractResult>, error: unknown): LearntTenant {
  return { tenant: start.tenant, lane: start.lane, known: new Map(), unreadable, uncertain: new Map(), error: messageOf(error) };
}

/** Contracts whose earlier patch may have landed unrecorded: the next run must not trust the state store for them. */
export function uncertainContracts(pending: readonly PendingContract[] | undefined): Map<string, string> {
  const uncertain = new Map<string, string>();
  for (const entry of pending ?? []) {
    if (entry.outcome === 'failed') continue;
    uncertain.set(
      entry.contractId,
      `an earlier run (${entry.since}) ${entry.outcome === 'interrupted' ? 'stopped while applying this contract' : `lost the answer to its patch: ${entry.reason}`}`,
    );
  }
  return uncertain;
}

/** The tenant's previous run, read under its lock: its record and the contracts it left uncertain. */
export async function readRecord(context: RunContext, start: TenantStart): Promise<LearntTenant> {
  const previousRun = await context.store.readRun(start.tenant);
  return { ...start, known: new Map(), unreadable: new Map(), uncertain: uncertainContracts(previousRun?.pending), ...(previousRun ? { previousRun } : {}) };
}

/**
 * The known state of the tenant's desired contracts: the state store's records, or each contract
 * read live. A run that sends (it holds the tenant's lock) and reads live also reads the records
 * (`stored`), to record what it finds unchanged only where the record differs. A contract that
 * cannot be read is not planned.
 */
export async function learnKnown(context: RunContext, tenant: LearntTenant): Promise<LearntTenant> {
  const { store, tokens, api, logger, progress } = context;
  progress.phase('read-known', { known: context.refresh ? 'live' : 'store' });
  const name = tenant.tenant;
  const desired = context.desired.get(name) ?? new Map();
  // Only the records of the contracts planned: an incremental run of a large tenant reads a few.
  const planned = new Set(desired.keys());
  if (!context.refresh) return { ...tenant, known: await store.readTenant(name, planned) };
  const stored = tenant.lock === undefined ? undefined : await store.readTenant(name, planned);
  // The token is checked (tenant_id, scopes) before the first request is queued.
  await tokens.get(name);
  const known = new Map<string, KnownContract>();
  const unreadable = new Map<string, ContractResult>();
  await Promise.all(
    [...desired].map(async ([contractId, { file, line }]) => {
      try {
        const { fields } = await tenant.lane.call({ kind: 'read', contractId, resendable: true }, (token) => api.read(contractId, token));
        known.set(contractId, { fields, from: 'live' });
        progress.read(name, contractId, 'read');
      } catch (error) {
        // Not read because the run stopped: the run sends nothing (see compose.ts).
        if (error instanceof RunInterrupted) return;
        // The service cannot be reached: the whole tenant stops, on one line (not one per contract).
        if (error instanceof ServiceUnreachable) throw error;
        const status = statusOf(error);
        logger.info({ tenant: name, contractId, status }, 'read failed; contract not planned');
        unreadable.set(
          contractId,
          status === 404
            ? { contractId, file, line, outcome: 'not-on-service', ops: 0, status, reason: notOnServiceReason(contractId, 'read') }
            : { contractId, file, line, outcome: 'failed', ops: 0, status, reason: `could not read the contract: ${messageOf(error)}` },
        );
        progress.read(name, contractId, status === 404 ? 'not-on-service' : 'failed');
      }
    }),
  );
  return { ...tenant, known, ...(stored ? { stored } : {}), unreadable };
}
