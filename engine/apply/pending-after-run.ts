/** What a finished tenant run leaves in its run record's `pending` list. Pure. */
import type { PlanContract } from '../plan/types.ts';
import type { PendingContract } from '../state/types.ts';
import type { ContractOutcome } from './apply-contract.ts';

export interface TenantRunFacts {
  /** When the run started: the `since` of the entries it leaves. */
  readonly since: string;
  /** The tenant's `pending` list before the run. */
  readonly previous: readonly PendingContract[];
  /** Every contract the run planned. */
  readonly planned: readonly PlanContract[];
  /** The contracts the run sent, and how each ended. */
  readonly sent: ReadonlyMap<string, ContractOutcome>;
  /** Contracts the run looked at and did not send (unreadable, refused as stale), with why. */
  readonly notSent: ReadonlyMap<string, { readonly file: string; readonly reason: string }>;
  /**
   * An incremental run's desired-state files: the only ones it read. An earlier entry of a
   * contract it did not plan is then kept unless its file was read (so the contract is gone).
   * Undefined for a run that read every file.
   */
  readonly filesRead?: ReadonlySet<string>;
}

/**
 * The contracts the next run must look at again, by ContractId:
 * - each contract sent and not applied, with its outcome;
 * - each contract not sent, as `failed`, unless an earlier run left it uncertain: nothing this run
 *   did settles that, so the earlier entry stays;
 * - each earlier entry this run did not settle. A contract is settled when the run sent it, or
 *   planned nothing for it against a live read, or planned nothing for it after a `failed` patch
 *   (which left the service and the state store as they were). An uncertain contract planned from
 *   the state store is not: its patch may have landed unrecorded. A contract no longer planned
 *   (gone from the desired state) is dropped: nothing is left to do for it.
 * Each entry carries the file that declares the contract now, for incremental apply.
 */
export function pendingAfterRun(facts: TenantRunFacts): PendingContract[] {
  const planned = new Map(facts.planned.map((contract) => [contract.id, contract]));
  const previous = new Map(facts.previous.map((entry) => [entry.contractId, entry]));
  const pending = new Map<string, PendingContract>();
  for (const [contractId, outcome] of facts.sent) {
    if (outcome.outcome === 'applied') continue;
    const file = planned.get(contractId)?.file;
    pending.set(contractId, { contractId, outcome: outcome.outcome, reason: outcome.reason, since: facts.since, ...(file === undefined ? {} : { file }) });
  }
  for (const [contractId, { file, reason }] of facts.notSent) {
    const before = previous.get(contractId);
    pending.set(
      contractId,
      before !== undefined && before.outcome !== 'failed' ? { ...before, file } : { contractId, outcome: 'failed', reason, since: facts.since, file },
    );
  }
  for (const entry of facts.previous) {
    if (facts.sent.has(entry.contractId) || facts.notSent.has(entry.contractId)) continue;
    const contract = planned.get(entry.contractId);
    if (contract === undefined) {
      const unseen = facts.filesRead !== undefined && (entry.file === undefined || !facts.filesRead.has(entry.file));
      if (unseen) pending.set(entry.contractId, entry);
      continue;
    }
    if (contract.action === 'noop' && (contract.knownFrom === 'live' || entry.outcome === 'failed')) continue;
    pending.set(entry.contractId, { ...entry, file: contract.file });
  }
  return [...pending.values()].sort((a, b) => (a.contractId < b.contractId ? -1 : a.contractId > b.contractId ? 1 : 0));
}
