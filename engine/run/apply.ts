/**
 * The apply run: the desired state (git objects at a ref, the working tree, or a saved plan's
 * commit) read and validated, then the tenant pipeline's `apply` composition (lock, learn, plan,
 * check, confirm, send, record: engine/pipeline/compose.ts) through engine/run/pipeline-run.ts;
 * `--dry-run` composes `preview` instead (nothing locked, sent or written). With `--shard auto`
 * each tenant a worker takes is such a run (the machinery: shared-workers.ts and shared-run.ts).
 */
import { filesReadByTenant, type TenantScope } from '../apply/incremental.ts';
import { planReadLive } from '../apply/reviewed-plan.ts';
import type { RunReport } from '../apply/run-report.ts';
import type { InterruptedCount } from '../apply/interrupted.ts';
import type { Scope } from '../auth/index.ts';
import { restrictToContracts } from '../desired/target.ts';
import type { PlanDocument } from '../plan/types.ts';
import { overrideProblem, runChecksOf } from './checks.ts';
import { commitCheck } from './commit-check.ts';
import { desiredProblems, readScopes, readWholeInput, withRunInput, type OpenedInput, type RunInput } from './input.ts';
import type { LazyStore } from './lazy-store.ts';
import { removalLimits, runPipeline, type SharedTenantRun } from './pipeline-run.ts';
import { readSavedPlan } from './saved-plan.ts';
import { exportRunTelemetry, withRequestRecorder } from './telemetry-run.ts';
import { endingOf, SHARED_NEEDS_POSTGRES, tenantResultOf, workerReport, workShared } from './shared-run.ts';
import { joinSharedApply, openSharedRun, sharedTenantRun } from './shared-workers.ts';
import type { RunEffects, RunInvalid, RunRefused, RunUnread, RunWhere, SendingRequest, ShardSelection } from './types.ts';

export interface ApplyRequest extends SendingRequest {
  readonly kind: 'apply';
  /** A saved plan (`apply PLAN.json`, relative to the working directory): exactly its reviewed ops are sent. */
  readonly savedPlan?: string;
  /** Where the known state comes from; left out: live reads when api.read is configured, else the state store. */
  readonly known?: 'store' | 'live';
  /** `incremental` (since each tenant's last applied commit) or `every-contract` (`--full`). */
  readonly scope: 'incremental' | 'every-contract';
  /** `dry-run`: plan (and read) but send nothing, take no lock and write nothing. */
  readonly mode: 'send' | 'dry-run';
}

export type ApplyRunOutcome =
  | RunUnread
  | RunInvalid
  | RunRefused
  /** The shard holds no tenant: nothing to lock, read or send. */
  | { readonly kind: 'empty-shard'; readonly shard: ShardSelection }
  | {
      readonly kind: 'applied';
      readonly report: RunReport;
      /** The confirmation was declined: nothing was sent or written. */
      readonly cancelled: boolean;
      readonly shard?: ShardSelection;
      /** Some tenant was planned incrementally: contracts unchanged in git were not planned. */
      readonly incremental: boolean;
      /** Tenants last applied at a newer commit: not applied (the run fails). */
      readonly behind: readonly TenantScope[];
      /** Said after the run: e.g. the run history could not be written. */
      readonly warnings: readonly string[];
      /** The run was stopped (`effects.signal`): what it sent and did not. */
      readonly interrupted?: InterruptedCount;
    };

/**
 * The scopes an apply asks for: the least each run needs (docs/architecture.md section 7). A dry run
 * sends no PATCH: core:read, for its reads. A run that refreshes reads and writes. A run without
 * refresh writes; when reads are configured it may still read, to settle a contract an earlier run
 * left uncertain or a 409, and asks for a core:read token only then (`reads`).
 */
export function applyScopes(run: { readonly mode: ApplyRequest['mode']; readonly refresh: boolean; readonly canRead: boolean }): {
  tokens: Scope[];
  reads?: Scope[];
} {
  if (run.mode === 'dry-run') return { tokens: ['core:read'] };
  if (run.refresh) return { tokens: ['core:read', 'core:write'] };
  return run.canRead ? { tokens: ['core:write'], reads: ['core:read'] } : { tokens: ['core:write'] };
}

/** Whether an apply reads the known state live (--refresh, or api.read configured), unless a saved plan says otherwise. */
function readsLive(request: Pick<ApplyRequest, 'known'>, canRead: boolean): boolean {
  return request.known === undefined ? canRead : request.known === 'live';
}

export async function runApplyRequest(request: ApplyRequest, given: RunEffects): Promise<ApplyRunOutcome> {
  // With OTEL_* set, the run's reads and PATCHes are recorded for its trace.
  const effects = withRequestRecorder(given);
  effects.onEvent?.({ type: 'phase', phase: 'read-input' });
  let saved: PlanDocument | undefined;
  if (request.savedPlan !== undefined) {
    const read = await readSavedPlan(effects, request.savedPlan, request.where.repo);
    if ('refused' in read) return { kind: 'refused', message: `${request.savedPlan}: ${read.refused}; nothing applied` };
    saved = read;
  }
  const where: RunWhere = saved ? { ...request.where, ...(saved.source.commit === null ? {} : { ref: saved.source.commit }) } : request.where;
  const outcome = await withRunInput(
    effects,
    'apply',
    { where, ...(saved ? {} : { selection: request.selection ?? {} }) },
    async (opened, store): Promise<ApplyRunOutcome> => {
      const shared = request.selection?.shard === 'auto';
      if (shared && (opened.config.state.backend !== 'postgres' || request.mode === 'dry-run')) {
        return {
          kind: 'bad-request',
          message:
            request.mode === 'dry-run'
              ? '--shard auto shares a run that sends between workers; a dry run sends nothing: use --shard I/N'
              : SHARED_NEEDS_POSTGRES,
        };
      }
      // A saved plan names its contracts: never incremental.
      const scopes = request.scope === 'incremental' && !saved ? await readScopes(opened, await store.get(), 'ancestor') : undefined;
      if (shared) return applyShared(opened, scopes, request, effects, store);
      const input = await readWholeInput(opened, { ...(scopes ? { scopes } : {}), describeIncremental: false, records: !saved });
      const invalid = desiredProblems(input);
      if (invalid) return invalid;
      effects.onEvent?.({ type: 'input', ...(input.shard ? { shard: input.shard } : {}) });
      // A shard without tenants has nothing to lock, read or send.
      if (input.shard && input.shard.tenants.length === 0) return { kind: 'empty-shard', shard: input.shard };
      return applyInput(opened, input, saved, request, effects, store);
    },
  );
  if (outcome.kind === 'applied') await exportRunTelemetry(outcome, effects);
  return outcome;
}

async function applyInput(
  opened: OpenedInput,
  input: RunInput,
  saved: PlanDocument | undefined,
  request: ApplyRequest,
  effects: RunEffects,
  store: LazyStore,
  shared?: SharedTenantRun,
): Promise<ApplyRunOutcome> {
  const { config } = input;
  let { contractSets, source } = input;
  let narrowed = input.targeting?.narrowed;
  const canRead = config.api.read !== undefined;
  let refresh = readsLive(request, canRead);
  if (saved) {
    const unknown = saved.tenants.map((tenant) => tenant.tenant).filter((tenant) => !Object.hasOwn(config.tenants, tenant));
    if (unknown.length > 0) {
      return {
        kind: 'refused',
        message: `${request.savedPlan}: the plan names ${unknown.length === 1 ? 'tenant' : 'tenants'} ${unknown.join(', ')}, which the config does not know; nothing applied`,
      };
    }
    // A plan made with --target lists only its targets: the others are not planned, and the run record keeps its commit.
    const restricted = restrictToContracts(
      contractSets,
      new Map(saved.tenants.map((tenant) => [tenant.tenant, new Set(tenant.contracts.map((contract) => contract.id))])),
    );
    contractSets = restricted.contractSets;
    narrowed = restricted.narrowed;
    source = { repo: request.where.repo, ref: saved.source.ref, commit: saved.source.commit };
    refresh = planReadLive(saved);
    if (refresh && !canRead) {
      return {
        kind: 'refused',
        message: `${request.savedPlan} was made with --refresh (known state read live), and applying it reads live again; configure api.read (e.g. read: { path: "/contract/{id}" }); nothing applied`,
      };
    }
  } else if (request.known === 'live' && !canRead) {
    return { kind: 'refused', message: '--refresh needs reads; configure api.read (e.g. read: { path: "/contract/{id}" })' };
  }

  const overridden = overrideProblem(input.policies, request.overrides);
  if (overridden !== undefined) return { kind: 'refused', message: overridden };
  const tenantScopes = input.scopes;
  const scopeList = [...(tenantScopes?.values() ?? [])];
  const sent = await runPipeline(
    {
      command: 'apply',
      composition: request.mode === 'dry-run' ? 'dry-run' : 'apply',
      ...(shared ? { shared } : {}),
      tokenScopes: applyScopes({ mode: request.mode, refresh, canRead }),
      previewScopes: scopeList.map((scope) => ({
        scope,
        contracts: contractSets.filter((set) => set.tenant === scope.tenant).reduce((sum, set) => sum + set.contracts.length, 0),
      })),
      ...(saved ? { saved } : {}),
      ...(input.targeting ? { targeting: input.targeting } : {}),
      options: {
        config,
        contractSets,
        source,
        refresh,
        lockTimeoutMs: request.lockTimeoutMs,
        ...(saved ? { reviewed: saved } : {}),
        uncommitted: input.committed === false,
        ...(tenantScopes ? { filesRead: filesReadByTenant(tenantScopes) } : {}),
        ...(narrowed ? { narrowed } : {}),
        removals: removalLimits(request.removals, config.safety),
        checks: runChecksOf(input.policies, effects, request.overrides),
        ...(tenantScopes && opened.repository && source.commit
          ? { checkUnderLock: commitCheck(opened.repository, source.commit, tenantScopes, config.desired.paths) }
          : {}),
      },
    },
    effects,
    store,
  );
  if ('kind' in sent) return sent;
  // Told after the run, from what it returned: a channel that fails is a warning in the report, never the run's result.
  const tells = (config.notify ?? []).length > 0 && request.mode === 'send' && !sent.cancelled && sent.interrupted === undefined;
  // Loaded only when channels are configured: the senders are not every apply's.
  const told = tells ? await (await import('./notify-run.ts')).notifyAfterApply(config, sent.plan, sent.report, effects) : [];
  return {
    kind: 'applied',
    ...sent,
    ...(told.length === 0 ? {} : { report: { ...sent.report, warnings: [...(sent.report.warnings ?? []), ...told] } }),
    ...(input.shard ? { shard: input.shard } : {}),
    incremental: scopeList.some((scope) => scope.kind === 'incremental'),
    behind: scopeList.filter((scope) => scope.kind === 'behind'),
  };
}

/**
 * A worker of a shared apply (`--shard auto`): the run's tenants, sized by the contracts each
 * plans, taken largest first from the PostgreSQL store, each applied as a run of its own tenant
 * under the shared run's id; what this worker applied is its report.
 */
async function applyShared(
  opened: OpenedInput,
  scopes: ReadonlyMap<string, TenantScope> | undefined,
  request: ApplyRequest,
  effects: RunEffects,
  store: LazyStore,
): Promise<ApplyRunOutcome> {
  const options = { scope: request.scope, known: request.known ?? 'default', removals: request.removals };
  const opening = await openSharedRun('apply', options, opened, effects, store);
  if ('kind' in opening) return opening;
  const reading = await joinSharedApply(opening, opened, scopes);
  if ('kind' in reading) return reading;
  effects.onEvent?.({ type: 'input' });
  const { startedAt } = opening;
  const canRead = opened.config.api.read !== undefined;
  const shared = await sharedTenantRun(
    opening,
    opened.config,
    reading.joined.runId,
    applyScopes({ mode: 'send', refresh: readsLive(request, canRead), canRead }).tokens,
  );
  const worked = await workShared<ApplyRunOutcome>({
    ...opening.work,
    joined: reading.joined,
    validated: reading.validated,
    async runTenant(tenant, files, ending) {
      // Asked for as the tenant is taken, the token arrives while its files are read, its lock taken
      // and its plan made; the run checks it before the first PATCH as always (a refusal is asked again there).
      shared.engine.tokens.get(tenant).catch(() => undefined);
      const input = await reading.inputOf(tenant, files);
      if ('kind' in input) return input;
      return applyInput(opened, input, undefined, request, endingOf(opening.effects, opened.config, ending), store, shared);
    },
    resultOf(outcome, tenant) {
      if (outcome.kind === 'applied') return tenantResultOf(outcome.report, tenant);
      return { changed: 0, applied: 0, failed: 0, error: outcome.kind === 'refused' ? outcome.message : `not applied (${outcome.kind})` };
    },
  });
  const refused = worked.outcomes.find((outcome) => outcome.kind !== 'applied');
  if (refused !== undefined) return refused;
  const applied = worked.outcomes.flatMap((outcome) => (outcome.kind === 'applied' ? [outcome] : []));
  const source = { repo: request.where.repo, ref: request.where.ref ?? null, commit: opening.start.commit };
  const report = workerReport(
    applied.map((outcome) => outcome.report),
    { runId: reading.joined.runId, startedAt, finishedAt: new Date(effects.clock.now()).toISOString(), source: applied[0]?.report.source ?? source },
  );
  return {
    kind: 'applied',
    report,
    cancelled: false,
    incremental: applied.some((outcome) => outcome.incremental),
    behind: applied.flatMap((outcome) => outcome.behind),
    warnings: applied.flatMap((outcome) => outcome.warnings),
  };
}
