/**
 * An apply run, in three phases:
 * 1. Lock and learn: the tenants' locks are taken one at a time, in one global order (tenant
 *    names sorted); as soon as a tenant's lock is held, its known state is learnt (token check,
 *    live reads or the state store) while the next lock is awaited.
 * 2. Plan: one plan of every tenant, made before the first PATCH of any. The removal guard
 *    (engine/plan/removal-guard.ts) refuses the tenants it trips; then `confirm` is shown the plan
 *    and what would be sent, and may cancel the run before anything is written or sent.
 * 3. Send: each tenant (all in parallel, none able to stop another) sends its ops through its
 *    lane, records each contract as soon as it is applied, and releases its lock as soon as its
 *    own sending is done.
 *
 * Why one global order (docs/architecture.md section 7): planning every tenant before sending
 * means a run holds all its tenants' locks at once. Taken all at once, two runs could each hold a
 * tenant the other waits for, until the lock timeout. Taken in the same order by every run, a run
 * waiting for tenant T holds only tenants sorted before T, and the run holding T waits, if at all,
 * only for tenants sorted after T: no cycle of waits can form, and each wait ends when the holder
 * has sent to T. (Each tenant running alone, lock-plan-send-release, would never hold two locks,
 * but would leave no moment where the whole plan is known before the first PATCH.) A tenant whose
 * lock times out, or that fails before sending, releases its lock at once and is reported as
 * failed; the other tenants go on. A dry run takes no lock.
 */
import PQueue from 'p-queue';
import type { ApiClient } from '../api/client.ts';
import type { TenantTokens } from '../auth/index.ts';
import type { Clock } from '../io/clock.ts';
import { compareText } from '../text/compare-text.ts';
import type { Config } from '../config/types.ts';
import type { ContractSet } from '../desired/types.ts';
import type { Logger } from '../log/logger.ts';
import type { ContractFields } from '../model/types.ts';
import { createPlan } from '../plan/create-plan.ts';
import { fingerprint } from '../model/fingerprint.ts';
import { countRemovals, judgeRemovals, type RemovalLimits } from '../plan/removal-guard.ts';
import type { PlanContract, PlanDocument, PlanSource, PlanTouched } from '../plan/types.ts';
import type { AppliedContract, KnownContract, KnownContracts, PendingContract, StateStore, TenantLock, TenantRunRecord } from '../state/types.ts';
import { applyContract, type ContractOutcome } from './apply-contract.ts';
import { messageOf, statusOf } from './failure.ts';
import { INTERRUPTED, RunInterrupted, untilAborted, type InterruptedCount } from './interrupted.ts';
import { planningFingerprint } from './incremental.ts';
import { pendingAfterRun } from './pending-after-run.ts';
import { retryBudget } from './retry-policy.ts';
import { indexPlan, judgeReviewed } from './reviewed-plan.ts';
import { notOnServiceReason, RUN_REPORT_VERSION, runWarnings, summarise, type ContractResult, type RunReport, type TenantReport } from './run-report.ts';
import { TenantLane } from './tenant-lane.ts';

export interface ApplyRunOptions {
  readonly config: Config;
  /** The desired state to apply, already narrowed to the selected tenants. */
  readonly contractSets: readonly ContractSet[];
  readonly source: PlanSource;
  /** Take known state from live reads (needs api.read) instead of the state store. */
  readonly refresh: boolean;
  /** Plan (and read, with refresh) but send no PATCH, take no lock and write nothing. */
  readonly dryRun: boolean;
  readonly lockTimeoutMs: number;
  /** Also the X-Correlation-Id of every request. */
  readonly runId: string;
  /** With `source.base`: what the change since the base touched, marked in the plan. */
  readonly touched?: PlanTouched;
  /**
   * A saved plan to apply (`apply PLAN.json`), planned from the same desired state and known state
   * obtained the same way. Only its `update` contracts are sent, each only when planning it now
   * gives its `knownFingerprint` and exactly its ops; the others are refused as `stale`. Contracts
   * it does not change are not sent.
   */
  readonly reviewed?: PlanDocument;
  /**
   * The desired state holds edits that `source.commit` does not (a working tree with uncommitted
   * changes): the run record then names no commit, so that the next incremental run plans every
   * contract instead of trusting a commit that was not what was applied.
   */
  readonly uncommitted?: boolean;
  /**
   * Incremental runs: per tenant, the only desired-state files read (see engine/apply/incremental.ts).
   * A contract left pending by an earlier run and declared elsewhere stays pending. A tenant
   * absent from the map was planned from every file.
   */
  readonly filesRead?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Targeted runs (`--target`, `--exclude`): tenants planned with some of their contracts left
   * out. Their run record keeps the commit (and planning fingerprint) it had: the contracts left
   * out were not applied at this commit. The pending entries of the planned contracts are updated;
   * those of the others are kept.
   */
  readonly narrowed?: ReadonlySet<string>;
  /**
   * The removal guard: a tenant whose ops to send trip it is refused (nothing sent for it, reported
   * as its error); the other tenants go on. Left out, nothing is refused (the library's default).
   */
  readonly removals?: RemovalLimits;
  /**
   * Checked for each tenant under its lock, with the run record read there: what another run
   * recorded while this one waited (a newer commit applied) can refuse the tenant, whose reason
   * becomes its error (nothing sent for it). Not called in a dry run, which takes no lock.
   */
  readonly checkUnderLock?: (tenant: string, record: TenantRunRecord | undefined) => Promise<string | undefined>;
}

/** What a run is about to send, once every tenant is planned: what `confirm` is shown. */
export interface SendPreview {
  readonly plan: PlanDocument;
  /** What would be sent: tenants that could not start or are refused, and stale contracts, left out. */
  readonly sending: { readonly tenants: number; readonly contracts: number; readonly ops: number };
  /** Tenants the removal guard refuses, and why (the message names the count, the tenant and the flag). */
  readonly refused: readonly { readonly tenant: string; readonly reason: string }[];
  /** Contracts that could not be read, and are therefore not in the plan. */
  readonly unreadable: readonly { readonly tenant: string; readonly result: ContractResult }[];
}

export interface ApplyProgress {
  /** `read`: the known state read live (before the plan); `send`: the PATCHes. Each step counts on its own. */
  readonly step: 'read' | 'send';
  readonly tenant: string;
  readonly contractId: string;
  /** How the contract's send ended; a read is `read`, or `failed` / `not-on-service`. */
  readonly outcome: ContractResult['outcome'] | 'read';
  /** Contracts of this step finished so far, and to do in all, over every tenant. */
  readonly done: number;
  readonly total: number;
}

export interface ApplyRunDeps {
  readonly store: StateStore;
  readonly tokens: TenantTokens;
  /** Tokens with core:read for the reads of a run whose `tokens` lack it; see LaneOptions.readTokens. */
  readonly readTokens?: TenantTokens;
  readonly api: ApiClient;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly onProgress?: (progress: ApplyProgress) => void;
  /**
   * The run's stop (engine/apply/interrupted.ts): once aborted no lock is waited for and no request
   * starts; answered PATCHes are recorded, the contracts not sent stay pending for the next run,
   * and every lock is released. Before the plan is sent, the run sends nothing.
   */
  readonly signal?: AbortSignal;
  /**
   * Called once, when every tenant is planned and before anything is written or sent (in a dry run
   * too, which sends nothing whatever the answer): where a command shows the plan and asks.
   * Resolving false cancels the run: nothing is sent or written, and every lock is released.
   */
  readonly confirm?: (preview: SendPreview) => Promise<boolean>;
  /** The queue of requests in flight across tenants (rate.maxInFlight); left out, the run makes its own. */
  readonly inFlight?: PQueue;
}

export interface ApplyRunResult {
  readonly plan: PlanDocument;
  readonly report: RunReport;
  /** `confirm` declined: nothing was sent or written. */
  readonly cancelled?: true;
  /** The signal aborted the run: what it sent and did not. */
  readonly interrupted?: InterruptedCount;
}

/** A tenant the run's own check refuses under its lock: its message is the tenant's error. */
class TenantRefused extends Error {
  readonly code = 'refused';
}

/** Why the contracts of a run cancelled at its confirmation were not sent. */
const CANCELLED = 'not sent: the run was cancelled before sending';

interface DesiredContract {
  readonly fields: ContractFields;
  readonly file: string;
  readonly line: number;
}

interface PreparedTenant {
  readonly tenant: string;
  readonly lane: TenantLane;
  readonly lock?: TenantLock;
  readonly known: KnownContracts;
  /**
   * The state store's records of the planned contracts, when `known` was read live (not read in a
   * dry run): a contract read live and found unchanged is recorded only when its record differs.
   */
  readonly stored?: KnownContracts;
  /** Contracts that could not be read: not planned, reported as failed. */
  readonly unreadable: Map<string, ContractResult>;
  readonly uncertain: ReadonlyMap<string, string>;
  /** The tenant's run record as the previous run left it (not read in a dry run). */
  readonly previousRun?: TenantRunRecord;
  /** A problem of the whole tenant: nothing is sent for it. */
  readonly error?: string;
}

/** What a tenant's run sends, and what it refuses, in plan order. */
interface TenantWork {
  readonly items: readonly WorkItem[];
  readonly send: readonly PlanContract[];
  /**
   * Contracts an earlier run left uncertain that plan as no change from the state store: read (and
   * re-planned from what is live) so that they settle instead of staying pending for ever.
   */
  readonly settle: readonly PlanContract[];
}

/** State records written at once when recording contracts found unchanged. */
const RECORD_CONCURRENCY = 16;

/** A contract to send (from the fresh plan), or one of a saved plan refused as stale (as reviewed). */
type WorkItem = { readonly contract: PlanContract; readonly stale?: undefined } | { readonly contract: PlanContract; readonly stale: string };

/** Contracts whose earlier patch may have landed unrecorded: the next run must not trust the state store for them. */
function uncertainContracts(pending: readonly PendingContract[] | undefined): Map<string, string> {
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

export async function runApply(options: ApplyRunOptions, deps: ApplyRunDeps): Promise<ApplyRunResult> {
  const { config, dryRun } = options;
  const { store, tokens, api, clock, logger } = deps;
  const startedAt = new Date(clock.now()).toISOString();
  const refresh = options.refresh && api.canRead;
  const budget = retryBudget(config.retry.maxAttempts);
  const inFlight = deps.inFlight ?? new PQueue({ concurrency: config.rate.maxInFlight });
  const desiredById = new Map<string, Map<string, DesiredContract>>();
  for (const set of options.contractSets) {
    const byId = desiredById.get(set.tenant) ?? new Map<string, DesiredContract>();
    desiredById.set(set.tenant, byId);
    for (const contract of set.contracts) byId.set(contract.id, { fields: contract.fields, file: set.file, line: contract.line });
  }
  const reviewed = options.reviewed === undefined ? undefined : indexPlan(options.reviewed);
  // A tenant of the saved plan with no desired state left still runs: its reviewed contracts are refused.
  const tenantNames = [...new Set([...desiredById.keys(), ...(reviewed?.keys() ?? [])])].sort();
  const { signal } = deps;
  const readTotal = refresh ? [...desiredById.values()].reduce((sum, byId) => sum + byId.size, 0) : 0;
  let readDone = 0;

  /** A tenant that cannot be applied: nothing is sent for it, and it holds no lock. */
  function failedTenant(tenant: string, lane: TenantLane, unreadable: Map<string, ContractResult>, error: unknown): PreparedTenant {
    // A dry run (plan --refresh) applies nothing: its command reports the tenant's problem itself.
    if (!dryRun) logger.info({ tenant, code: (error as { code?: unknown }).code }, 'tenant not applied');
    return { tenant, lane, known: new Map(), unreadable, uncertain: new Map(), error: messageOf(error) };
  }

  /** Learns a tenant's known state, under its lock (none in a dry run). Never rejects. */
  async function prepare(tenant: string, lane: TenantLane, lock: TenantLock | undefined): Promise<PreparedTenant> {
    const unreadable = new Map<string, ContractResult>();
    try {
      const previousRun = dryRun ? undefined : await store.readRun(tenant);
      const refusal = dryRun ? undefined : await options.checkUnderLock?.(tenant, previousRun);
      if (refusal !== undefined) throw new TenantRefused(refusal);
      const uncertain = uncertainContracts(previousRun?.pending);
      // Only the records of the contracts planned: an incremental run of a large tenant reads a few.
      const planned = new Set(desiredById.get(tenant)?.keys() ?? []);
      if (!refresh) return { tenant, lane, lock, known: await store.readTenant(tenant, planned), unreadable, uncertain, previousRun };
      const stored = dryRun ? undefined : await store.readTenant(tenant, planned);
      // The token is checked (tenant_id, scopes) before the first request is queued.
      await tokens.get(tenant);
      const known = new Map<string, KnownContract>();
      await Promise.all(
        [...(desiredById.get(tenant) ?? [])].map(async ([contractId, { file, line }]) => {
          try {
            const { fields } = await lane.call({ kind: 'read', contractId, resendable: true }, (token) => api.read(contractId, token));
            known.set(contractId, { fields, from: 'live' });
            readDone += 1;
            deps.onProgress?.({ step: 'read', tenant, contractId, outcome: 'read', done: readDone, total: readTotal });
          } catch (error) {
            // Not read because the run stopped: the run sends nothing (see `halted`).
            if (error instanceof RunInterrupted) return;
            const status = statusOf(error);
            logger.info({ tenant, contractId, status }, 'read failed; contract not planned');
            unreadable.set(
              contractId,
              status === 404
                ? { contractId, file, line, outcome: 'not-on-service', ops: 0, status, reason: notOnServiceReason(contractId, 'read') }
                : { contractId, file, line, outcome: 'failed', ops: 0, status, reason: `could not read the contract: ${messageOf(error)}` },
            );
            readDone += 1;
            deps.onProgress?.({ step: 'read', tenant, contractId, outcome: status === 404 ? 'not-on-service' : 'failed', done: readDone, total: readTotal });
          }
        }),
      );
      return { tenant, lane, lock, known, ...(stored ? { stored } : {}), unreadable, uncertain, previousRun };
    } catch (error) {
      // Released now: another run may be waiting for this tenant while this run plans the others.
      await lock?.release().catch((failure: unknown) => logger.warn({ tenant, code: (failure as { code?: unknown }).code }, 'lock not released'));
      return failedTenant(tenant, lane, unreadable, error);
    }
  }

  /** Phase 1 (see the file header): locks in `tenantNames` order, each tenant prepared as soon as it is locked. */
  async function lockAndPrepare(): Promise<PreparedTenant[]> {
    const preparing: Promise<PreparedTenant>[] = [];
    for (const tenant of tenantNames) {
      const lane = new TenantLane({
        tenant,
        ...config.rate,
        budget,
        inFlight,
        tokens,
        ...(deps.readTokens ? { readTokens: deps.readTokens } : {}),
        clock,
        random: deps.random,
        logger,
        ...(signal ? { signal } : {}),
      });
      let lock: TenantLock | undefined;
      try {
        // A lock taken after the run stopped waiting for it is released as soon as it comes.
        if (!dryRun)
          lock = await untilAborted(
            store.lock(tenant, { timeoutMs: options.lockTimeoutMs, owner: options.runId }),
            signal,
            (late) => void late.release().catch(() => undefined),
          );
        if (lock !== undefined) lane.haltOn(lock.lost);
      } catch (error) {
        preparing.push(Promise.resolve(failedTenant(tenant, lane, new Map(), error instanceof RunInterrupted ? new Error(INTERRUPTED) : error)));
        continue;
      }
      preparing.push(prepare(tenant, lane, lock));
    }
    return Promise.all(preparing);
  }

  const prepared = await lockAndPrepare();
  const byTenant = new Map(prepared.map((tenant) => [tenant.tenant, tenant]));
  const plan = createPlan(
    options.contractSets.map((set) => {
      const { unreadable } = byTenant.get(set.tenant)!;
      return unreadable.size === 0 ? set : { ...set, contracts: set.contracts.filter((contract) => !unreadable.has(contract.id)) };
    }),
    new Map(prepared.map((tenant) => [tenant.tenant, tenant.known])),
    { createdAt: startedAt, source: options.source, collections: config.collections, ...(options.touched ? { touched: options.touched } : {}) },
  );
  const plannedByTenant = new Map(plan.tenants.map((tenant) => [tenant.tenant, tenant.contracts]));

  function selectWork(tenant: PreparedTenant, contracts: readonly PlanContract[]): TenantWork {
    if (reviewed === undefined) {
      const send = contracts.filter((contract) => contract.action === 'update');
      const settle = api.canRead
        ? contracts.filter((contract) => contract.action === 'noop' && contract.knownFrom !== 'live' && tenant.uncertain.has(contract.id))
        : [];
      return { items: send.map((contract) => ({ contract })), send, settle };
    }
    const fresh = new Map(contracts.map((contract) => [contract.id, contract]));
    const items: WorkItem[] = [];
    for (const contract of reviewed.get(tenant.tenant)?.values() ?? []) {
      // Unreadable contracts are reported as failed reads already.
      if (contract.action !== 'update' || tenant.unreadable.has(contract.id)) continue;
      const verdict = judgeReviewed(contract, fresh.get(contract.id));
      const uncertain = tenant.uncertain.get(contract.id);
      if (verdict.kind === 'stale') items.push({ contract, stale: verdict.reason });
      // applyContract would read such a contract and re-plan it before sending: other ops than the
      // reviewed ones, computed from a state the reviewer never saw.
      else if (uncertain !== undefined && api.canRead && contract.knownFrom !== 'live') {
        items.push({
          contract,
          stale: `stale plan: ${uncertain}, so the state store the plan was made from may be behind the service; run contract-sync plan --refresh again`,
        });
      } else items.push({ contract: verdict.contract });
    }
    for (const contract of contracts) {
      if (contract.action === 'update' && reviewed.get(tenant.tenant)?.get(contract.id)?.action !== 'update') {
        logger.warn({ tenant: tenant.tenant, contractId: contract.id }, 'contract changes that the saved plan does not: not sent');
      }
    }
    // A saved plan sends only what was reviewed: its uncertain unchanged contracts stay pending.
    return { items, send: items.flatMap((item) => (item.stale === undefined ? [item.contract] : [])), settle: [] };
  }

  const work = new Map(prepared.map((tenant) => [tenant.tenant, selectWork(tenant, plannedByTenant.get(tenant.tenant) ?? [])]));
  const refusals = new Map<string, string>();
  for (const tenant of prepared) {
    if (options.removals === undefined || tenant.error !== undefined) continue;
    const removals = countRemovals(tenant.tenant, work.get(tenant.tenant)!.send, (contractId, field) => tenant.known.get(contractId)?.fields[field]?.length);
    const verdict = judgeRemovals(removals, options.removals);
    if (verdict.kind === 'allowed') continue;
    refusals.set(tenant.tenant, verdict.reason);
    logger.info(
      { tenant: tenant.tenant, removals: removals.removals, emptied: removals.emptied.length, maxRemovals: options.removals.maxRemovals },
      'tenant refused by the removal guard',
    );
  }
  const sendable = prepared.filter((tenant) => tenant.error === undefined && !refusals.has(tenant.tenant)).map((tenant) => work.get(tenant.tenant)!.send);
  const total = dryRun ? 0 : sendable.reduce((sum, send) => sum + send.length, 0);
  let done = 0;
  /** PATCHes sent (answered, applied or not) and not read first: what an interrupted run says it sent. */
  let sentCount = 0;

  /** Phase 2's end: the confirmation. A cancelled (or failed) confirmation leaves every lane closed and every lock released by runTenant. */
  async function confirmed(): Promise<boolean | Error> {
    if (deps.confirm === undefined) return true;
    try {
      return await deps.confirm({
        plan,
        sending: {
          tenants: sendable.filter((send) => send.length > 0).length,
          contracts: sendable.reduce((sum, send) => sum + send.length, 0),
          ops: sendable.reduce((sum, send) => sum + send.reduce((ops, contract) => ops + contract.ops.length, 0), 0),
        },
        refused: [...refusals].map(([tenant, reason]) => ({ tenant, reason })),
        unreadable: prepared.flatMap((tenant) => [...tenant.unreadable.values()].map((result) => ({ tenant: tenant.tenant, result }))),
      });
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
  // Stopped before the plan was confirmed (reads, locks, the question): nothing is sent.
  const answer = signal?.aborted ? false : await confirmed();
  function stopped(): boolean {
    return signal?.aborted === true;
  }
  const halted = answer !== true;
  const haltReason = stopped() ? INTERRUPTED : CANCELLED;

  /** The run record a finished tenant run leaves: its commit, and what is left to do. */
  function finishedRecord(tenant: PreparedTenant, pending: readonly PendingContract[]): TenantRunRecord {
    const { commit } = options.source;
    const previous = tenant.previousRun;
    if (options.narrowed?.has(tenant.tenant)) {
      return {
        lastAppliedCommit: previous?.lastAppliedCommit ?? null,
        ...(previous?.planningFingerprint === undefined ? {} : { planningFingerprint: previous.planningFingerprint }),
        pending,
        updatedAt: new Date(clock.now()).toISOString(),
      };
    }
    // A run from a working tree outside git has no commit: the earlier one (and how it was planned) stays.
    const planning = commit === null ? previous?.planningFingerprint : planningFingerprint(config, tenant.tenant);
    return {
      lastAppliedCommit: options.uncommitted ? null : (commit ?? previous?.lastAppliedCommit ?? null),
      ...(planning === undefined ? {} : { planningFingerprint: planning }),
      pending,
      updatedAt: new Date(clock.now()).toISOString(),
    };
  }

  /**
   * Records the contracts read live and found unchanged whose record differs from what was read
   * (or that have none), so that a plan from the state store on any machine shows what a live read
   * would (docs/architecture.md section 7). Identical records are not rewritten. Written before the
   * first PATCH: a state store that cannot take a record stops the tenant before anything is sent.
   */
  async function recordUnchanged(tenant: PreparedTenant, contracts: readonly PlanContract[]): Promise<void> {
    const appliedAt = new Date(clock.now()).toISOString();
    const writes: AppliedContract[] = [];
    for (const contract of contracts) {
      if (contract.action !== 'noop' || contract.knownFrom !== 'live') continue;
      const live = tenant.known.get(contract.id)?.fields;
      if (live === undefined) continue;
      const liveFingerprint = fingerprint(live);
      const stored = tenant.stored?.get(contract.id)?.fields;
      if (stored !== undefined && fingerprint(stored) === liveFingerprint) continue;
      writes.push({ contractId: contract.id, fields: live, fingerprint: liveFingerprint, appliedAt, commit: options.source.commit });
    }
    for (let start = 0; start < writes.length; start += RECORD_CONCURRENCY) {
      await Promise.all(writes.slice(start, start + RECORD_CONCURRENCY).map((applied) => store.writeContract(tenant.tenant, applied, { lock: tenant.lock })));
    }
    if (writes.length > 0) logger.debug({ tenant: tenant.tenant, records: writes.length }, 'unchanged contracts recorded as read');
  }

  async function execute(
    tenant: PreparedTenant,
    contracts: readonly PlanContract[],
    { items, send, settle }: TenantWork,
    outcomes = new Map<string, ContractOutcome>(),
  ): Promise<Map<string, ContractOutcome>> {
    if (dryRun || tenant.error !== undefined) return outcomes;
    await recordUnchanged(tenant, contracts);
    const desired = desiredById.get(tenant.tenant) ?? new Map<string, DesiredContract>();
    const previousPending = tenant.previousRun?.pending ?? [];
    const pendingSince = startedAt;
    if (send.length > 0) {
      const sending = new Set(send.map((contract) => contract.id));
      // Written before the first PATCH: if this run dies, the next one knows which contracts were in flight.
      await store.writeRun(
        tenant.tenant,
        {
          lastAppliedCommit: tenant.previousRun?.lastAppliedCommit ?? null,
          ...(tenant.previousRun?.planningFingerprint === undefined ? {} : { planningFingerprint: tenant.previousRun.planningFingerprint }),
          pending: [
            ...send.map((contract): PendingContract => ({
              contractId: contract.id,
              outcome: 'interrupted',
              reason: `run ${options.runId}`,
              since: pendingSince,
              file: contract.file,
            })),
            ...previousPending.filter((entry) => !sending.has(entry.contractId)),
          ],
          updatedAt: pendingSince,
        },
        { lock: tenant.lock, lastAppliedCommit: tenant.previousRun?.lastAppliedCommit ?? null },
      );
    }
    const context = {
      lane: tenant.lane,
      api,
      store,
      lock: tenant.lock,
      collections: config.collections,
      commit: options.source.commit,
      now: () => clock.now(),
      maxReconciles: config.retry.maxAttempts,
    };
    const interrupted = new Set<string>();
    await Promise.all([
      ...send.map(async (contract) => {
        const outcome = await applyContract(
          {
            contractId: contract.id,
            ops: contract.ops,
            known: tenant.known.get(contract.id)?.fields,
            knownIsLive: contract.knownFrom === 'live',
            desired: desired.get(contract.id)!.fields,
            uncertain: tenant.uncertain.get(contract.id),
          },
          context,
        ).catch((error: unknown): ContractOutcome | undefined =>
          error instanceof RunInterrupted ? undefined : { outcome: 'failed', status: statusOf(error), reason: messageOf(error) },
        );
        if (outcome === undefined) {
          interrupted.add(contract.id);
          return;
        }
        outcomes.set(contract.id, outcome);
        done += 1;
        sentCount += 1;
        if (outcome.outcome !== 'applied')
          logger.info({ tenant: tenant.tenant, contractId: contract.id, status: outcome.status, outcome: outcome.outcome }, 'contract not applied');
        deps.onProgress?.({ step: 'send', tenant: tenant.tenant, contractId: contract.id, outcome: outcome.outcome, done, total });
      }),
      // Read first (the contract is uncertain), re-planned from what is live: recorded when it
      // needs nothing, sent when the service turns out to be behind the desired state.
      ...settle.map(async (contract) => {
        const outcome = await applyContract(
          {
            contractId: contract.id,
            ops: [],
            known: undefined,
            knownIsLive: false,
            desired: desired.get(contract.id)!.fields,
            uncertain: tenant.uncertain.get(contract.id),
          },
          context,
        ).catch((error: unknown): ContractOutcome | undefined =>
          error instanceof RunInterrupted ? undefined : { outcome: 'failed', status: statusOf(error), reason: messageOf(error) },
        );
        // Not read because the run stopped: its earlier pending entry stays.
        if (outcome === undefined) return;
        outcomes.set(contract.id, outcome);
        if (outcome.outcome !== 'applied')
          logger.info({ tenant: tenant.tenant, contractId: contract.id, status: outcome.status, outcome: outcome.outcome }, 'uncertain contract not settled');
        else logger.info({ tenant: tenant.tenant, contractId: contract.id }, 'uncertain contract settled by a read');
      }),
    ]);
    const notSent = new Map<string, { file: string; reason: string }>();
    for (const failure of tenant.unreadable.values())
      notSent.set(failure.contractId, { file: failure.file, reason: failure.reason ?? 'could not read the contract' });
    for (const item of items) if (item.stale !== undefined) notSent.set(item.contract.id, { file: item.contract.file, reason: item.stale });
    // Planned again by the next run (a `failed` entry), which reads only these: the others are recorded.
    for (const contract of send) if (interrupted.has(contract.id)) notSent.set(contract.id, { file: contract.file, reason: INTERRUPTED });
    // Written even when nothing was sent: the commit advances, and contracts now settled leave `pending`.
    // A narrowed tenant read no file for the contracts left out: their earlier entries stay.
    const filesRead = options.narrowed?.has(tenant.tenant) ? new Set<string>() : options.filesRead?.get(tenant.tenant);
    const pending = pendingAfterRun({
      since: pendingSince,
      previous: previousPending,
      planned: contracts,
      sent: outcomes,
      notSent,
      ...(filesRead ? { filesRead } : {}),
    });
    await store.writeRun(tenant.tenant, finishedRecord(tenant, pending), {
      lock: tenant.lock,
      lastAppliedCommit: tenant.previousRun?.lastAppliedCommit ?? null,
    });
    return outcomes;
  }

  async function runTenant(tenant: PreparedTenant): Promise<TenantReport> {
    const contracts = plannedByTenant.get(tenant.tenant) ?? [];
    const tenantWork = work.get(tenant.tenant)!;
    // Filled as contracts finish: a run record that cannot be written afterwards leaves them reported as they ended.
    let outcomes = new Map<string, ContractOutcome>();
    let error = tenant.error ?? refusals.get(tenant.tenant) ?? (halted ? haltReason : undefined);
    let notSent =
      tenant.error === INTERRUPTED
        ? INTERRUPTED
        : tenant.error !== undefined
          ? `not sent: tenant ${tenant.tenant} could not start`
          : refusals.has(tenant.tenant)
            ? 'not sent: refused by the removal guard'
            : haltReason;
    try {
      // No PATCH is queued before the token has been checked; a tenant with nothing to send needs none.
      if (!dryRun && error === undefined && tenantWork.send.length + tenantWork.settle.length > 0) await tokens.get(tenant.tenant);
      outcomes = await execute(error === undefined ? tenant : { ...tenant, error }, contracts, tenantWork, outcomes);
    } catch (failure) {
      error = messageOf(failure);
      notSent = `not sent: ${error}`;
      logger.info({ tenant: tenant.tenant, code: (failure as { code?: unknown }).code }, 'tenant not applied');
    } finally {
      // Every request of the tenant has finished: no pause of its lane may outlive the run.
      tenant.lane.close();
      await tenant.lock?.release();
    }
    // Reads finish in any order: reported in the order the contracts are declared.
    const failures: ContractResult[] = [...tenant.unreadable.values()].sort((a, b) => compareText(a.file, b.file) || a.line - b.line);
    let applied = 0;
    let ops = 0;
    for (const { contract, stale } of tenantWork.items) {
      ops += contract.ops.length;
      const outcome = outcomes.get(contract.id);
      const base = { contractId: contract.id, file: contract.file, line: contract.line, ops: contract.ops.length };
      if (stale !== undefined) failures.push({ ...base, outcome: 'stale', status: null, reason: stale });
      else if (dryRun && error === undefined) applied += 1;
      else if (outcome === undefined)
        failures.push({ ...base, outcome: 'skipped', status: null, reason: error === undefined ? (stopped() ? INTERRUPTED : 'not sent') : notSent });
      else if (outcome.outcome === 'applied') applied += 1;
      else if (outcome.outcome === 'failed' && outcome.status === 404)
        failures.push({ ...base, outcome: 'not-on-service', status: 404, reason: notOnServiceReason(contract.id, 'patch') });
      else failures.push({ ...base, outcome: outcome.outcome, status: outcome.status, reason: outcome.reason });
    }
    // A settled contract is no change of this run's plan; one that did not settle is reported.
    for (const contract of tenantWork.settle) {
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
      contracts: contracts.length + tenant.unreadable.size,
      changed: tenantWork.items.length,
      applied,
      ops,
      requests,
      retries,
      throttles,
      failures,
      ...(error === undefined ? {} : { error }),
    };
  }

  const reports = await Promise.all(prepared.map(runTenant));
  if (answer instanceof Error) throw answer;
  const report: RunReport = {
    version: RUN_REPORT_VERSION,
    runId: options.runId,
    startedAt,
    finishedAt: new Date(clock.now()).toISOString(),
    dryRun,
    source: options.source,
    tenants: reports,
    ...runWarnings(tokens, deps.readTokens),
    summary: summarise(reports),
  };
  if (stopped() && !dryRun) return { plan, report, interrupted: interruptedCount(report, sentCount) };
  return { plan, report, ...(halted ? { cancelled: true as const } : {}) };
}

/**
 * An interrupted run's counts: contracts not sent are those reported with the interruption's
 * reason (a tenant whose lock was not waited for out counts every contract it declares, as a tenant
 * that could not start does).
 */
function interruptedCount(report: RunReport, sent: number): InterruptedCount {
  const notSent = report.tenants.reduce(
    (sum, tenant) => sum + tenant.failures.filter((failure) => failure.outcome === 'skipped' && failure.reason === INTERRUPTED).length,
    0,
  );
  return { sent, notSent };
}
