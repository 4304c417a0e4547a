/**
 * An apply run: for each tenant (all in parallel, none able to stop another) take the lock, check
 * the token, learn the known state (live reads or the state store), plan, send the ops through the
 * tenant's lane and record each contract as soon as it is applied.
 */
import PQueue from 'p-queue';
import type { ApiClient } from '../api/client.ts';
import type { TenantTokens } from '../auth/index.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/types.ts';
import type { ContractSet } from '../desired/types.ts';
import type { Logger } from '../log/logger.ts';
import type { ContractFields } from '../model/types.ts';
import { createPlan } from '../plan/create-plan.ts';
import type { PlanContract, PlanDocument, PlanSource } from '../plan/types.ts';
import type { KnownContract, KnownContracts, PendingContract, StateStore, TenantLock } from '../state/types.ts';
import { applyContract, type ContractOutcome } from './apply-contract.ts';
import { messageOf, statusOf } from './failure.ts';
import { retryBudget } from './retry-policy.ts';
import { RUN_REPORT_VERSION, summarise, type ContractResult, type RunReport, type TenantReport } from './run-report.ts';
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
}

export interface ApplyProgress {
  readonly tenant: string;
  readonly contractId: string;
  readonly outcome: ContractResult['outcome'];
  /** Contracts finished so far, and to do in all, over every tenant. */
  readonly done: number;
  readonly total: number;
}

export interface ApplyRunDeps {
  readonly store: StateStore;
  readonly tokens: TenantTokens;
  readonly api: ApiClient;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly onProgress?: (progress: ApplyProgress) => void;
}

export interface ApplyRunResult {
  readonly plan: PlanDocument;
  readonly report: RunReport;
}

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
  /** Contracts that could not be read: not planned, reported as failed. */
  readonly unreadable: Map<string, ContractResult>;
  readonly uncertain: ReadonlyMap<string, string>;
  /** From the tenant's run record, kept as it was until a run finishes. */
  readonly lastAppliedCommit: string | null;
  /** A problem of the whole tenant: nothing is sent for it. */
  readonly error?: string;
}

/** Contracts whose earlier patch may have landed unrecorded: the next run must not trust the state store for them. */
function uncertainContracts(pending: readonly PendingContract[] | undefined): Map<string, string> {
  const uncertain = new Map<string, string>();
  for (const entry of pending ?? []) {
    if (entry.outcome === 'failed') continue;
    uncertain.set(entry.contractId, `an earlier run (${entry.since}) ${entry.outcome === 'interrupted' ? 'stopped while applying this contract' : `lost the answer to its patch: ${entry.reason}`}`);
  }
  return uncertain;
}

export async function runApply(options: ApplyRunOptions, deps: ApplyRunDeps): Promise<ApplyRunResult> {
  const { config, dryRun } = options;
  const { store, tokens, api, clock, logger } = deps;
  const startedAt = new Date(clock.now()).toISOString();
  const refresh = options.refresh && api.canRead;
  const budget = retryBudget(config.retry.maxAttempts);
  const inFlight = new PQueue({ concurrency: config.rate.maxInFlight });
  const desiredById = new Map<string, Map<string, DesiredContract>>();
  for (const set of options.contractSets) {
    const byId = desiredById.get(set.tenant) ?? new Map<string, DesiredContract>();
    desiredById.set(set.tenant, byId);
    for (const contract of set.contracts) byId.set(contract.id, { fields: contract.fields, file: set.file, line: contract.line });
  }
  const tenantNames = [...desiredById.keys()].sort();

  async function prepare(tenant: string): Promise<PreparedTenant> {
    const lane = new TenantLane({ tenant, ...config.rate, budget, inFlight, tokens, clock, random: deps.random, logger });
    const unreadable = new Map<string, ContractResult>();
    let lock: TenantLock | undefined;
    try {
      if (!dryRun) lock = await store.lock(tenant, { timeoutMs: options.lockTimeoutMs, owner: options.runId });
      const previousRun = dryRun ? undefined : await store.readRun(tenant);
      const uncertain = uncertainContracts(previousRun?.pending);
      const lastAppliedCommit = previousRun?.lastAppliedCommit ?? null;
      if (!refresh) return { tenant, lane, lock, known: await store.readTenant(tenant), unreadable, uncertain, lastAppliedCommit };
      // The token is checked (tenant_id, scopes) before the first request is queued.
      await tokens.get(tenant);
      const known = new Map<string, KnownContract>();
      await Promise.all(
        [...desiredById.get(tenant)!].map(async ([contractId, { file, line }]) => {
          try {
            const { fields } = await lane.call({ kind: 'read', contractId, resendable: true }, (token) => api.read(contractId, token));
            known.set(contractId, { fields, from: 'live' });
          } catch (error) {
            logger.warn({ tenant, contractId, status: statusOf(error) }, 'read failed; contract not planned');
            unreadable.set(contractId, { contractId, file, line, outcome: 'failed', ops: 0, status: statusOf(error), reason: `could not read the contract: ${messageOf(error)}` });
          }
        }),
      );
      return { tenant, lane, lock, known, unreadable, uncertain, lastAppliedCommit };
    } catch (error) {
      logger.error({ tenant, code: (error as { code?: unknown }).code }, 'tenant not applied');
      await lock?.release();
      return { tenant, lane, known: new Map(), unreadable, uncertain: new Map(), lastAppliedCommit: null, error: messageOf(error) };
    }
  }

  const prepared = await Promise.all(tenantNames.map(prepare));
  const byTenant = new Map(prepared.map((tenant) => [tenant.tenant, tenant]));
  const plan = createPlan(
    options.contractSets.map((set) => {
      const { unreadable } = byTenant.get(set.tenant)!;
      return unreadable.size === 0 ? set : { ...set, contracts: set.contracts.filter((contract) => !unreadable.has(contract.id)) };
    }),
    new Map(prepared.map((tenant) => [tenant.tenant, tenant.known])),
    { createdAt: startedAt, source: options.source, collections: config.collections },
  );

  const total = dryRun ? 0 : plan.tenants.reduce((sum, tenant) => sum + tenant.contracts.filter((contract) => contract.action === 'update').length, 0);
  let done = 0;

  async function execute(tenant: PreparedTenant, contracts: readonly PlanContract[]): Promise<Map<string, ContractOutcome>> {
    const outcomes = new Map<string, ContractOutcome>();
    const changed = contracts.filter((contract) => contract.action === 'update');
    if (dryRun || changed.length === 0 || tenant.error !== undefined) return outcomes;
    const pendingSince = startedAt;
    // Written before the first PATCH: if this run dies, the next one knows which contracts were in flight.
    await store.writeRun(tenant.tenant, {
      lastAppliedCommit: tenant.lastAppliedCommit,
      pending: changed.map((contract) => ({ contractId: contract.id, outcome: 'interrupted', reason: `run ${options.runId}`, since: pendingSince })),
      updatedAt: pendingSince,
    });
    const desired = desiredById.get(tenant.tenant)!;
    const context = {
      lane: tenant.lane,
      api,
      store,
      collections: config.collections,
      commit: options.source.commit,
      now: () => clock.now(),
      maxReconciles: config.retry.maxAttempts,
    };
    await Promise.all(
      changed.map(async (contract) => {
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
        ).catch((error: unknown): ContractOutcome => ({ outcome: 'failed', status: statusOf(error), reason: messageOf(error) }));
        outcomes.set(contract.id, outcome);
        done += 1;
        if (outcome.outcome !== 'applied') logger.warn({ tenant: tenant.tenant, contractId: contract.id, status: outcome.status, outcome: outcome.outcome }, 'contract not applied');
        deps.onProgress?.({ tenant: tenant.tenant, contractId: contract.id, outcome: outcome.outcome, done, total });
      }),
    );
    const pending: PendingContract[] = [];
    for (const contract of changed) {
      const outcome = outcomes.get(contract.id)!;
      if (outcome.outcome !== 'applied') pending.push({ contractId: contract.id, outcome: outcome.outcome, reason: outcome.reason, since: pendingSince });
    }
    await store.writeRun(tenant.tenant, { lastAppliedCommit: options.source.commit ?? tenant.lastAppliedCommit, pending, updatedAt: new Date(clock.now()).toISOString() });
    return outcomes;
  }

  async function runTenant(tenant: PreparedTenant, contracts: readonly PlanContract[]): Promise<TenantReport> {
    let outcomes = new Map<string, ContractOutcome>();
    let error = tenant.error;
    try {
      // No PATCH is queued before the token has been checked; a tenant with no changes needs none.
      if (!dryRun && error === undefined && contracts.some((contract) => contract.action === 'update')) await tokens.get(tenant.tenant);
      outcomes = await execute(tenant, contracts);
    } catch (failure) {
      error = messageOf(failure);
      logger.error({ tenant: tenant.tenant, code: (failure as { code?: unknown }).code }, 'tenant not applied');
    } finally {
      await tenant.lock?.release();
    }
    const failures: ContractResult[] = [...tenant.unreadable.values()];
    let applied = 0;
    let ops = 0;
    for (const contract of contracts) {
      if (contract.action !== 'update') continue;
      ops += contract.ops.length;
      const outcome = outcomes.get(contract.id);
      const base = { contractId: contract.id, file: contract.file, line: contract.line, ops: contract.ops.length };
      if (dryRun && error === undefined) applied += 1;
      else if (outcome === undefined) failures.push({ ...base, outcome: 'skipped', status: null, reason: error === undefined ? 'not sent' : `not sent: tenant ${tenant.tenant} could not start` });
      else if (outcome.outcome === 'applied') applied += 1;
      else failures.push({ ...base, outcome: outcome.outcome, status: outcome.status, reason: outcome.reason });
    }
    const { requests, retries, throttles } = tenant.lane.counters;
    return {
      tenant: tenant.tenant,
      contracts: contracts.length + tenant.unreadable.size,
      changed: contracts.filter((contract) => contract.action === 'update').length,
      applied,
      ops,
      requests,
      retries,
      throttles,
      failures,
      ...(error === undefined ? {} : { error }),
    };
  }

  const reports = await Promise.all(plan.tenants.map((planTenant) => runTenant(byTenant.get(planTenant.tenant)!, planTenant.contracts)));
  const report: RunReport = {
    version: RUN_REPORT_VERSION,
    runId: options.runId,
    startedAt,
    finishedAt: new Date(clock.now()).toISOString(),
    dryRun,
    source: options.source,
    tenants: reports,
    summary: summarise(reports),
  };
  return { plan, report };
}
