/**
 * Two merges applied at once (issue 21, item 1): `apply --ref c2` and `apply --ref c1`, c2
 * descending from c1, as two real processes against the emulator, on the file and the PostgreSQL
 * state store. The commit check is made under the tenant's lock: whichever run waits, the older
 * commit is never sent over the newer one, and the run record never goes back to c1.
 */
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import type { StateStore } from '../../engine/state/types.ts';
import { startEmulator, type Emulator, type RequestLogEntry } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { startCli } from '../helpers/cli-child.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

const TENANT = 'tenant-a';

let emulator: Emulator | undefined;
let server: PostgresServer | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

interface ChildRun {
  readonly code: number | null;
  /** What it printed, stdout then stderr. */
  readonly output: string;
}

const REPORT_LOCK_LOOKS = fileURLToPath(new URL('../cli/fixtures/report-lock-looks.mjs', import.meta.url));

interface Started {
  readonly finished: Promise<ChildRun>;
  /** Resolves once the run has opened the tenant's lock file (file store, with `reportLockLooks`). */
  readonly lookedAtLock: Promise<void>;
}

function apply(ref: string, cwd: string, env: Record<string, string>): Promise<ChildRun> {
  return startApply(ref, cwd, env).finished;
}

function startApply(ref: string, cwd: string, env: Record<string, string>, reportLockLooks = false): Started {
  const child = startCli(['apply', '--ref', ref, '--lock-timeout', '60'], {
    cwd,
    env: { ...process.env, ...env, CONTRACT_SYNC_LOG_LEVEL: 'warn' },
    nodeArgs: reportLockLooks ? ['--import', pathToFileURL(REPORT_LOCK_LOOKS).href] : [],
  });
  return {
    finished: child.finished.then(({ code, stdout, stderr }) => ({ code, output: stdout + stderr })),
    lookedAtLock: child.waitFor('stderr', /^looked at the lock of /m),
  };
}

function patches(log: readonly RequestLogEntry[]): RequestLogEntry[] {
  return log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH');
}

/** Every contract of the fleet's one tenant, renamed for commit `label`. */
function renamedFiles(fleet: Fleet, label: string): Record<string, string> {
  return Object.fromEntries(
    fleet.desired.map((set) => [
      set.file,
      stringify({
        tenant: set.tenant,
        contracts: Object.fromEntries(set.contracts.map((contract) => [contract.id, { ...contract.fields, Name: `new ${contract.id} ${label}` }])),
      }),
    ]),
  );
}

interface Setup {
  readonly fleet: Fleet;
  readonly repo: TestRepo;
  readonly env: Record<string, string>;
  readonly commits: { readonly c1: string; readonly c2: string };
  readonly store: () => Promise<StateStore>;
}

async function setup(backend: 'file' | 'postgres'): Promise<Setup> {
  const fleet = createFleet(1, 40);
  emulator = await startEmulator(fleetSeed(fleet));
  // 40 requests/s: a run sends for about a second, long enough for the other to wait for its lock.
  const files = fleetRepoFiles(fleet, emulator, {
    read: true,
    rate: '{ requestsPerSecond: 40, concurrency: 2, maxInFlight: 4 }',
    ...(backend === 'file' ? { statePath: '.contract-sync/state' } : {}),
  });
  const url = backend === 'postgres' ? await server!.createDatabase() : undefined;
  if (url) files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: STATE_DB_URL } }\n';
  const repo = await createRepo({ ...files, '.gitignore': '.contract-sync/\n' });
  cleanups.push(() => repo.cleanup());
  const env = { ...fleet.env, PATH: process.env.PATH ?? '', ...(url ? { STATE_DB_URL: url } : {}) };
  const c0 = await apply('HEAD', repo.dir, env);
  expect(c0.code, c0.output).toBe(0);
  const c1 = await repo.commit('c1', renamedFiles(fleet, 'c1'));
  const c2 = await repo.commit('c2', renamedFiles(fleet, 'c2'));
  async function store(): Promise<StateStore> {
    return url ? openPostgresStateStore({ url }) : fileStateStore(path.join(repo.dir, '.contract-sync/state'));
  }
  return { fleet, repo, env, commits: { c1, c2 }, store };
}

/** Starts `first`, waits until it is sending (it holds the tenant's lock), then starts `second`. */
async function overlapping(setup: Setup, first: string, second: string): Promise<[ChildRun, ChildRun, number]> {
  const before = patches(await requestLog(emulator!)).length;
  const firstRun = apply(first, setup.repo.dir, setup.env);
  while (patches(await requestLog(emulator!)).length === before) await delay(20);
  const secondRun = apply(second, setup.repo.dir, setup.env);
  const [a, b] = await Promise.all([firstRun, secondRun]);
  return [a, b, patches(await requestLog(emulator!)).length - before];
}

async function liveNames(fleet: Fleet): Promise<Set<string>> {
  const names = await Promise.all(
    fleet.desired[0]!.contracts.map(async (contract) => String((await liveContract(emulator!, TENANT, contract.id)).Name).replace(contract.id, 'ID')),
  );
  return new Set(names);
}

describe.each(['file', 'postgres'] as const)('two merges applied at once (%s store)', (backend) => {
  it('refuses the older commit when the newer was applied while it waited for the lock: nothing sent, exit 1', { timeout: 120_000 }, async () => {
    const s = await setup(backend);

    const [newer, older, sent] = await overlapping(s, s.commits.c2, s.commits.c1);

    expect(newer.code, newer.output).toBe(0);
    expect(older.code, older.output).toBe(1);
    // Refused before its lock (the newer run had finished when it started) or under it (while it waited).
    expect(older.output).toMatch(new RegExp(`${s.commits.c2.slice(0, 12)}.*, which is newer than this commit`));
    expect(sent).toBe(40);
    expect(await liveNames(s.fleet)).toEqual(new Set(['new ID c2']));
    const store = await s.store();
    expect((await store.readRun(TENANT))?.lastAppliedCommit).toBe(s.commits.c2);
    await store.close();
  });

  it('applies the newer commit after the older one that held the lock: both exit 0, the newer wins', { timeout: 120_000 }, async () => {
    const s = await setup(backend);

    const [older, newer, sent] = await overlapping(s, s.commits.c1, s.commits.c2);

    expect(older.code, older.output).toBe(0);
    expect(newer.code, newer.output).toBe(0);
    expect(sent).toBe(80);
    expect(await liveNames(s.fleet)).toEqual(new Set(['new ID c2']));
    const store = await s.store();
    expect((await store.readRun(TENANT))?.lastAppliedCommit).toBe(s.commits.c2);
    await store.close();
  });

  it(
    'checks the last applied commit under the lock: a record changed while the run waited refuses the tenant, nothing sent',
    { timeout: 120_000 },
    async () => {
      const s = await setup(backend);
      const holder = await s.store();
      const lock = await holder.lock(TENANT, { timeoutMs: 5000, owner: 'test' });
      const before = patches(await requestLog(emulator!)).length;

      const older = startApply(s.commits.c1, s.repo.dir, s.env, backend === 'file');
      await waitingForLock(older, backend);
      // What a run of c2 leaves behind, recorded while the c1 run waits for the lock.
      const record = (await holder.readRun(TENANT))!;
      await holder.writeRun(TENANT, { ...record, lastAppliedCommit: s.commits.c2 });
      await lock.release();
      const run = await older.finished;

      expect(run.code, run.output).toBe(1);
      expect(run.output).toContain(
        `while this run waited for the lock, another run recorded ${s.commits.c2.slice(0, 12)} as tenant ${TENANT}'s last applied commit, which is newer than this commit ${s.commits.c1.slice(0, 12)}; nothing sent`,
      );
      expect(patches(await requestLog(emulator!)).length - before).toBe(0);
      expect((await holder.readRun(TENANT))?.lastAppliedCommit).toBe(s.commits.c2);
      await holder.close();
    },
  );
});

/** Until the run waits for the tenant's lock: it opened the lock file, or its PostgreSQL session tries the advisory lock. */
async function waitingForLock(run: Started, backend: 'file' | 'postgres'): Promise<void> {
  if (backend === 'file') return run.lookedAtLock;
  for (;;) {
    // Sessions whose last statement tried a tenant's lock: the holder's, which took it, and the run's.
    const { rows } = await server!.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%pg_try_advisory_lock(%'",
    );
    if ((rows[0] as { n: number }).n >= 2) return;
    await delay(50);
  }
}
