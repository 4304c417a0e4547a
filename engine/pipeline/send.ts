/**
 * The send stage: a tenant's contracts through its lane, each PATCH recorded by applyContract as
 * soon as it is answered (engine/apply/apply-contract.ts), and the uncertain contracts settled by
 * a read. Before the first PATCH the tenant's run record names every contract in flight, so that a
 * run that dies leaves the next one knowing which contracts may have landed.
 */
import { applyContract, type ContractOutcome } from '../apply/apply-contract.ts';
import { messageOf, statusOf } from '../apply/failure.ts';
import { inFlightReason, RunInterrupted } from '../apply/interrupted.ts';
import type { PlanContract } from '../plan/types.ts';
import type { PendingContract } from '../state/types.ts';
import type { CheckedTenant, RunContext } from './tenant.ts';

/** What the send stage sent: each contract's outcome (filled as they finish), and those the run stopped before sending. */
export interface SentTenant {
  readonly outcomes: Map<string, ContractOutcome>;
  readonly interrupted: ReadonlySet<string>;
}

/** Writes, before the first PATCH, the run record that names every contract about to be sent as in flight. */
export async function markInFlight(context: RunContext, tenant: CheckedTenant): Promise<void> {
  if (tenant.send.length === 0) return;
  const previous = tenant.previousRun;
  const sending = new Set(tenant.send.map((contract) => contract.id));
  await context.store.writeRun(
    tenant.tenant,
    {
      lastAppliedCommit: previous?.lastAppliedCommit ?? null,
      ...(previous?.planningFingerprint === undefined ? {} : { planningFingerprint: previous.planningFingerprint }),
      pending: [
        ...tenant.send.map((contract): PendingContract => ({
          contractId: contract.id,
          outcome: 'interrupted',
          reason: inFlightReason(context.runId),
          since: context.startedAt,
          file: contract.file,
        })),
        ...(previous?.pending ?? []).filter((entry) => !sending.has(entry.contractId)),
      ],
      updatedAt: context.startedAt,
    },
    { lock: tenant.lock, lastAppliedCommit: previous?.lastAppliedCommit ?? null },
  );
}

/** Sends the tenant's contracts and settles its uncertain ones; `outcomes` is filled as each finishes. */
export async function sendTenant(context: RunContext, tenant: CheckedTenant, outcomes: Map<string, ContractOutcome>): Promise<SentTenant> {
  const { api, store, clock, logger, progress, options } = context;
  const desired = context.desired.get(tenant.tenant) ?? new Map();
  const applyContext = {
    lane: tenant.lane,
    api,
    store,
    lock: tenant.lock,
    collections: options.config.collections,
    commit: context.source.commit,
    now: () => clock.now(),
    maxReconciles: options.config.retry.maxAttempts,
  };
  function attempt(contract: PlanContract, ops: PlanContract['ops'], known: 'planned' | 'read first'): Promise<ContractOutcome | undefined> {
    return applyContract(
      {
        contractId: contract.id,
        ops,
        known: known === 'planned' ? tenant.known.get(contract.id)?.fields : undefined,
        knownIsLive: known === 'planned' && contract.knownFrom === 'live',
        desired: desired.get(contract.id)!.fields,
        uncertain: tenant.uncertain.get(contract.id),
        // What the run planned to change counts as its applied work; a contract it only settles does not.
        ...(known === 'planned' ? { runId: context.runId } : {}),
      },
      applyContext,
    ).catch((error: unknown): ContractOutcome | undefined =>
      error instanceof RunInterrupted ? undefined : { outcome: 'failed', status: statusOf(error), reason: messageOf(error) },
    );
  }
  const interrupted = new Set<string>();
  await Promise.all([
    ...tenant.send.map(async (contract) => {
      const outcome = await attempt(contract, contract.ops, 'planned');
      if (outcome === undefined) {
        interrupted.add(contract.id);
        return;
      }
      outcomes.set(contract.id, outcome);
      if (outcome.outcome !== 'applied')
        logger.info({ tenant: tenant.tenant, contractId: contract.id, status: outcome.status, outcome: outcome.outcome }, 'contract not applied');
      progress.sent(tenant.tenant, contract.id, outcome.outcome);
    }),
    // Read first (the contract is uncertain), re-planned from what is live: recorded when it
    // needs nothing, sent when the service turns out to be behind the desired state.
    ...tenant.work.settle.map(async (contract) => {
      const outcome = await attempt(contract, [], 'read first');
      // Not read because the run stopped: its earlier pending entry stays.
      if (outcome === undefined) return;
      outcomes.set(contract.id, outcome);
      if (outcome.outcome !== 'applied')
        logger.info({ tenant: tenant.tenant, contractId: contract.id, status: outcome.status, outcome: outcome.outcome }, 'uncertain contract not settled');
      else logger.info({ tenant: tenant.tenant, contractId: contract.id }, 'uncertain contract settled by a read');
    }),
  ]);
  return { outcomes, interrupted };
}
