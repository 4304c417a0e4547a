/**
 * What the `--shard auto` tests share (test/run/shared-run*.test.ts): a real PostgreSQL server for
 * the test file; per test, a fleet on the emulator in a git repository whose config names a fresh
 * database; the workers as CLI children, killed after each test, the emulator then closed.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect } from 'vitest';
import { startEmulator, type Emulator, type RequestLogEntry } from '../../emulator/index.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import type { RunHistoryEntry } from '../../engine/state/history.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { cleanupsAfterEach } from './cleanups.ts';
import { startCli, type CliChild } from './cli-child.ts';
import { createFleet, fleetRepoFiles, fleetSeed, setFaults, type Fleet } from './fleet.ts';
import { startPostgres, type PostgresOptions, type PostgresServer } from './postgres-server.ts';

/** How long a PATCH waits while workers are still joining: far longer than a start-up on a loaded machine. */
export const HOLD_MS = 5000;

/** What a child run needs: where it runs, and the environment it adds (the fleet's secrets, the database). */
export interface WorkerPlace {
  readonly repo: TestRepo;
  readonly env: Record<string, string>;
}

export interface SharedRunSetup extends WorkerPlace {
  readonly fleet: Fleet;
  readonly emulator: Emulator;
  /** The name of the fresh database the config names. */
  readonly database: string;
}

export interface SharedRunSetupOptions {
  /**
   * With api.read (the default). Without, the store starts as a previous run left it, every contract
   * recorded as it is live (without reads, the plan comes from the store).
   */
  readonly read?: boolean;
  /** Changes the repository's files before they are committed. */
  readonly edit?: (files: Record<string, string>, fleet: Fleet) => void;
}

export interface SharedRunWorkers {
  /** The test file's PostgreSQL server. */
  server(): PostgresServer;
  /**
   * `tenants` tenants of `perTenant` contracts (two in three changed), in a git repository whose
   * config names a fresh PostgreSQL database. `latencyMs`: every API request waits that long, so
   * that a tenant takes a while and every worker gets some.
   */
  setup(tenants: number, perTenant: number, latencyMs: number, options?: SharedRunSetupOptions): Promise<SharedRunSetup>;
  /** `contract-sync ARGS` in the repository, without the CI variables of the machine running the tests (unless `extra` sets them). */
  start(place: WorkerPlace, args: readonly string[], extra?: Record<string, string>): CliChild;
  /** `apply --shard auto` as the worker `name`. */
  worker(place: WorkerPlace, name: string, extra?: Record<string, string>): CliChild;
  /**
   * Starts the workers `names`, each sure to take part: every PATCH is held for `HOLD_MS` until
   * every worker has joined the run, so that no worker can finish the run alone while another is
   * still starting (a worker's start-up takes seconds on a loaded machine); then `latencyMs` again.
   */
  startTakingPart(setup: SharedRunSetup, names: readonly string[], latencyMs: number): Promise<CliChild[]>;
  /** The runs `state history --format json` lists, newest first; it must exit 0. */
  history(place: WorkerPlace): Promise<RunHistoryEntry[]>;
}

/** Registers the file's hooks (the server, the clean-up after each test) and returns what its tests call. */
export function sharedRunWorkers(postgres: PostgresOptions = {}): SharedRunWorkers {
  let server: PostgresServer | undefined;
  const running = new Set<ChildProcess>();
  const emulators: Emulator[] = [];
  const cleanups = cleanupsAfterEach(async () => {
    for (const child of running) child.kill('SIGKILL');
    running.clear();
    for (const emulator of emulators.splice(0)) await emulator.close();
  });

  beforeAll(async () => {
    server = await startPostgres(postgres);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  function start(place: WorkerPlace, args: readonly string[], extra: Record<string, string> = {}): CliChild {
    const env: NodeJS.ProcessEnv = { ...process.env, ...place.env, CONTRACT_SYNC_LOG_LEVEL: 'warn', ...extra };
    for (const name of ['GITHUB_RUN_ID', 'GITHUB_RUN_ATTEMPT', 'GITHUB_ACTIONS', 'CI_PIPELINE_ID', 'GITLAB_CI', 'CONTRACT_SYNC_RUN'])
      if (!(name in extra)) delete env[name];
    return startCli(args, { cwd: place.repo.dir, env, running });
  }

  function worker(place: WorkerPlace, name: string, extra: Record<string, string> = {}): CliChild {
    return start(place, ['apply', '--shard', 'auto', '--ref', 'HEAD', '--lock-timeout', '120'], { CONTRACT_SYNC_WORKER: name, ...extra });
  }

  return {
    server: () => server!,
    async setup(tenants, perTenant, latencyMs, options = {}) {
      const fleet = createFleet(tenants, perTenant);
      const emulator = await startEmulator(fleetSeed(fleet));
      emulators.push(emulator);
      if (latencyMs > 0) await setFaults(emulator, { api: { latencyMs: [latencyMs, latencyMs] } });
      const read = options.read ?? true;
      const files = fleetRepoFiles(fleet, emulator, { read, rate: '{ requestsPerSecond: 1000, concurrency: 2, maxInFlight: 4 }' });
      files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: STATE_DB_URL } }\n';
      options.edit?.(files, fleet);
      const url = await server!.createDatabase();
      if (!read) await recordLive(url, fleet);
      const repo = await createRepo(files);
      cleanups.push(() => repo.cleanup());
      return { fleet, emulator, repo, env: { ...fleet.env, STATE_DB_URL: url }, database: new URL(url).pathname.slice(1) };
    },
    start,
    worker,
    async startTakingPart(setup, names, latencyMs) {
      await setFaults(setup.emulator, { api: { latencyMs: [HOLD_MS, HOLD_MS] } });
      const started = names.map((name) => worker(setup, name));
      while (!started.every((run) => /^shared run \S+: worker \S+ joined/m.test(run.stdout()))) {
        const exited = await Promise.race([Promise.all(started.map((run) => run.finished)), delay(50)]);
        if (exited !== undefined) break;
      }
      await setFaults(setup.emulator, { api: { latencyMs: [latencyMs, latencyMs] } });
      return started;
    },
    async history(place) {
      const run = await start(place, ['state', 'history', '--format', 'json']).finished;
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { runs: RunHistoryEntry[] }).runs;
    },
  };
}

/** The state store at `url` as a previous run left it: every contract of the fleet recorded as it is live. */
async function recordLive(url: string, fleet: Fleet): Promise<void> {
  const store = await openPostgresStateStore({ url });
  try {
    for (const [tenant, contracts] of fleet.live) {
      for (const [contractId, fields] of contracts)
        await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-01-01T00:00:00.000Z', commit: null });
    }
  } finally {
    await store.close();
  }
}

/** The PATCHes the service answered 2xx. */
export function answeredPatches(log: readonly RequestLogEntry[]): RequestLogEntry[] {
  return log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH' && entry.status !== null && entry.status < 300);
}
