/**
 * The PostgreSQL store's shared runs (engine/state/postgres/shared-runs.ts) against a real server:
 * the first worker's run id wins, tenants come largest first, a claimed tenant is skipped by the
 * others, a claim ends with its session (another store takes the tenant over), and the history
 * entry is rewritten whole as tenants finish.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStateStore, type PostgresStateStore } from '../../engine/state/postgres/index.ts';
import type { SharedRunStart, SharedRuns } from '../../engine/state/shared-run.ts';
import type { AppliedContract } from '../../engine/state/types.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { sharedRunKey, runOccasion } from '../../engine/run/shared-run.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

let server: PostgresServer;
const opened: PostgresStateStore[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  for (const store of opened) await store.close();
  await server?.stop();
});

async function open(url: string, options: { readonly sharedWaitMs?: number } = {}): Promise<{ store: PostgresStateStore; runs: SharedRuns }> {
  const store = await openPostgresStateStore({ url, ...options });
  opened.push(store);
  return { store, runs: store.sharedRuns! };
}

function applied(contractId: string, runId?: string): AppliedContract {
  const fields = { Name: `contract ${contractId}` };
  return {
    contractId,
    fields,
    fingerprint: fingerprint(fields),
    appliedAt: '2027-01-01T00:00:00.000Z',
    commit: null,
    ...(runId === undefined ? {} : { runId }),
  };
}

function start(runId: string, tenants: Record<string, number>, files: Record<string, string[]> = {}): SharedRunStart {
  return {
    key: 'run-key-1',
    command: 'apply',
    commit: 'c'.repeat(40),
    runId,
    startedAt: '2027-01-01T00:00:00.000Z',
    startedBy: {},
    tenants: Object.entries(tenants).map(([tenant, size]) => ({ tenant, size, ...(files[tenant] ? { files: files[tenant] } : {}) })),
  };
}

describe('PostgreSQL shared runs', () => {
  it('joins one run, hands out tenants largest first, never one tenant to two claims, and writes the history once', async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    const b = await open(url);

    const joinedA = await a.runs.join(start('run-a', { small: 1, big: 9, mid: 5 }));
    const joinedB = await b.runs.join(start('run-b', { small: 1, big: 9, mid: 5 }));
    expect(joinedA).toEqual({ runId: 'run-a', startedAt: '2027-01-01T00:00:00.000Z', tenants: 3, done: 0 });
    expect(joinedB.runId).toBe('run-a');

    const first = await a.runs.next('run-key-1', 'A');
    const second = await b.runs.next('run-key-1', 'B');
    const third = await b.runs.next('run-key-1', 'B', 1);
    const none = await a.runs.next('run-key-1', 'A', 1);
    expect([first, second, third].map((next) => (next.kind === 'claimed' ? next.claim.tenant : next.kind))).toEqual(['big', 'mid', 'small']);
    expect(none).toEqual({ kind: 'wait', open: 3 });

    for (const [next, applied] of [
      [first, 9],
      [second, 5],
      [third, 1],
    ] as const) {
      if (next.kind === 'claimed') await next.claim.finish({ changed: applied, applied, failed: 0 });
    }

    expect(await a.runs.next('run-key-1', 'A')).toEqual({ kind: 'finished' });
    const history = await a.store.readHistory();
    expect(history).toHaveLength(1);
    expect(history[0]!.runId).toBe('run-a');
    expect(history[0]!.tenants).toEqual([
      { tenant: 'big', changed: 9, applied: 9, failed: 0, worker: 'A' },
      { tenant: 'mid', changed: 5, applied: 5, failed: 0, worker: 'B' },
      { tenant: 'small', changed: 1, applied: 1, failed: 0, worker: 'B' },
    ]);
  });

  it('frees a claim when its session ends: another worker takes the tenant over and is told from whom', async () => {
    const url = await server.createDatabase();
    const dying = await open(url);
    const rescuer = await open(url);
    await dying.runs.join(start('run-a', { only: 3 }));
    await rescuer.runs.join(start('run-b', { only: 3 }));
    const taken = await dying.runs.next('run-key-1', 'dying');
    expect(taken.kind).toBe('claimed');
    expect(await rescuer.runs.next('run-key-1', 'rescuer')).toEqual({ kind: 'wait', open: 1 });

    // The session ends (as when the process is killed): the server rolls back its transaction.
    await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction'", new URL(url).pathname.slice(1));
    let next = await rescuer.runs.next('run-key-1', 'rescuer');
    for (let tries = 0; next.kind === 'wait' && tries < 50; tries += 1) next = await rescuer.runs.next('run-key-1', 'rescuer');

    expect(next.kind).toBe('claimed');
    if (next.kind !== 'claimed') return;
    expect(next.claim.tenant).toBe('only');
    expect(next.claim.takenOverFrom).toEqual(['dying']);
    await next.claim.finish({ changed: 3, applied: 3, failed: 0 });
    expect((await rescuer.store.readHistory())[0]!.tenants).toEqual([
      { tenant: 'only', changed: 3, applied: 3, failed: 0, worker: 'rescuer', takenOverFrom: ['dying'] },
    ]);
  });

  it("counts in the run's history what every worker recorded as applied in the run, once per contract, whoever finished the tenant", async () => {
    const url = await server.createDatabase();
    const dying = await open(url);
    const rescuer = await open(url);
    await dying.runs.join(start('run-a', { only: 6 }));
    const taken = await dying.runs.next('run-key-1', 'dying');
    expect(taken.kind).toBe('claimed');
    await dying.store.writeContract('only', applied('c1', 'run-a'));
    await dying.store.writeContract('only', applied('c2', 'run-a'));
    // Recorded again in the same run (a resend): one contract changed, counted once.
    await dying.store.writeContract('only', applied('c2', 'run-a'));
    // Recorded without applying (a live read found it unchanged), and by a run that is no shared run: not this run's count.
    await dying.store.writeContract('only', applied('c3'));
    await dying.store.writeContract('only', applied('c4', 'a-plain-run'));

    // The worker dies with its claim: the rescuer takes the tenant over and applies the rest under the tenant's lock.
    await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction'", new URL(url).pathname.slice(1));
    let next = await rescuer.runs.next('run-key-1', 'rescuer');
    for (let tries = 0; next.kind === 'wait' && tries < 50; tries += 1) next = await rescuer.runs.next('run-key-1', 'rescuer');
    if (next.kind !== 'claimed') throw new Error(`not taken over: ${next.kind}`);
    const lock = await rescuer.store.lock('only', { timeoutMs: 5000, owner: 'run-a' });
    await rescuer.store.writeContract('only', applied('c5', 'run-a'), { lock });
    await lock.release();
    // Its own pass applied c5 and left one contract unknown.
    expect(await next.claim.finish({ changed: 2, applied: 1, failed: 1, unknown: 1 })).toBe('done');

    expect((await rescuer.store.readHistory())[0]!.tenants).toEqual([
      { tenant: 'only', changed: 4, applied: 3, failed: 1, unknown: 1, worker: 'rescuer', takenOverFrom: ['dying'] },
    ]);
    expect((await rescuer.store.listRecords('only')).map((record) => record.contractId)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
  });

  it('a claim session terminated while it waits on tenants other workers hold: the lane asks again on a new session', async () => {
    const url = await server.createDatabase();
    const holder = await open(url);
    const waiter = await open(url, { sharedWaitMs: 3000 });
    await holder.runs.join(start('run-a', { only: 1 }));
    const held = await holder.runs.next('run-key-1', 'holder');
    expect(held.kind).toBe('claimed');
    const database = new URL(url).pathname.slice(1);

    const waiting = waiter.runs.next('run-key-1', 'waiter');
    let cut = 0;
    while (cut === 0) {
      const { rows } = await server.query(
        `SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE' AND query NOT LIKE '%SKIP LOCKED%') AS cut`,
        database,
      );
      cut = (rows[0] as { n: number }).n;
    }

    expect(await waiting).toEqual({ kind: 'wait', open: 1 });
    if (held.kind === 'claimed') await held.claim.abandon();
  });

  it("says a claim whose session was cut while its worker lives is lost: the tenant goes to another worker, is listed once, and the worker's next claim opens a new session", async () => {
    const url = await server.createDatabase();
    const cut = await open(url);
    const rescuer = await open(url);
    await cut.runs.join(start('run-a', { first: 3, second: 1 }));
    const taken = await cut.runs.next('run-key-1', 'cut');
    expect(taken.kind === 'claimed' && taken.claim.tenant).toBe('first');
    if (taken.kind !== 'claimed') return;

    // The claim session alone is cut (a network fault): the worker goes on with the tenant.
    const database = new URL(url).pathname.slice(1);
    const { rows } = await server.query(
      "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction') AS cut",
      database,
    );
    expect(rows[0]).toEqual({ n: 1 });
    // Until the server has ended the session and its row lock: 'second' is given back meanwhile.
    let next = await rescuer.runs.next('run-key-1', 'rescuer');
    for (let tries = 0; !(next.kind === 'claimed' && next.claim.tenant === 'first') && tries < 50; tries += 1) {
      if (next.kind === 'claimed') await next.claim.abandon();
      next = await rescuer.runs.next('run-key-1', 'rescuer');
    }
    expect(next.kind === 'claimed' && [next.claim.tenant, next.claim.takenOverFrom]).toEqual(['first', ['cut']]);

    expect(await taken.claim.finish({ changed: 3, applied: 3, failed: 0 })).toBe('lost');
    if (next.kind === 'claimed') expect(await next.claim.finish({ changed: 3, applied: 0, failed: 0 })).toBe('done');
    // The cut worker's next claim, on a new session.
    const again = await cut.runs.next('run-key-1', 'cut');
    expect(again.kind === 'claimed' && again.claim.tenant).toBe('second');
    if (again.kind === 'claimed') expect(await again.claim.finish({ changed: 1, applied: 1, failed: 0 })).toBe('done');
    expect(await cut.runs.next('run-key-1', 'cut')).toEqual({ kind: 'finished' });
    const history = await cut.store.readHistory();
    expect(history.map((entry) => entry.tenants.map((tenant) => [tenant.tenant, tenant.worker]))).toEqual([
      [
        ['first', 'rescuer'],
        ['second', 'cut'],
      ],
    ]);
  });

  it('gives an abandoned tenant to the next worker, not done', async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    await a.runs.join(start('run-a', { only: 1 }));
    const taken = await a.runs.next('run-key-1', 'A');
    if (taken.kind === 'claimed') await taken.claim.abandon();

    const again = await a.runs.next('run-key-1', 'A');

    expect(again.kind === 'claimed' && again.claim.takenOverFrom).toEqual(['A']);
  });
});

async function sessions(url: string): Promise<number> {
  const { rows } = await server.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${new URL(url).pathname.slice(1)}'`);
  return rows[0].n;
}

describe('PostgreSQL shared runs: beginning a run once', () => {
  it('of two workers that start together, one validates and begins the run while the other waits, then finds it begun', { timeout: 30_000 }, async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    const b = await open(url);
    const began: string[] = [];
    let validated!: () => void;
    const validating = new Promise<void>((resolve) => (validated = resolve));
    const first = a.runs.beginOnce('run-key-1', async () => {
      began.push('a');
      await validating;
      return a.runs.join(start('run-a', { only: 1 }));
    });
    while (began.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));

    const second = b.runs.beginOnce('run-key-1', async () => {
      began.push('b');
      return b.runs.join(start('run-b', { only: 1 }));
    });
    await someoneWaits(url);
    validated();

    expect((await first)?.runId).toBe('run-a');
    expect(await second).toBeUndefined();
    expect(began).toEqual(['a']);
  });

  it('leaves the run to the next worker when the first did not begin it (an invalid desired state, a failure), its lock freed', async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    const b = await open(url);
    expect(await a.runs.beginOnce('run-key-1', async () => 'invalid desired state')).toBe('invalid desired state');
    const failure = new Error('cannot read contracts/acme.yaml');
    await expect(a.runs.beginOnce('run-key-1', () => Promise.reject(failure))).rejects.toBe(failure);

    expect((await b.runs.beginOnce('run-key-1', () => b.runs.join(start('run-b', { only: 1 }))))?.runId).toBe('run-b');
    expect(await a.runs.beginOnce('run-key-1', async () => 'not called')).toBeUndefined();
  });

  it("opens a worker's claim sessions and lock session ahead of its first claim, which then uses them", async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    await a.runs.join(start('run-a', { big: 3, mid: 2, small: 1 }));
    const before = await sessions(url);

    await a.runs.prepare(3);
    expect((await sessions(url)) - before).toBe(4);
    const claims = await Promise.all([0, 1, 2].map((lane) => a.runs.next('run-key-1', 'A', lane)));
    expect(claims.map((next) => next.kind === 'claimed' && next.claim.tenant).sort()).toEqual(['big', 'mid', 'small']);
    const claimed = await sessions(url);
    const lock = await a.store.lock('big', { timeoutMs: 1000, owner: 'run-a' });
    expect(await sessions(url)).toBe(claimed);
    await lock.release();
  });
});

/** Until some session of the database waits for a lock (a worker waiting on another's claim or beginning). */
async function someoneWaits(url: string): Promise<void> {
  const database = new URL(url).pathname.slice(1);
  for (let tries = 0; tries < 200; tries += 1) {
    const { rows } = await server.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${database}' AND wait_event_type = 'Lock'`);
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no session waited for a lock');
}

describe('PostgreSQL shared runs: waiting for other workers', () => {
  it('a worker with nothing left to take sees the run end the moment the last held tenant is finished', { timeout: 30_000 }, async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    // It would wait a minute before answering `wait`: an answer now is the finish waking it.
    const b = await open(url, { sharedWaitMs: 60_000 });
    await a.runs.join(start('run-a', { only: 1 }));
    const taken = await a.runs.next('run-key-1', 'A');
    if (taken.kind !== 'claimed') throw new Error(taken.kind);

    const waiting = b.runs.next('run-key-1', 'B');
    await someoneWaits(url);
    await taken.claim.finish({ changed: 1, applied: 1, failed: 0 });

    expect(await waiting).toEqual({ kind: 'finished' });
  });

  it('takes a held tenant over the moment its worker dies', { timeout: 30_000 }, async () => {
    const url = await server.createDatabase();
    const dying = await open(url);
    const waiter = await open(url, { sharedWaitMs: 60_000 });
    await dying.runs.join(start('run-a', { only: 2 }));
    expect((await dying.runs.next('run-key-1', 'dying')).kind).toBe('claimed');

    const waiting = waiter.runs.next('run-key-1', 'waiter');
    await someoneWaits(url);
    await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction'", new URL(url).pathname.slice(1));

    const next = await waiting;
    expect(next.kind === 'claimed' && [next.claim.tenant, next.claim.takenOverFrom]).toEqual(['only', ['dying']]);
  });

  it('says a run is begun once a worker has joined it, and hands each tenant out with the files the first worker found', async () => {
    const url = await server.createDatabase();
    const a = await open(url);
    const b = await open(url);
    expect(await b.runs.begun('run-key-1')).toBe(false);
    await a.runs.join(start('run-a', { big: 5, small: 1 }, { big: ['contracts/big-1.yaml', 'contracts/big-2.yaml'], small: ['contracts/small.yaml'] }));

    expect(await b.runs.begun('run-key-1')).toBe(true);
    // A worker joining a begun run brings no tenants of its own: the run's stay.
    expect(await b.runs.join({ ...start('run-b', {}), key: 'run-key-1' })).toMatchObject({ runId: 'run-a', tenants: 2, done: 0 });
    const big = await b.runs.next('run-key-1', 'B', 0);
    const small = await b.runs.next('run-key-1', 'B', 1);
    expect([big, small].map((next) => next.kind === 'claimed' && [next.claim.tenant, next.claim.files])).toEqual([
      ['big', ['contracts/big-1.yaml', 'contracts/big-2.yaml']],
      ['small', ['contracts/small.yaml']],
    ]);
  });
});

describe('the shared run key', () => {
  const base = {
    command: 'apply' as const,
    commit: 'a'.repeat(40),
    tenants: ['acme', 'globex'],
    selection: {},
    options: { scope: 'incremental' },
    env: {},
    validatedWith: 'v1',
  };

  it('is the same for the same run, whatever the order of tenants or options', () => {
    expect(sharedRunKey(base)).toBe(sharedRunKey({ ...base, tenants: ['globex', 'acme'], options: { scope: 'incremental' } }));
  });

  it('differs for another commit, command, selection, option, CI run, or config or contract-sync version', () => {
    const keys = [
      sharedRunKey(base),
      sharedRunKey({ ...base, commit: 'b'.repeat(40) }),
      sharedRunKey({ ...base, command: 'drift --fix' }),
      sharedRunKey({ ...base, tenants: ['acme'] }),
      sharedRunKey({ ...base, options: { scope: 'every-contract' } }),
      sharedRunKey({ ...base, env: { GITHUB_RUN_ID: '7' } }),
      sharedRunKey({ ...base, env: { GITHUB_RUN_ID: '7', GITHUB_RUN_ATTEMPT: '2' } }),
      sharedRunKey({ ...base, env: { CI_PIPELINE_ID: '7' } }),
      sharedRunKey({ ...base, env: { CONTRACT_SYNC_RUN: 'nightly-1' } }),
      sharedRunKey({ ...base, validatedWith: 'v2' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('names the occasion from CONTRACT_SYNC_RUN first, then GitHub, then GitLab', () => {
    expect(runOccasion({ CONTRACT_SYNC_RUN: 'x', GITHUB_RUN_ID: '1' })).toBe('named:x');
    expect(runOccasion({ GITHUB_RUN_ID: '1' })).toBe('github:1:1');
    expect(runOccasion({ CI_PIPELINE_ID: '9' })).toBe('gitlab:9');
    expect(runOccasion({})).toBe('');
  });
});
