/**
 * A worker of a shared run (`--shard auto`, engine/state/shared-run.ts): it joins the run every
 * worker of the same command, commit and selection computes alike, then takes the largest tenant
 * left, runs it through the run's per-tenant pipeline, marks it done, and takes the next, until
 * every tenant is done. A tenant held by a live worker is waited for: if that worker dies, its
 * claim ends with its session and this worker takes the tenant over in the same run.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { RUN_REPORT_VERSION, summarise, type RunReport } from '../apply/run-report.ts';
import type { Clock } from '../io/clock.ts';
import type { Config } from '../config/types.ts';
import type { HistoryCommand } from '../state/history.ts';
import type { SharedRunJoined, SharedRuns, SharedTenantResult } from '../state/shared-run.ts';
import { historyCountsOf } from './record-history.ts';
import type { RunEffects, RunEvent, RunSelection } from './types.ts';

/** Said when `--shard auto` meets a store that cannot share a run. */
export const SHARED_NEEDS_POSTGRES =
  "--shard auto shares one run between workers through the PostgreSQL state store (state: { backend: postgres }), which every worker reaches and which frees a dead worker's tenants; a file store is local to one machine: use --shard I/N with it";

/** What makes two workers' runs one run: everything that decides what the run sends. */
export interface SharedRunIdentity {
  readonly command: HistoryCommand;
  readonly commit: string;
  readonly tenants: readonly string[];
  readonly selection: RunSelection;
  /** The run's other options (full or incremental, refresh, removal limits): workers must agree on them. */
  readonly options: Readonly<Record<string, unknown>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * What the desired state was validated with: the config as read and this contract-sync's version.
   * A worker that joins a begun run trusts its first worker's validation only when they agree.
   */
  readonly validatedWith: string;
}

/**
 * The occasion of a run, from the environment: `CONTRACT_SYNC_RUN` when set, else the CI run
 * (GitHub: run id and attempt; GitLab: pipeline id), else none: then the same commit and selection
 * are the same run, and a run finished is not run again at that commit.
 */
export function runOccasion(env: Readonly<Record<string, string | undefined>>): string {
  const named = env.CONTRACT_SYNC_RUN;
  if (named !== undefined && named !== '') return `named:${named}`;
  if (env.GITHUB_RUN_ID) return `github:${env.GITHUB_RUN_ID}:${env.GITHUB_RUN_ATTEMPT ?? '1'}`;
  if (env.CI_PIPELINE_ID) return `gitlab:${env.CI_PIPELINE_ID}`;
  return '';
}

/** The run's key: a hash every worker of the run computes alike, and a later run (another commit) differently. */
export function sharedRunKey(identity: SharedRunIdentity): string {
  const { command, commit, tenants, selection, options, env, validatedWith } = identity;
  const described = JSON.stringify({
    version: 2,
    command,
    commit,
    tenants: [...tenants].sort(),
    targets: (selection.targets ?? []).map((target) => target.raw).sort(),
    excludes: (selection.excludes ?? []).map((target) => target.raw).sort(),
    options: Object.fromEntries(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    occasion: runOccasion(env),
    validatedWith,
  });
  return createHash('sha256').update(described, 'utf8').digest('hex');
}

/** This worker's name in the run's history: `CONTRACT_SYNC_WORKER`, else host and process. */
export function workerName(env: Readonly<Record<string, string | undefined>>): string {
  const named = env.CONTRACT_SYNC_WORKER;
  return named !== undefined && named !== '' ? named : `${hostname()}:${process.pid}`;
}

export interface SharedWork<T> {
  readonly runs: SharedRuns;
  /** The run's key, and the run as this worker joined it. */
  readonly key: string;
  readonly joined: SharedRunJoined;
  /** Who validated the whole desired state: this worker, or the worker that began the run. */
  readonly validated: 'here' | 'by-first-worker';
  readonly worker: string;
  readonly clock: Pick<Clock, 'sleep'>;
  /** How many tenants the worker runs at once. */
  readonly lanes: number;
  /**
   * One tenant, through the run's pipeline, under the run's id (joined.runId); `files`: its
   * desired-state files, when the run recorded them. `ending()`, called once the tenant has little
   * left to send (its last requests in flight), lets the worker take its next tenant meanwhile.
   */
  runTenant(tenant: string, files: readonly string[] | undefined, ending: () => void): Promise<T>;
  /** What the history says of the tenant. */
  resultOf(outcome: T, tenant: string): SharedTenantResult;
  readonly onEvent?: (event: RunEvent) => void;
}

export interface SharedWorked<T> {
  /** The tenants this worker did, in the order it took them. */
  readonly outcomes: readonly T[];
}

// Between two waits for tenants other workers hold (the store's `next` waits on them itself).
const WAIT_AGAIN_MS = 50;

/**
 * How many tenants a worker runs at once: enough for its tenants' requests (rate.concurrency each)
 * to fill rate.maxInFlight, as a run of many tenants does, plus one, so that while a lane claims,
 * locks and plans its next tenant (token, store reads), the others keep the limit filled. The
 * in-flight limit stays the worker's: its tenants share one queue.
 */
export function sharedLanes(config: Pick<Config, 'rate'>): number {
  return Math.max(1, Math.ceil(config.rate.maxInFlight / config.rate.concurrency)) + 1;
}

/**
 * Whether a tenant's send is near its end: no more than two rounds of its requests (2 x
 * rate.concurrency) left to answer. A lane that sees it takes the worker's next tenant then, so
 * that its claim, lock, plan and token overlap the last answers instead of following them.
 */
export function sendEnding(progress: { readonly done: number; readonly total: number }, concurrency: number): boolean {
  return progress.total - progress.done <= 2 * concurrency;
}

/** A tenant's run effects that call `ending` once its send is near its end (sendEnding), and pass every event on. */
export function endingOf(effects: RunEffects, config: Pick<Config, 'rate'>, ending: () => void): RunEffects {
  return {
    ...effects,
    onEvent(event) {
      if (event.type === 'progress' && event.step === 'send' && sendEnding(event, config.rate.concurrency)) ending();
      effects.onEvent?.(event);
    },
  };
}

export async function workShared<T>(work: SharedWork<T>): Promise<SharedWorked<T>> {
  const { joined, worker } = work;
  work.onEvent?.({
    type: 'shared',
    shared: { kind: 'joined', runId: joined.runId, worker, tenants: joined.tenants, done: joined.done, validated: work.validated },
  });
  const outcomes: T[] = [];
  // A failure stops every lane from taking more; the others finish the tenants they hold (their
  // claims end cleanly) before the error is thrown.
  let failure: { readonly reason: unknown } | undefined;
  // A worker's first claim goes alone, so that its first tenant is the largest it can take; the
  // others then claim at once, each on its own session, so that the lanes fill without waiting on
  // each other's connections.
  let first: Promise<unknown> | undefined;
  function claimNext(lane: number): ReturnType<SharedRuns['next']> {
    const next = (first ?? Promise.resolve()).then(async () => {
      const answer = await work.runs.next(work.key, worker, lane);
      if (answer.kind === 'claimed') {
        const { claim } = answer;
        work.onEvent?.({ type: 'shared', shared: { kind: 'took', worker, tenant: claim.tenant, size: claim.size, takenOverFrom: claim.takenOverFrom } });
      }
      return answer;
    });
    first ??= next.catch(() => undefined);
    return next;
  }
  // `work.lanes` lanes take tenants at once. A lane whose tenant is ending hands its place to a
  // new lane (on a free session: a lane's claim is its session's), which takes the next tenant
  // while the ending one is answered; the lane stops once its tenant ends. With 2 x work.lanes
  // lanes running (many small tenants end as soon as they start), a lane keeps its place.
  const most = 2 * Math.max(1, work.lanes);
  const free: number[] = [];
  let opened = 0;
  const running = new Set<Promise<void>>();
  function startLane(): boolean {
    if (running.size >= most) return false;
    const lane = free.pop() ?? opened++;
    const worked = workLane(work, lane, outcomes, () => failure !== undefined, claimNext, startLane)
      .catch((reason: unknown) => {
        failure ??= { reason };
      })
      .finally(() => {
        running.delete(worked);
        free.push(lane);
      });
    running.add(worked);
    return true;
  }
  for (let lane = 0; lane < Math.max(1, work.lanes); lane++) startLane();
  while (running.size > 0) await Promise.all(running);
  if (failure !== undefined) throw failure.reason;
  return { outcomes };
}

/** Takes tenants one at a time until none is left, or until its tenant ends after another lane took its place (`handOver`, false when none could). */
async function workLane<T>(
  work: SharedWork<T>,
  lane: number,
  outcomes: T[],
  stop: () => boolean,
  claimNext: (lane: number) => ReturnType<SharedRuns['next']>,
  handOver: () => boolean,
): Promise<void> {
  let handedOver = false;
  while (!stop() && !handedOver) {
    const next = await claimNext(lane);
    if (next.kind === 'finished') break;
    if (next.kind === 'wait') {
      await work.clock.sleep(WAIT_AGAIN_MS);
      continue;
    }
    const { claim } = next;
    let outcome: T;
    try {
      outcome = await work.runTenant(claim.tenant, claim.files, () => {
        if (!handedOver && !stop()) handedOver = handOver();
      });
    } catch (error) {
      await claim.abandon();
      throw error;
    }
    // What this worker did for the tenant is its own report either way; a lost claim (its session
    // cut) leaves the tenant to the worker that takes it over, which finds nothing left to send.
    const result = work.resultOf(outcome, claim.tenant);
    if ((await claim.finish(result)) === 'lost')
      work.onEvent?.({
        type: 'shared',
        shared: { kind: 'lost', worker: work.worker, tenant: claim.tenant, ...(result.error === undefined ? {} : { error: result.error }) },
      });
    outcomes.push(outcome);
  }
}

/** A tenant's line in the shared run's history, from the report of the run that applied it. */
export function tenantResultOf(report: RunReport, tenant: string): SharedTenantResult {
  const entry = report.tenants.find((candidate) => candidate.tenant === tenant);
  return entry === undefined ? { changed: 0, applied: 0, failed: 0 } : historyCountsOf(entry);
}

/** The reports of a worker's tenants, each applied as a run of its own, as one report of the shared run. */
export function workerReport(reports: readonly RunReport[], run: Pick<RunReport, 'runId' | 'startedAt' | 'finishedAt' | 'source'>): RunReport {
  const tenants = reports.flatMap((report) => report.tenants);
  const warnings = reports.flatMap((report) => report.warnings ?? []);
  return {
    version: RUN_REPORT_VERSION,
    ...run,
    dryRun: false,
    tenants,
    ...(warnings.length === 0 ? {} : { warnings }),
    summary: summarise(tenants),
  };
}
