/**
 * The record stage: what the state store keeps of a tenant's run. Contracts read live and found
 * unchanged are recorded before the first PATCH; each contract sent is recorded by the send stage
 * as soon as it is answered; at the end the tenant's run record names the commit and what is left
 * to do (`pending`). reportTenant says how each contract ended, for the run report.
 */
import type { ContractOutcome } from '../apply/apply-contract.ts';
import { INTERRUPTED, inFlightReason } from '../apply/interrupted.ts';
import { planningFingerprint } from '../apply/incremental.ts';
import { pendingAfterRun } from '../apply/pending-after-run.ts';
import { notOnServiceReason, type ContractResult, type TenantReport } from '../apply/run-report.ts';
import { fingerprint } from '../model/fingerprint.ts';
import type { AppliedContract, PendingContract, TenantRunRecord } from '../state/types.ts';
import { compareText } from '../text/compare-text.ts';
import type { SentTenant } from './send.ts';
import type { CheckedTenant, LearntTenant, RunContext } from './tenant.ts';

/** State records written at once when recording contracts found unchanged. */
const RECORD_CONCURRENCY = 16;

/**
 * Records the contracts read live and found unchanged whose record differs from what was read
 * (or that have none), so that a plan from the state store on any machine shows what a live read
 * would (docs/architecture.md section 7). Identical records are not rewritten. Written before the
 * first PATCH: a state store that cannot take a record stops the tenant before anything is sent.
 */
export async function recordUnchanged(context: RunContext, tenant: CheckedTenant): Promise<void> {
  const appliedAt = new Date(context.clock.now()).toISOString();
  // Contracts this very run had in flight when a worker of it stopped (a shared run taken over, or
  // run again after its store was lost), unrecorded and now found applied: that worker's PATCH
  // landed, so they count as this run's work (AppliedContract.runId).
  const inFlight = new Set(
    (tenant.previousRun?.pending ?? [])
      .filter((entry) => entry.outcome === 'interrupted' && entry.reason === inFlightReason(context.runId))
      .map((entry) => entry.contractId),
  );
  const writes: AppliedContract[] = [];
  for (const contract of tenant.planned) {
    if (contract.action !== 'noop' || contract.knownFrom !== 'live') continue;
    const live = tenant.known.get(contract.id)?.fields;
    if (live === undefined) continue;
    const liveFingerprint = fingerprint(live);
    const stored = tenant.stored?.get(contract.id)?.fields;
    if (stored !== undefined && fingerprint(stored) === liveFingerprint) continue;
    writes.push({
      contractId: contract.id,
      fields: live,
      fingerprint: liveFingerprint,
      appliedAt,
      commit: context.source.commit,
      ...(inFlight.has(contract.id) ? { runId: context.runId } : {}),
    });
  }
  for (let start = 0; start < writes.length; start += RECORD_CONCURRENCY) {
    await Promise.all(
      writes.slice(start, start + RECORD_CONCURRENCY).map((applied) => context.store.writeContract(tenant.tenant, applied, { lock: tenant.lock })),
    );
  }
  if (writes.length > 0) context.logger.debug({ tenant: tenant.tenant, records: writes.length }, 'unchanged contracts recorded as read');
}

/** The run record a finished tenant run leaves: its commit, and what is left to do. */
function finishedRecord(context: RunContext, tenant: LearntTenant, pending: readonly PendingContract[]): TenantRunRecord {
  const { options, source, clock } = context;
  const previous = tenant.previousRun;
  const updatedAt = new Date(clock.now()).toISOString();
  if (options.narrowed?.has(tenant.tenant)) {
    return {
      lastAppliedCommit: previous?.lastAppliedCommit ?? null,
      ...(previous?.planningFingerprint === undefined ? {} : { planningFingerprint: previous.planningFingerprint }),
      pending,
      updatedAt,
    };
  }
  // A run from a working tree outside git has no commit: the earlier one (and how it was planned) stays.
  const planning = source.commit === null ? previous?.planningFingerprint : planningFingerprint(options.config, tenant.tenant);
  return {
    lastAppliedCommit: options.uncommitted ? null : (source.commit ?? previous?.lastAppliedCommit ?? null),
    ...(planning === undefined ? {} : { planningFingerprint: planning }),
    pending,
    updatedAt,
  };
}

/**
 * Writes the tenant's run record once its sending is done, even when nothing was sent: the commit
 * advances, and contracts now settled leave `pending`.
 */
export async function recordRun(context: RunContext, tenant: CheckedTenant, sent: SentTenant): Promise<void> {
  context.progress.phase('record');
  const notSent = new Map<string, { file: string; reason: string }>();
  for (const failure of tenant.unreadable.values())
    notSent.set(failure.contractId, { file: failure.file, reason: failure.reason ?? 'could not read the contract' });
  for (const { contract } of tenant.work.items) {
    const refused = tenant.refusedContracts.get(contract.id);
    if (refused !== undefined) notSent.set(contract.id, { file: contract.file, reason: refused.reason });
  }
  // Planned again by the next run (a `failed` entry), which reads only these: the others are recorded.
  for (const contract of tenant.send) if (sent.interrupted.has(contract.id)) notSent.set(contract.id, { file: contract.file, reason: INTERRUPTED });
  // A narrowed tenant read no file for the contracts left out: their earlier entries stay.
  const filesRead = context.options.narrowed?.has(tenant.tenant) ? new Set<string>() : context.options.filesRead?.get(tenant.tenant);
  const pending = pendingAfterRun({
    since: context.startedAt,
    previous: tenant.previousRun?.pending ?? [],
    planned: tenant.planned,
    sent: sent.outcomes,
    notSent,
    ...(filesRead ? { filesRead } : {}),
  });
  await context.store.writeRun(tenant.tenant, finishedRecord(context, tenant, pending), {
    lock: tenant.lock,
    lastAppliedCommit: tenant.previousRun?.lastAppliedCommit ?? null,
  });
}

/**
 * How the tenant's run ended, contract by contract. `error`: why nothing (more) was sent for it;
 * `notSent`: what its contracts not sent say; `previewed`: a run that sends nothing, where every
 * contract that would be sent counts as applied.
 */
export function reportTenant(
  tenant: CheckedTenant,
  outcomes: ReadonlyMap<string, ContractOutcome>,
  ending: { readonly error?: string; readonly notSent: string; readonly stopped: boolean; readonly previewed: boolean },
): TenantReport {
  const { error } = ending;
  const fresh = new Map(tenant.send.map((contract) => [contract.id, contract]));
  // Reads finish in any order: reported in the order the contracts are declared.
  const failures: ContractResult[] = [...tenant.unreadable.values()].sort((a, b) => compareText(a.file, b.file) || a.line - b.line);
  let applied = 0;
  let ops = 0;
  for (const item of tenant.work.items) {
    const refused = tenant.refusedContracts.get(item.contract.id);
    const contract = refused === undefined ? (fresh.get(item.contract.id) ?? item.contract) : item.contract;
    ops += contract.ops.length;
    const outcome = outcomes.get(contract.id);
    const base = { contractId: contract.id, file: contract.file, line: contract.line, ops: contract.ops.length };
    if (refused !== undefined) failures.push({ ...base, outcome: refused.outcome, status: null, reason: refused.reason });
    else if (ending.previewed && error === undefined) applied += 1;
    else if (outcome === undefined)
      failures.push({ ...base, outcome: 'skipped', status: null, reason: error === undefined ? (ending.stopped ? INTERRUPTED : 'not sent') : ending.notSent });
    else if (outcome.outcome === 'applied') applied += 1;
    else if (outcome.outcome === 'failed' && outcome.status === 404)
      failures.push({ ...base, outcome: 'not-on-service', status: 404, reason: notOnServiceReason(contract.id, 'patch') });
    else failures.push({ ...base, outcome: outcome.outcome, status: outcome.status, reason: outcome.reason });
  }
  // A settled contract is no change of this run's plan; one that did not settle is reported.
  for (const contract of tenant.work.settle) {
    const outcome = outcomes.get(contract.id);
    if (outcome !== undefined && outcome.outcome !== 'applied') {
      failures.push({
        contractId: contract.id,
        file: contract.file,
        line: contract.line,
        ops: 0,
        outcome: outcome.outcome,
        status: outcome.status,
        reason: outcome.reason,
      });
    }
  }
  const { requests, retries, throttles } = tenant.lane.counters;
  return {
    tenant: tenant.tenant,
    contracts: tenant.planned.length + tenant.unreadable.size,
    changed: tenant.work.items.length,
    applied,
    ops,
    requests,
    retries,
    throttles,
    failures,
    ...(error === undefined ? {} : { error }),
  };
}
