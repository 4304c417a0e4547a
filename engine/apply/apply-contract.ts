/**
 * One contract's PATCH, from the planned ops to a durable state record, surviving the ambiguous
 * case: a connection that broke after the request was sent (docs/architecture.md section 7).
 */
import type { ApiClient } from '../api/client.ts';
import { ApiError } from '../api/errors.ts';
import type { CollectionMode } from '../config/types.ts';
import type { CollectionFieldName } from '../model/fields.ts';
import { applyAcceptedOps } from '../model/apply-ops.ts';
import type { ContractFields, Op } from '../model/types.ts';
import { diffContract } from '../plan/diff.ts';
import { fingerprint } from '../model/fingerprint.ts';
import type { StateStore, TenantLock } from '../state/types.ts';
import { messageOf } from './failure.ts';
import { patchBodyProblem } from './patch-body-check.ts';
import { RunInterrupted } from './interrupted.ts';
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
  /**
   * The run that counts this contract as applied when it is (AppliedContract.runId): the contracts a
   * run planned to change. Left out for one the run only settles by a read.
   */
  readonly runId?: string;
}

export interface ContractContext {
  readonly lane: TenantLane;
  readonly api: ApiClient;
  readonly store: StateStore;
  /** The tenant's lock: records are written only while it holds the tenant (fencing). */
  readonly lock?: TenantLock | undefined;
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

/** At most this many members are named in a conflict's reason. */
const NAMED_MEMBERS = 3;

/** The members a patch adds or removes, e.g. `Add /Contract/Company {"Id":2,"RelationType":"Client"}`. */
function membersOf(ops: readonly Op[]): string {
  const named = ops.filter((op) => op.op !== 'Replace').map((op) => `${op.op} ${op.path}${op.value === undefined ? '' : ` ${JSON.stringify(op.value)}`}`);
  const more = named.length - NAMED_MEMBERS;
  return `${named.slice(0, NAMED_MEMBERS).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/**
 * A conflict status (`api.conflictStatuses`, default 409) to a patch that adds or removes members:
 * the known state was behind the service.
 */
function isConflict(error: unknown, ops: readonly Op[]): error is ApiError {
  return error instanceof ApiError && error.conflict && !isReplaceOnly(ops);
}

function conflictReason(error: ApiError, ops: readonly Op[], settle: string): string {
  return `${error.message}; conflict: the service does not hold the members this patch expects for ${membersOf(ops)}, so its known state was behind the service (${settle})`;
}

// Statuses a service may answer when an Add/Remove meets members other than it expected (the
// service publishes none): worth a hint when api.conflictStatuses does not list them.
const LIKELY_CONFLICT_STATUSES: ReadonlySet<number> = new Set([400, 422]);

/** A hint to configure api.conflictStatuses, for an Add/Remove patch refused with a likely conflict status. */
function conflictHint(error: unknown, ops: readonly Op[]): string {
  if (!(error instanceof ApiError) || error.status === null || error.conflict || !LIKELY_CONFLICT_STATUSES.has(error.status) || isReplaceOnly(ops)) return '';
  return ` (if the service answers ${error.status} when its members differ from what contract-sync knew, add ${error.status} to api.conflictStatuses: such an answer is then settled by a read and one re-plan)`;
}

/** Why the loop reads the contract: an earlier run's uncertainty, a lost answer, or a 409. */
type ReadReason = 'uncertain' | 'ambiguous' | 'conflict';

/**
 * Sends the contract's ops and records the result. After an ambiguous failure the contract is
 * read again and re-planned from what the service holds, so that an Add or Remove that did land is
 * never sent a second time (that would be a 409); without a read only a Replace-only patch may be
 * resent, and anything else ends as `unknown` for the next run to settle. A 409 to an Add/Remove
 * patch means the known state was behind the service: with a read the contract is read and
 * re-planned once (docs/architecture.md section 7), without one it fails naming the members.
 */
export async function applyContract(work: ContractWork, context: ContractContext): Promise<ContractOutcome> {
  const { lane, api } = context;
  const { contractId } = work;
  let ops = work.ops;
  let known = work.known;
  if (work.uncertain && !api.canRead && !isReplaceOnly(ops)) {
    return {
      outcome: 'unknown',
      status: null,
      reason: `${work.uncertain}; its patch adds or removes members, so it is not sent blindly (configure api.read to settle it)`,
    };
  }
  // Read first when an earlier run left the contract uncertain and this run has not read it yet.
  let reading: ReadReason | undefined = work.uncertain !== undefined && api.canRead && !work.knownIsLive ? 'uncertain' : undefined;
  const reconciled = reading !== undefined;
  // The 409 that made this run read the contract; a second one after the re-plan is not read again.
  let conflict: ApiError | undefined;
  for (let reconciles = 0; ; reconciles += 1) {
    if (reading !== undefined) {
      let live: ContractFields;
      try {
        live = (await lane.call({ kind: 'read', contractId, resendable: true }, (token) => api.read(contractId, token))).fields;
      } catch (error) {
        // Not read because the run stopped: nothing of this run was sent, what an earlier run left stands.
        if (error instanceof RunInterrupted && reading === 'uncertain') throw error;
        // A 409 left the contract as it was: nothing of this patch is applied.
        if (reading === 'conflict' && conflict !== undefined) {
          return {
            outcome: 'failed',
            status: conflict.status,
            reason: conflictReason(conflict, ops, `and the contract could not be read to settle it: ${messageOf(error)}`),
          };
        }
        return { outcome: 'unknown', status: null, reason: `the outcome of a patch is unknown and the contract could not be read again: ${messageOf(error)}` };
      }
      known = live;
      ops = diffContract(live, work.desired, { collections: context.collections });
      if (ops.length === 0) return recordOrUnknown(context, lane.tenant, work, live, true);
    }
    // Checked against specs/patch.schema.json before it is queued: a body the schema refuses is a
    // defect of the planner (or of a saved plan), never sent (docs/architecture.md section 2).
    const refused = patchBodyProblem(ops);
    if (refused !== undefined) return { outcome: 'failed', status: null, reason: refused };
    try {
      await lane.call({ kind: 'patch', contractId, resendable: isReplaceOnly(ops) }, (token) => api.patch(contractId, ops, token));
    } catch (error) {
      // This PATCH was not sent (the run stopped): the caller reports the contract as not sent.
      if (error instanceof RunInterrupted) throw error;
      if (isConflict(error, ops)) {
        if (!api.canRead)
          return {
            outcome: 'failed',
            status: error.status,
            reason: conflictReason(error, ops, 'configure api.read to settle a conflict by reading the contract'),
          };
        if (conflict !== undefined)
          return { outcome: 'failed', status: error.status, reason: conflictReason(error, ops, 'again after reading and re-planning the contract once') };
        conflict = error;
        reading = 'conflict';
        continue;
      }
      if (!(error instanceof ApiError) || !error.ambiguous)
        return { outcome: 'failed', status: error instanceof ApiError ? error.status : null, reason: `${messageOf(error)}${conflictHint(error, ops)}` };
      if (!api.canRead) {
        const why = !isReplaceOnly(ops)
          ? 'the patch adds or removes members, so it was not resent'
          : error.kind === 'retryable'
            ? `no clear answer after ${context.maxReconciles} sends`
            : 'the patch may have been applied';
        return { outcome: 'unknown', status: null, reason: `${messageOf(error)}; ${why} (configure api.read to settle it)` };
      }
      if (reconciles >= context.maxReconciles)
        return { outcome: 'unknown', status: null, reason: `${messageOf(error)} (gave up after ${reconciles} re-reads)` };
      reading = 'ambiguous';
      continue;
    }
    return recordApplied(context, lane.tenant, work, known, ops, reconciled || reconciles > 0);
  }
}

/**
 * The service has answered the patch with success, so nothing here may turn it into `failed`
 * (docs/architecture.md section 7): the ops are not validated again, and a known state that cannot
 * take them (a stale record, a read the model does not fully describe) makes the contract
 * `unknown`, settled by a read next run.
 */
async function recordApplied(
  context: ContractContext,
  tenant: string,
  work: Pick<ContractWork, 'contractId' | 'runId'>,
  known: ContractFields | undefined,
  ops: readonly Op[],
  reconciled: boolean,
): Promise<ContractOutcome> {
  let fields: ContractFields;
  try {
    fields = applyAcceptedOps(known, ops);
  } catch (error) {
    return { outcome: 'unknown', status: null, reason: `applied, but its new state could not be computed from the known state: ${messageOf(error)}` };
  }
  return recordOrUnknown(context, tenant, work, fields, reconciled);
}

/**
 * The service has applied the patch: a record that cannot be written leaves the state store
 * behind the service, so the contract is `unknown` (settled by a read next run), never `failed`,
 * which would let the next run trust the stale record and send an Add a second time.
 */
async function recordOrUnknown(
  context: ContractContext,
  tenant: string,
  { contractId, runId }: Pick<ContractWork, 'contractId' | 'runId'>,
  fields: ContractFields,
  reconciled: boolean,
): Promise<ContractOutcome> {
  try {
    await context.store.writeContract(
      tenant,
      {
        contractId,
        fields,
        fingerprint: fingerprint(fields),
        appliedAt: new Date(context.now()).toISOString(),
        commit: context.commit,
        ...(runId === undefined ? {} : { runId }),
      },
      { lock: context.lock },
    );
  } catch (error) {
    return { outcome: 'unknown', status: null, reason: `applied, but the state store could not record it: ${messageOf(error)}` };
  }
  return { outcome: 'applied', reconciled };
}
