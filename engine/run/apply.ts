/**
 * The apply run: the desired state (git objects at a ref, the working tree, or a saved plan's
 * commit), planned per tenant under its lock against the known state, confirmed, sent through the
 * rate-controlled lanes, recorded contract by contract, and written to the run history. The
 * per-tenant work (lock, learn, plan, guard, send, record) is engine/apply/run-apply.ts; this file
 * reads the run's input, checks what must hold for the whole run, and wires the effects.
 */
import { createHash, randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import { filesReadByTenant, type TenantScope } from '../apply/incremental.ts';
import { planReadLive } from '../apply/reviewed-plan.ts';
import type { RunReport } from '../apply/run-report.ts';
import type { InterruptedCount } from '../apply/interrupted.ts';
import type { ApplyRunOptions, SendPreview } from '../apply/run-apply.ts';
import type { Scope } from '../auth/index.ts';
import type { Config } from '../config/types.ts';
import { restrictToContracts } from '../desired/target.ts';
import { changedFiles } from '../git/changed-files.ts';
import { checkAncestor } from '../git/is-ancestor.ts';
import type { GitRepository } from '../git/repository.ts';
import { desiredPathMatcher } from '../desired/read-files.ts';
import type { RemovalLimits } from '../plan/removal-guard.ts';
import type { PlanDocument } from '../plan/types.ts';
import { startedByFromEnv, type HistoryCommand } from '../state/history.ts';
import type { SharedRunJoined, SharedRuns, SharedRunStart, SharedRunTenant } from '../state/shared-run.ts';
import type { StateStore, TenantRunRecord } from '../state/types.ts';
import {
  desiredProblems,
  readScopes,
  readsCommit,
  readsEveryFile,
  readTenantInput,
  readWholeInput,
  selectedTenants,
  withRunInput,
  type OpenedInput,
  type RunInput,
} from './input.ts';
import type { EngineSetup } from './engine-setup.ts';
import { recordRunHistory } from './record-history.ts';
import type { LazyStore } from './lazy-store.ts';
import { readSavedPlan } from './saved-plan.ts';
import {
  endingOf,
  SHARED_NEEDS_POSTGRES,
  sharedLanes,
  sharedRunKey,
  tenantResultOf,
  workerName,
  workerReport,
  workShared,
  type SharedWork,
} from './shared-run.ts';
import { packageVersion } from './version.ts';
import type { ApplyPreview, RunEffects, RunInvalid, RunRefused, RunTargeting, RunUnread, RunWhere, SendingRequest, ShardSelection } from './types.ts';

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
export function applyScopes(run: { readonly dryRun: boolean; readonly refresh: boolean; readonly canRead: boolean }): { tokens: Scope[]; reads?: Scope[] } {
  if (run.dryRun) return { tokens: ['core:read'] };
  if (run.refresh) return { tokens: ['core:read', 'core:write'] };
  return run.canRead ? { tokens: ['core:write'], reads: ['core:read'] } : { tokens: ['core:write'] };
}

/** Whether an apply reads the known state live (--refresh, or api.read configured), unless a saved plan says otherwise. */
function readsLive(request: Pick<ApplyRequest, 'known'>, canRead: boolean): boolean {
  return request.known === undefined ? canRead : request.known === 'live';
}

export async function runApplyRequest(request: ApplyRequest, effects: RunEffects): Promise<ApplyRunOutcome> {
  effects.onEvent?.({ type: 'phase', phase: 'read-input' });
  let saved: PlanDocument | undefined;
  if (request.savedPlan !== undefined) {
    const read = await readSavedPlan(effects, request.savedPlan, request.where.repo);
    if ('refused' in read) return { kind: 'refused', message: `${request.savedPlan}: ${read.refused}; nothing applied` };
    saved = read;
  }
  const where: RunWhere = saved ? { ...request.where, ...(saved.source.commit === null ? {} : { ref: saved.source.commit }) } : request.where;
  return withRunInput(effects, 'apply', { where, ...(saved ? {} : { selection: request.selection ?? {} }) }, async (opened, store) => {
    const shared = request.selection?.shard === 'auto';
    if (shared && (opened.config.state.backend !== 'postgres' || request.mode === 'dry-run')) {
      return {
        kind: 'bad-request',
        message:
          request.mode === 'dry-run' ? '--shard auto shares a run that sends between workers; a dry run sends nothing: use --shard I/N' : SHARED_NEEDS_POSTGRES,
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
  });
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
  const dryRun = request.mode === 'dry-run';
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

  const tenantScopes = input.scopes;
  const scopeList = [...(tenantScopes?.values() ?? [])];
  const sent = await sendRun(
    {
      command: 'apply',
      ...(shared ? { shared } : {}),
      tokenScopes: applyScopes({ dryRun, refresh, canRead }),
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
        dryRun,
        lockTimeoutMs: request.lockTimeoutMs,
        ...(saved ? { reviewed: saved } : {}),
        uncommitted: input.committed === false,
        ...(tenantScopes ? { filesRead: filesReadByTenant(tenantScopes) } : {}),
        ...(narrowed ? { narrowed } : {}),
        removals: removalLimits(request.removals, config.safety),
        ...(tenantScopes && opened.repository && source.commit
          ? { checkUnderLock: commitCheck(opened.repository, source.commit, tenantScopes, config.desired.paths) }
          : {}),
      },
    },
    effects,
    store,
  );
  if ('kind' in sent) return sent;
  return {
    kind: 'applied',
    ...sent,
    ...(input.shard ? { shard: input.shard } : {}),
    incremental: scopeList.some((scope) => scope.kind === 'incremental'),
    behind: scopeList.filter((scope) => scope.kind === 'behind'),
  };
}

/** What a run that may send (apply, drift) asks of the lanes: runApply's options but the run id, which the engine setup makes. */
export interface SendRunRequest {
  readonly command: HistoryCommand;
  readonly tokenScopes: { readonly tokens: readonly Scope[]; readonly reads?: readonly Scope[] };
  readonly options: Omit<ApplyRunOptions, 'runId'>;
  readonly previewScopes?: ApplyPreview['scopes'];
  readonly saved?: PlanDocument;
  readonly targeting?: RunTargeting;
  /** Called with the open store before anything is sent (drift reads the last applied records). */
  readonly before?: (store: StateStore) => Promise<RunRefused | undefined>;
  /** A tenant of a shared run (`--shard auto`): the run's id and the worker's in-flight queue; its history is written by the shared run. */
  readonly shared?: SharedTenantRun;
}

export interface SharedTenantRun {
  readonly runId: string;
  /** Shared by the tenants a worker runs at once: rate.maxInFlight holds for the worker. */
  readonly inFlight: PQueue;
  /** The worker's engine, for all its tenants: one discovery, a token cache per tenant, one API client's connections. */
  readonly engine: EngineSetup;
}

/** What every tenant a worker of a shared run takes runs with; `scopes`: the tokens its runs send with. */
export async function sharedTenantRun(opening: SharedOpening, config: Config, runId: string, scopes: readonly Scope[]): Promise<SharedTenantRun> {
  const { createEngineSetup } = await import('./engine-setup.ts');
  return { runId, inFlight: opening.inFlight, engine: createEngineSetup(opening.effects, config, scopes, runId) };
}

/**
 * Sets up the engine (tokens, API client, log), takes the state store and runs the tenants'
 * lanes; the run history is written after a run that sent (not a dry run, not a cancelled one).
 */
export async function sendRun(
  request: SendRunRequest,
  effects: RunEffects,
  store: LazyStore,
): Promise<
  | RunRefused
  | {
      readonly plan: PlanDocument;
      readonly report: RunReport;
      readonly cancelled: boolean;
      readonly warnings: readonly string[];
      readonly interrupted?: InterruptedCount;
    }
> {
  const { options } = request;
  // Loaded here: the HTTP client and the OpenID client, only for runs that talk to the service.
  const [{ runApply }, { createEngineSetup }] = await Promise.all([import('../apply/run-apply.ts'), import('./engine-setup.ts')]);
  // Builds objects only: nothing is sent before the store is open.
  const engine = request.shared?.engine ?? createEngineSetup(effects, options.config, request.tokenScopes.tokens);
  const opening = await store.get(engine.redactor);
  if (typeof opening === 'string') return { kind: 'refused', message: opening };
  const stateStore = opening;
  const refused = await request.before?.(stateStore);
  if (refused) return refused;
  const readTokens = request.tokenScopes.reads === undefined ? undefined : engine.tokensFor(request.tokenScopes.reads);

  /** Before the first PATCH: the preview for the caller to show, then its answer when something would be sent. */
  async function confirm(preview: SendPreview): Promise<boolean> {
    const { saved, targeting } = request;
    const full: ApplyPreview = {
      ...preview,
      shown: saved ?? preview.plan,
      saved: saved !== undefined,
      ...(targeting ? { targeting } : {}),
      scopes: request.previewScopes ?? [],
    };
    effects.onEvent?.({ type: 'preview', preview: full });
    // A saved plan was reviewed when it was made: applied without asking, as Terraform does.
    const ask = !(options.dryRun || saved || preview.sending.ops === 0 || effects.confirm === undefined);
    if (ask) effects.onEvent?.({ type: 'phase', phase: 'confirm' });
    const yes = ask ? await answerUnlessStopped(effects.confirm!(full), effects.signal) : true;
    if (yes && !options.dryRun && preview.sending.contracts > 0) effects.onEvent?.({ type: 'phase', phase: 'send' });
    return yes;
  }

  if (options.refresh) effects.onEvent?.({ type: 'phase', phase: 'read-known' });

  const { plan, report, cancelled, interrupted } = await runApply(
    { ...options, runId: engine.runId },
    {
      store: stateStore,
      tokens: engine.tokens,
      ...(readTokens ? { readTokens } : {}),
      api: engine.api,
      clock: effects.clock,
      random: effects.random ?? Math.random,
      logger: engine.logger,
      onProgress: (progress) => effects.onEvent?.({ type: 'progress', ...progress }),
      confirm,
      ...(effects.signal ? { signal: effects.signal } : {}),
      ...(request.shared ? { inFlight: request.shared.inFlight } : {}),
    },
  );
  const warnings: string[] = [];
  if (!options.dryRun && !cancelled && request.shared === undefined)
    await recordRunHistory(stateStore, report, { command: request.command, env: effects.env, logger: engine.logger, warn: (line) => warnings.push(line) });
  return { plan, report, cancelled: cancelled === true, warnings, ...(interrupted ? { interrupted } : {}) };
}

/** The confirmation's answer, or no as soon as the run is stopped (Ctrl-C at the question). */
function answerUnlessStopped(answer: Promise<boolean>, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal === undefined) return answer;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    function onAbort(): void {
      resolve(false);
    }
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The removal guard's limits of a run: `--max-removals` over the config's, and `--allow-removals`. */
export function removalLimits(removals: ApplyRequest['removals'], safety: { readonly maxRemovals: number }): RemovalLimits {
  return { maxRemovals: removals.max ?? safety.maxRemovals, allow: removals.allow };
}

/**
 * What must hold for a tenant under its lock, with its run record read there: the record this run
 * planned from is still the tenant's. Another run may have applied while this one waited for the
 * lock. A newer commit (this one is in its history) is never sent over: the tenant is refused.
 * An older or equal commit leaves this run's plan right only when every file changed since that
 * commit is in this run's scope; otherwise the tenant is refused, to be planned again.
 */
function commitCheck(
  repository: GitRepository,
  head: string,
  scopes: ReadonlyMap<string, TenantScope>,
  desiredPaths: readonly string[],
): (tenant: string, record: TenantRunRecord | undefined) => Promise<string | undefined> {
  const selected = desiredPathMatcher(desiredPaths);
  return async (tenant, record) => {
    const scope = scopes.get(tenant);
    const recorded = record?.lastAppliedCommit ?? null;
    if (scope === undefined || recorded === null || recorded === head) return undefined;
    if (scope.kind === 'incremental' && recorded === scope.since) return undefined;
    const waited = `while this run waited for the lock, another run recorded ${recorded.slice(0, 12)} as tenant ${tenant}'s last applied commit`;
    if ((await checkAncestor(repository, head, recorded)) === 'ancestor') {
      return `not applied: ${waited}, which is newer than this commit ${head.slice(0, 12)}; nothing sent (to go back, commit a revert, or pass --full to apply this commit anyway)`;
    }
    // A full plan reads every contract's record under the lock: whatever was applied, it plans from it.
    if (scope.kind === 'full') return undefined;
    if (scope.kind === 'incremental' && (await checkAncestor(repository, recorded, head)) === 'ancestor') {
      const changed = (await changedFiles(repository, recorded, head)).map((file) => file.path).filter(selected);
      if (changed.every((file) => scope.files.has(file))) return undefined;
    }
    return `not applied: ${waited}, which this run did not plan from; nothing sent; run apply again`;
  };
}

/** The run's input narrowed to one tenant: what a shared run's worker runs for each tenant it takes. */
export function inputOfTenant(input: RunInput, tenant: string): RunInput {
  const scope = input.scopes?.get(tenant);
  return {
    ...input,
    contractSets: input.contractSets.filter((set) => set.tenant === tenant),
    ...(input.scopes === undefined ? {} : { scopes: new Map(scope === undefined ? [] : [[tenant, scope]]) }),
  };
}

/** What must hold before a worker joins a shared run: a commit every worker reads alike. */
export async function sharedRunCommit(opened: OpenedInput): Promise<string | RunRefused> {
  const commit = opened.at?.commit ?? opened.head;
  if (commit === null)
    return {
      kind: 'refused',
      message: '--shard auto shares the run of one git commit between workers: the desired state must be read from a git repository; nothing applied',
    };
  if (!(await readsCommit(opened))) {
    return {
      kind: 'refused',
      message:
        '--shard auto shares the run of one git commit between workers: the working tree has uncommitted desired-state edits, which the other workers do not see (commit them, or pass --ref); nothing applied',
    };
  }
  return commit;
}

/** A worker's part of a shared run before it reads the desired state: what the workers agree on, and what its tenants' runs share. */
export interface SharedOpening {
  readonly runs: SharedRuns;
  /** The run as this worker starts it; its tenants are filled in from the whole desired state. */
  readonly start: SharedRunStart;
  readonly work: Pick<SharedWork<never>, 'runs' | 'key' | 'worker' | 'clock' | 'lanes' | 'onEvent'>;
  readonly startedAt: string;
  /** Shared by the tenants the worker runs at once: rate.maxInFlight holds for the worker. */
  readonly inFlight: PQueue;
  /** The run's effects without `confirm`: a shared run never asks (the command refuses a terminal without --auto-approve). */
  readonly effects: RunEffects;
}

/**
 * What every worker of a shared run (`--shard auto`) agrees on without talking: the run's key
 * (its command, commit, selection and `options`, and what the desired state is validated with) and
 * the PostgreSQL store's shared runs; or why the run cannot be shared.
 */
export async function openSharedRun(
  command: HistoryCommand,
  options: Record<string, unknown>,
  opened: OpenedInput,
  effects: RunEffects,
  store: LazyStore,
): Promise<SharedOpening | RunRefused | Extract<RunUnread, { readonly kind: 'bad-request' }>> {
  const commit = await sharedRunCommit(opened);
  if (typeof commit !== 'string') return commit;
  const opening = await store.get();
  if (typeof opening === 'string') return { kind: 'refused', message: opening };
  const runs = opening.sharedRuns;
  if (runs === undefined) return { kind: 'bad-request', message: SHARED_NEEDS_POSTGRES };
  const { confirm: _asked, ...unasked } = effects;
  const lanes = sharedLanes(opened.config);
  // What the worker's first tenants need, opened while it reads the desired state (or waits for the worker that does).
  void runs.prepare(lanes);
  void Promise.all([import('../apply/run-apply.ts'), import('./engine-setup.ts')]).catch(() => undefined);
  const startedAt = new Date(effects.clock.now()).toISOString();
  const key = sharedRunKey({
    command,
    commit,
    tenants: selectedTenants(opened),
    selection: opened.selection,
    options: { ...options, config: opened.configFile },
    env: effects.env,
    validatedWith: createHash('sha256')
      .update(JSON.stringify([packageVersion(), opened.config]), 'utf8')
      .digest('hex'),
  });
  return {
    runs,
    start: { key, command, commit, runId: randomUUID(), startedAt, startedBy: startedByFromEnv(effects.env), tenants: [] },
    work: {
      runs,
      key,
      worker: workerName(effects.env),
      clock: effects.clock,
      lanes,
      ...(effects.onEvent ? { onEvent: effects.onEvent } : {}),
    },
    startedAt,
    inFlight: new PQueue({ concurrency: opened.config.rate.maxInFlight }),
    effects: unasked,
  };
}

/**
 * The run's tenants as the worker that read the whole desired state joins with them: each sized by
 * the contracts it plans (the largest is taken first), and with the files that declare it when
 * every file was read (an incremental run reads only the files changed: the others then read the
 * whole desired state themselves).
 */
export function sharedTenantsOf(opened: OpenedInput, input: RunInput): SharedRunTenant[] {
  const sizes = new Map<string, number>();
  for (const set of input.contractSets) sizes.set(set.tenant, (sizes.get(set.tenant) ?? 0) + set.contracts.length);
  const everyFile = readsEveryFile(input.scopes);
  const files = new Map<string, string[]>();
  for (const set of everyFile ? input.desired.contractSets : []) files.set(set.tenant, [...(files.get(set.tenant) ?? []), set.file]);
  return selectedTenants(opened).map((tenant) => ({ tenant, size: sizes.get(tenant) ?? 0, ...(everyFile ? { files: files.get(tenant) ?? [] } : {}) }));
}

/** How a worker of a shared apply reads its tenants: the whole desired state, or each tenant's files as it is taken. */
interface SharedReading {
  readonly joined: SharedRunJoined;
  readonly validated: 'here' | 'by-first-worker';
  inputOf(tenant: string, files: readonly string[] | undefined): Promise<RunInput | RunInvalid>;
}

/**
 * Joins a shared apply. A worker that finds the run begun reads only the files of each tenant it
 * takes: the worker that began it read and validated the whole desired state first (a run with an
 * error anywhere is never begun, so sends nothing). Otherwise it reads and validates the whole
 * desired state itself, then joins with the tenants' sizes and files.
 */
async function joinSharedApply(
  opening: SharedOpening,
  opened: OpenedInput,
  scopes: ReadonlyMap<string, TenantScope> | undefined,
): Promise<SharedReading | RunInvalid> {
  let whole: Promise<RunInput> | undefined;
  async function wholeInput(): Promise<RunInput> {
    whole ??= readWholeInput(opened, { ...(scopes ? { scopes } : {}), describeIncremental: false, records: true });
    return whole;
  }
  async function inputOf(tenant: string, files: readonly string[] | undefined): Promise<RunInput | RunInvalid> {
    // A worker that read the whole desired state has every tenant's files read and validated already.
    if (files !== undefined && whole === undefined) return readTenantInput(opened, tenant, files, scopes);
    const input = await wholeInput();
    return desiredProblems(input) ?? inputOfTenant(input, tenant);
  }
  const first = await opening.runs.beginOnce(opening.start.key, async (): Promise<SharedReading | RunInvalid> => {
    const input = await wholeInput();
    const invalid = desiredProblems(input);
    if (invalid) return invalid;
    return { joined: await opening.runs.join({ ...opening.start, tenants: sharedTenantsOf(opened, input) }), validated: 'here', inputOf };
  });
  return first ?? { joined: await opening.runs.join(opening.start), validated: 'by-first-worker', inputOf };
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
    applyScopes({ dryRun: false, refresh: readsLive(request, canRead), canRead }).tokens,
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
