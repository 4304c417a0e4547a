/**
 * A worker's part of a shared run (`--shard auto`) before and around its tenants' runs: the commit
 * every worker reads alike, opening and joining the run through the PostgreSQL store, the run's
 * tenants sized for taking, each tenant's input, and what each tenant's run shares with the
 * worker's others (engine/run/shared-run.ts takes the tenants; apply.ts and drift.ts run them).
 */
import { createHash, randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import type { TenantScope } from '../apply/incremental.ts';
import type { Scope } from '../auth/index.ts';
import type { Config } from '../config/types.ts';
import { startedByFromEnv, type HistoryCommand } from '../state/history.ts';
import type { SharedRunJoined, SharedRuns, SharedRunStart, SharedRunTenant } from '../state/shared-run.ts';
import { desiredProblems, readsCommit, readsEveryFile, readTenantInput, readWholeInput, selectedTenants, type OpenedInput, type RunInput } from './input.ts';
import type { LazyStore } from './lazy-store.ts';
import type { SharedTenantRun } from './pipeline-run.ts';
import { SHARED_NEEDS_POSTGRES, sharedLanes, sharedRunKey, workerName, type SharedWork } from './shared-run.ts';
import type { RunEffects, RunInvalid, RunRefused, RunUnread } from './types.ts';
import { packageVersion } from './version.ts';

/** What every tenant a worker of a shared run takes runs with; `scopes`: the tokens its runs send with. */
export async function sharedTenantRun(opening: SharedOpening, config: Config, runId: string, scopes: readonly Scope[]): Promise<SharedTenantRun> {
  const { createEngineSetup } = await import('./engine-setup.ts');
  return { runId, inFlight: opening.inFlight, engine: createEngineSetup(opening.effects, config, scopes, runId) };
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
  void Promise.all([import('../pipeline/compose.ts'), import('./engine-setup.ts')]).catch(() => undefined);
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
export interface SharedReading {
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
export async function joinSharedApply(
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
