/**
 * Issue 41, item 2: a shared run's one history entry counts what the run applied, by whichever
 * worker, however its part ended: after a worker is SIGKILLed, after the claim sessions are
 * terminated (`pg_terminate_backend`) while the server runs, and after a PostgreSQL restart
 * (`pg_ctl stop -m immediate`, start) followed by a recovery run. Each tenant's `applied` is set
 * beside the emulator's own count of the contracts it changed (PATCHes answered 2xx, by ContractId).
 * Also item 1: no worker crashes with a stack trace, and each says what happened to it. A real
 * PostgreSQL, the emulator, and the CLI as child processes.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type RequestLogEntry } from '../../emulator/index.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import type { RunHistoryEntry } from '../../engine/state/history.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { startCli, type CliChild, type CliFinished } from '../helpers/cli-child.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, setFaults, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

/** How long a PATCH waits while workers are still joining: far longer than a start-up on a loaded machine. */
const HOLD_MS = 5000;

let emulator: Emulator | undefined;
let server: PostgresServer | undefined;
const running = new Set<ChildProcess>();
const cleanups = cleanupsAfterEach(async () => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
  await emulator?.close();
  emulator = undefined;
});

beforeAll(async () => {
  // A server stopped at once keeps every COMMIT it acknowledged, as in production: what the run recorded is what it counts.
  server = await startPostgres({ durableCommits: true });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

interface Setup {
  readonly fleet: Fleet;
  readonly repo: TestRepo;
  readonly env: Record<string, string>;
  readonly database: string;
}

/**
 * `tenants` tenants of `perTenant` contracts (two in three changed), and a fresh PostgreSQL database;
 * every API request waits `latencyMs`. With api.read, unless `read` is false: then the store starts
 * as a previous run left it, every contract recorded as it is live (without reads, the plan comes
 * from the store).
 */
async function setup(tenants: number, perTenant: number, latencyMs: number, read = true): Promise<Setup> {
  const fleet = createFleet(tenants, perTenant);
  emulator = await startEmulator(fleetSeed(fleet));
  await setFaults(emulator, { api: { latencyMs: [latencyMs, latencyMs] } });
  const files = fleetRepoFiles(fleet, emulator, { read, rate: '{ requestsPerSecond: 1000, concurrency: 2, maxInFlight: 4 }' });
  files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: STATE_DB_URL } }\n';
  const url = await server!.createDatabase();
  if (!read) {
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
  const repo = await createRepo(files);
  cleanups.push(() => repo.cleanup());
  return { fleet, repo, env: { ...fleet.env, STATE_DB_URL: url }, database: new URL(url).pathname.slice(1) };
}

function start(s: Setup, args: readonly string[], extra: Record<string, string> = {}): CliChild {
  const env: NodeJS.ProcessEnv = { ...process.env, ...s.env, CONTRACT_SYNC_LOG_LEVEL: 'warn', ...extra };
  for (const name of ['GITHUB_RUN_ID', 'GITHUB_RUN_ATTEMPT', 'GITHUB_ACTIONS', 'CI_PIPELINE_ID', 'GITLAB_CI', 'CONTRACT_SYNC_RUN']) delete env[name];
  return startCli(args, { cwd: s.repo.dir, env, running });
}

function worker(s: Setup, name: string): CliChild {
  return start(s, ['apply', '--shard', 'auto', '--ref', 'HEAD', '--lock-timeout', '120'], { CONTRACT_SYNC_WORKER: name });
}

function answeredPatches(log: readonly RequestLogEntry[]): RequestLogEntry[] {
  return log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH' && entry.status !== null && entry.status < 300);
}

/** Waits until the service has answered `count` PATCHes. */
async function patchesAnswered(count: number): Promise<void> {
  while (answeredPatches(await requestLog(emulator!)).length < count) await delay(20);
}

/**
 * Per tenant: what the run's one history entry says it applied, the contracts the service changed
 * (distinct ContractIds whose PATCH it answered 2xx), and the PATCHes it answered.
 */
async function countsBeside(
  s: Setup,
): Promise<{ entries: RunHistoryEntry[]; counts: Record<string, { history: number; changedOnService: number; answered: number }> }> {
  const listed = await start(s, ['state', 'history', '--format', 'json']).finished;
  expect(listed.code, listed.stderr).toBe(0);
  const entries = (JSON.parse(listed.stdout) as { runs: RunHistoryEntry[] }).runs;
  const answered = answeredPatches(await requestLog(emulator!));
  const counts: Record<string, { history: number; changedOnService: number; answered: number }> = {};
  for (const tenant of s.fleet.tenants) {
    const mine = answered.filter((entry) => entry.tenant === tenant);
    counts[tenant] = {
      history: entries[0]?.tenants.find((line) => line.tenant === tenant)?.applied ?? -1,
      changedOnService: new Set(mine.map((entry) => entry.path)).size,
      answered: mine.length,
    };
  }
  return { entries, counts };
}

/** Every tenant's history count equals what the service changed for it, which is every changed contract of the fleet, each PATCHed once. */
function expectCountedAsOnService(s: Setup, counts: Awaited<ReturnType<typeof countsBeside>>['counts']): void {
  const expected = Object.fromEntries(
    s.fleet.tenants.map((tenant) => [
      tenant,
      { history: s.fleet.changed.get(tenant)!.size, changedOnService: s.fleet.changed.get(tenant)!.size, answered: s.fleet.changed.get(tenant)!.size },
    ]),
  );
  expect(counts).toEqual(expected);
}

/** A worker that stopped said what happened in one line of its own and printed no stack trace. */
function expectNoCrash(run: CliFinished): void {
  expect(run.stderr, run.stderr).not.toContain('internal error');
  expect(run.stderr, run.stderr).not.toMatch(/^\s+at /m);
}

describe("a shared run's history counts what was applied, by whichever worker, however it ended", () => {
  it('a worker SIGKILLed mid-run: the tenants taken over count what it applied', { timeout: 180_000 }, async () => {
    const s = await setup(4, 24, 60);
    const victim = worker(s, 'victim');
    // Killed while its first tenants are half sent: some of their PATCHes answered and recorded, others not yet sent.
    await patchesAnswered(12);
    victim.child.kill('SIGKILL');
    expect((await victim.finished).signal).toBe('SIGKILL');
    const before = answeredPatches(await requestLog(emulator!)).length;

    const rescuers = await Promise.all([worker(s, 'rescuer').finished, worker(s, 'second').finished]);

    for (const run of rescuers) expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const { entries, counts } = await countsBeside(s);
    expect(entries).toHaveLength(1);
    expectCountedAsOnService(s, counts);
    // The tenants the victim held say so; what it applied before it died is in their count all the same.
    const takenOver = entries[0]!.tenants.filter((tenant) => tenant.takenOverFrom?.includes('victim'));
    expect(takenOver.length).toBeGreaterThan(0);
    expect(takenOver.reduce((sum, tenant) => sum + tenant.applied, 0)).toBeGreaterThan(0);
    expect(before).toBeLessThan(changedTotal(s));
    expect(entries[0]!.tenants.every((tenant) => tenant.failed === 0 && tenant.unknown === undefined)).toBe(true);
  });

  it(
    'a worker SIGKILLed, no reads configured: what it had in flight and no read can settle is said (unknown), never counted as applied',
    { timeout: 180_000 },
    async () => {
      const s = await setup(4, 24, 60, false);
      const victim = worker(s, 'victim');
      await patchesAnswered(12);
      victim.child.kill('SIGKILL');
      await victim.finished;

      const rescuer = await worker(s, 'rescuer').finished;

      // Its Add/Remove patches left in flight are not sent blindly: those contracts fail, named, and the run exits 1.
      expectNoCrash(rescuer);
      expect(rescuer.code === 0 || /not sent blindly/.test(rescuer.stdout), `${rescuer.stdout}\n${rescuer.stderr}`).toBe(true);
      const { entries, counts } = await countsBeside(s);
      expect(entries).toHaveLength(1);
      for (const line of entries[0]!.tenants) {
        const { changedOnService } = counts[line.tenant]!;
        // Every contract counted was changed on the service; one changed and not counted is among those said unknown.
        expect(line.applied, line.tenant).toBeLessThanOrEqual(changedOnService);
        expect(changedOnService - line.applied, line.tenant).toBeLessThanOrEqual(line.unknown ?? 0);
        expect(line.failed, line.tenant).toBe(line.unknown ?? 0);
      }
      expect(entries[0]!.tenants.some((line) => line.takenOverFrom?.includes('victim'))).toBe(true);
    },
  );

  it(
    'the claim sessions terminated with pg_terminate_backend while three workers run: no stack trace, each says so, every tenant counted',
    { timeout: 180_000 },
    async () => {
      const s = await setup(6, 24, 150);
      // PATCHes held until every worker has joined, so that all three take part.
      await setFaults(emulator!, { api: { latencyMs: [HOLD_MS, HOLD_MS] } });
      const workers = ['w1', 'w2', 'w3'].map((name) => worker(s, name));
      while (!workers.every((run) => /^shared run \S+: worker \S+ joined/m.test(run.stdout()))) {
        const exited = await Promise.race([Promise.all(workers.map((run) => run.finished)), delay(50)]);
        if (exited !== undefined) break;
      }
      await setFaults(emulator!, { api: { latencyMs: [150, 150] } });
      await patchesAnswered(20);

      const { rows } = await server!.query(
        `SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND query LIKE '%shared_run_tenants%FOR UPDATE%') AS cut`,
        s.database,
      );
      expect((rows[0] as { n: number }).n).toBeGreaterThan(0);
      const runs = await Promise.all(workers.map((run) => run.finished));

      for (const run of runs) {
        expectNoCrash(run);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      }
      const said = runs.map((run) => run.stdout).join('');
      expect(said).toMatch(/^worker w\d lost its claim of tenant \S+ \(its database session ended\)/m);
      const { entries, counts } = await countsBeside(s);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.tenants.map((tenant) => tenant.tenant)).toEqual([...s.fleet.tenants].sort());
      expectCountedAsOnService(s, counts);
    },
  );

  it(
    'PostgreSQL stopped (-m immediate) mid-run, started again, then a recovery run: every worker stops in one line; the entry counts both passes',
    { timeout: 180_000 },
    async () => {
      const s = await setup(4, 24, 60);
      const workers = ['w1', 'w2', 'w3'].map((name) => worker(s, name));
      await patchesAnswered(12);

      await server!.halt();
      let stopped: CliFinished[];
      try {
        stopped = await Promise.all(workers.map((run) => run.finished));
      } finally {
        await server!.restart();
      }
      const beforeRecovery = answeredPatches(await requestLog(emulator!)).length;
      const recovery = await worker(s, 'recovery').finished;

      for (const run of stopped) {
        expectNoCrash(run);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
        expect(run.stderr).toMatch(
          /PostgreSQL state store \(127\.0\.0\.1:\d+, database "[^"]+"\).*; run the same command again once the state store is reachable\n$/,
        );
      }
      expect(recovery.code, `${recovery.stdout}\n${recovery.stderr}`).toBe(0);
      expect(beforeRecovery).toBeLessThan(changedTotal(s));
      const { entries, counts } = await countsBeside(s);
      expect(entries).toHaveLength(1);
      expectCountedAsOnService(s, counts);
    },
  );
});

function changedTotal(s: Setup): number {
  return [...s.fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
}
