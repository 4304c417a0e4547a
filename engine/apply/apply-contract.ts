/**
 * One contract's PATCH, from the planned ops to a durable state record, surviving the ambiguous
 * case: a connection that broke after the request was sent (DESIGN.md section 7).
 */
import type { ApiClient } from '../api/client.ts';
import { ApiError } from '../api/errors.ts';
import type { CollectionMode } from '../config/types.ts';
import type { CollectionFieldName } from '../model/fields.ts';
import { applyAcceptedOps } from '../model/apply-ops.ts';
import type { ContractFields, Op } from '../model/types.ts';
import { diffContract } from '../plan/diff.ts';
import { fingerprint } from '../plan/fingerprint.ts';
import type { StateStore } from '../state/types.ts';
import { messageOf } from './failure.ts';
import type { TenantLane } from './tenant-lane.ts';

export interface ContractWork {
  readonly contractId: string;
  readonly ops: readonly Op[];
  /** The known state the ops were planned from; undefined when it was unknown. */
  readonly known: ContractFields | undefined;
  /** Whether `known` was read live in this run (rather than taken from the state store). */
  readonly knownIsLive: boolean;
  /** The contract's desired fields: what a re-plan after an ambiguous failure aims at. */
  readonly desired: ContractFields;
  /**
   * Why an earlier run's patch of this contract may or may not have landed (a crash, or an
   * ambiguous failure without a read); undefined when nothing is uncertain. Such a contract is read
   * and re-planned first when reads are configured.
   */
  readonly uncertain?: string;
}

export interface ContractContext {
  readonly lane: TenantLane;
  readonly api: ApiClient;
  readonly store: StateStore;
  readonly collections: Readonly<Record<CollectionFieldName, CollectionMode>>;
  readonly commit: string | null;
  readonly now: () => number;
  /** Re-plans after ambiguous failures before the contract is given up. */
  readonly maxReconciles: number;
}

export type ContractOutcome =
  | { readonly outcome: 'applied'; readonly reconciled: boolean }
  /** The service refused, or kept failing: nothing of this contract is known to be applied. */
  | { readonly outcome: 'failed'; readonly status: number | null; readonly reason: string }
  /** The PATCH may or may not have been applied, and without a read there is no way to tell. */
  | { readonly outcome: 'unknown'; readonly status: null; readonly reason: string };

function isReplaceOnly(ops: readonly Op[]): boolean {
  return ops.every((op) => op.op === 'Replace');
}

/**
 * Sends the contract's ops and records the result. After an ambiguous failure the contract is
 * read again and re-planned from what the service holds, so that an Add or Remove that did land is
 * never sent a second time (that would be a 409); without a read only a Replace-only patch may be
 * resent, and anything else ends as `unknown` for the next run to settle.
 */
export async function applyContract(work: ContractWork, context: ContractContext): Promise<ContractOutcome> {
  const { lane, api } = context;
  const { contractId } = work;
  let ops = work.ops;
  let known = work.known;
  if (work.uncertain && !api.canRead && !isReplaceOnly(ops)) {
    return { outcome: 'unknown', status: null, reason: `${work.uncertain}; its patch adds or removes members, so it is not sent blindly (configure api.read to settle it)` };
  }
  // Read first when an earlier run left the contract uncertain and this run has not read it yet.
  let reconcile = work.uncertain !== undefined && api.canRead && !work.knownIsLive;
  const reconciled = reconcile;
  for (let reconciles = 0; ; reconciles += 1) {
    if (reconcile) {
      let live: ContractFields;
      try {
        live = (await lane.call({ kind: 'read', contractId, resendable: true }, (token) => api.read(contractId, token))).fields;
      } catch (error) {
        return { outcome: 'unknown', status: null, reason: `the outcome of a patch is unknown and the contract could not be read again: ${messageOf(error)}` };
      }
      known = live;
      ops = diffContract(live, work.desired, { collections: context.collections });
      if (ops.length === 0) return recordOrUnknown(context, lane.tenant, contractId, live, true);
    }
    try {
      await lane.call({ kind: 'patch', contractId, resendable: isReplaceOnly(ops) }, (token) => api.patch(contractId, ops, token));
    } catch (error) {
      if (!(error instanceof ApiError) || !error.ambiguous) return { outcome: 'failed', status: error instanceof ApiError ? error.status : null, reason: messageOf(error) };
      if (!api.canRead) {
        const why = isReplaceOnly(ops) ? `no answer after ${context.maxReconciles} sends` : 'the patch adds or removes members, so it was not resent';
        return { outcome: 'unknown', status: null, reason: `${messageOf(error)}; ${why} (configure api.read to settle it)` };
      }
      if (reconciles >= context.maxReconciles) return { outcome: 'unknown', status: null, reason: `${messageOf(error)} (gave up after ${reconciles} re-reads)` };
      reconcile = true;
      continue;
    }
    return recordApplied(context, lane.tenant, contractId, known, ops, reconciled || reconciles > 0);
  }
}

/**
 * The service has answered the patch with success, so nothing here may turn it into `failed`
 * (docs/architecture.md section 7): the ops are not validated again, and a known state that cannot
 * take them (a stale record, a read the model does not fully describe) makes the contract
 * `unknown`, settled by a read next run.
 */
async function recordApplied(context: ContractContext, tenant: string, contractId: string, known: ContractFields | undefined, ops: readonly Op[], reconciled: boolean): Promise<ContractOutcome> {
  let fields: ContractFields;
  try {
    fields = applyAcceptedOps(known, ops);
  } catch (error) {
    return { outcome: 'unknown', status: null, reason: `applied, but its new state could not be computed from the known state: ${messageOf(error)}` };
  }
  return recordOrUnknown(context, tenant, contractId, fields, reconciled);
}

/**
 * The service has applied the patch: a record that cannot be written leaves the state store
 * behind the service, so the contract is `unknown` (settled by a read next run), never `failed`,
 * which would let the next run trust the stale record and send an Add a second time.
 */
async function recordOrUnknown(context: ContractContext, tenant: string, contractId: string, fields: ContractFields, reconciled: boolean): Promise<ContractOutcome> {
  try {
    await context.store.writeContract(tenant, {
      contractId,
      fields,
      fingerprint: fingerprint(fields),
      appliedAt: new Date(context.now()).toISOString(),
      commit: context.commit,
    });
  } catch (error) {
    return { outcome: 'unknown', status: null, reason: `applied, but the state store could not record it: ${messageOf(error)}` };
  }
  return { outcome: 'applied', reconciled };
}
