/**
 * What only the PostgreSQL backend has: its versioned tables, migrated at first use and safely by
 * concurrent first runs; refusing a newer schema; a one-line error for each way the database can
 * be out of reach; and a lock freed when its holder's connection is dropped. Against a real server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LockLostError } from '../../engine/state/index.ts';
import { openPostgresStateStore, PostgresStateError, SCHEMA_VERSION, type PostgresStateStore } from '../../engine/state/postgres/index.ts';
import { closedPort } from '../helpers/closed-port.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

let server: PostgresServer;
const opened: PostgresStateStore[] = [];

beforeAll(async () => {
  server = await startPostgres();
  await server.query("CREATE ROLE app_user LOGIN PASSWORD 'right-pass-4f9c'");
}, 60_000);

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

afterAll(async () => {
  await server?.stop();
});

async function open(url: string, schema?: string): Promise<PostgresStateStore> {
  const store = await openPostgresStateStore({ url, ...(schema === undefined ? {} : { schema }) });
  opened.push(store);
  return store;
}

function databaseOf(url: string): string {
  return new URL(url).pathname.slice(1);
}

describe('postgres state store: its tables', () => {
  it('creates its schema and tables at first use, at the version this binary knows', async () => {
    const url = await server.createDatabase();

    await open(url);
    const tables = await server.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'contract_sync' ORDER BY table_name",
      databaseOf(url),
    );
    const version = await server.query('SELECT version FROM contract_sync.schema_version', databaseOf(url));

    expect(tables.rows.map((row) => row.table_name)).toEqual([
      'contracts',
      'drift_notified',
      'lock_fences',
      'locks',
      'run_history',
      'schema_version',
      'shared_run_applied',
      'shared_run_claims',
      'shared_run_tenants',
      'shared_runs',
      'tenant_runs',
    ]);
    expect(version.rows).toEqual([{ version: SCHEMA_VERSION }]);
  });

  it('lets concurrent first runs create the tables once, each of them then working', async () => {
    const url = await server.createDatabase();

    const stores = await Promise.all(Array.from({ length: 6 }, () => open(url)));
    await Promise.all(
      stores.map((store, index) =>
        store.writeContract('acme', {
          contractId: `C-${index}`,
          fields: { Name: `n${index}` },
          fingerprint: 'sha256:x',
          appliedAt: '2027-01-01T00:00:00.000Z',
          commit: null,
        }),
      ),
    );

    expect((await server.query('SELECT version FROM contract_sync.schema_version', databaseOf(url))).rows).toEqual([{ version: SCHEMA_VERSION }]);
    expect((await stores[0]!.readTenant('acme')).size).toBe(6);
  });

  it('keeps its tables in the schema the config names', async () => {
    const url = await server.createDatabase();

    const store = await open(url, 'cs_state');
    await store.writeRun('acme', { lastAppliedCommit: null, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' });

    expect((await server.query('SELECT tenant FROM cs_state.tenant_runs', databaseOf(url))).rows).toEqual([{ tenant: 'acme' }]);
    expect((await server.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = 'contract_sync'", databaseOf(url))).rows).toEqual([]);
  });

  it('migrates tables of version 1 (before fencing) to the current version, keeping their records, and fences their tenants from then on', async () => {
    const url = await server.createDatabase();
    const first = await openPostgresStateStore({ url });
    await first.writeContract('acme', {
      contractId: 'C-1',
      fields: { Name: 'kept' },
      fingerprint: 'sha256:x',
      appliedAt: '2027-01-01T00:00:00.000Z',
      commit: null,
    });
    await first.close();
    // What a version-1 database looks like: no lock_fences, version 1.
    await server.query(
      'DROP TABLE contract_sync.drift_notified, contract_sync.lock_fences, contract_sync.shared_run_applied, contract_sync.shared_run_claims, contract_sync.shared_run_tenants, contract_sync.shared_runs; UPDATE contract_sync.schema_version SET version = 1',
      databaseOf(url),
    );

    const store = await open(url);
    const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await store.writeContract(
      'acme',
      { contractId: 'C-2', fields: { Name: 'fenced' }, fingerprint: 'sha256:y', appliedAt: '2027-01-01T00:00:00.000Z', commit: null },
      { lock },
    );
    await lock.release();

    expect((await server.query('SELECT version FROM contract_sync.schema_version', databaseOf(url))).rows).toEqual([{ version: SCHEMA_VERSION }]);
    expect((await server.query('SELECT tenant, generation::int AS generation FROM contract_sync.lock_fences', databaseOf(url))).rows).toEqual([
      { tenant: 'acme', generation: 1 },
    ]);
    expect([...(await store.readTenant('acme')).keys()].sort()).toEqual(['C-1', 'C-2']);
  });

  it('refuses a database whose tables a newer contract-sync wrote', async () => {
    const url = await server.createDatabase();
    await (await openPostgresStateStore({ url })).close();
    await server.query(`UPDATE contract_sync.schema_version SET version = ${SCHEMA_VERSION + 1}`, databaseOf(url));

    const error = await openPostgresStateStore({ url }).catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(PostgresStateError);
    expect((error as Error).message).toBe(
      `the state schema "contract_sync" is at version ${SCHEMA_VERSION + 1}, newer than this contract-sync knows (${SCHEMA_VERSION}); upgrade contract-sync (a newer one has written this state)`,
    );
  });
});

describe('postgres state store: a database out of reach, in one line without the URL', () => {
  it.each([
    [
      'an unreachable server',
      async () => `postgresql://app_user:right-pass-4f9c@127.0.0.1:${await closedPort()}/postgres`,
      /^cannot open the PostgreSQL state store \(127\.0\.0\.1:\d+, database "postgres"\): connection refused \(is the server running and listening there\?\)$/,
    ],
    [
      'a wrong password',
      async () => `postgresql://app_user:wrong-pass-7b1e@127.0.0.1:${server.port}/postgres`,
      /^cannot open the PostgreSQL state store \(127\.0\.0\.1:\d+, database "postgres"\): authentication failed \(check the user and password in the state URL\)$/,
    ],
    ['a database that does not exist', async () => `postgresql://postgres@127.0.0.1:${server.port}/no_such_db`, /: the database does not exist$/],
    [
      'a URL without a database',
      async () => `postgresql://app_user:right-pass-4f9c@127.0.0.1:${server.port}`,
      /^the state URL names no database \(expected postgresql:\/\/USER:PASSWORD@HOST:PORT\/DATABASE\)$/,
    ],
    [
      'a URL of another scheme',
      async () => `mysql://app_user:right-pass-4f9c@127.0.0.1:${server.port}/db`,
      /^the state URL must start with postgresql:\/\/ \(or postgres:\/\/\), not mysql:\/\/$/,
    ],
    ['no URL at all', async () => 'right-pass-4f9c', /^the state URL is not a valid URL/],
    [
      'a user who may not create the schema',
      async () => {
        const url = await server.createDatabase();
        return url.replace('postgres@', 'app_user:right-pass-4f9c@');
      },
      /: permission denied for schema "contract_sync" \(the user needs CREATE on the database/,
    ],
  ])('%s', async (_, urlOf, expected) => {
    const url = await urlOf();

    const error = await openPostgresStateStore({ url, connectTimeoutMs: 5000 }).catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(PostgresStateError);
    const message = (error as Error).message;
    expect(message).toMatch(expected);
    expect(message).not.toContain('pass-');
    expect(message).not.toContain('\n');
  });
});

describe('postgres state store: locks', () => {
  it("frees a tenant at once when its holder's connection is dropped", async () => {
    const url = await server.createDatabase();
    const holder = await open(url);
    const waiter = await open(url);
    await holder.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    const { rows } = await server.query("SELECT backend_pid FROM contract_sync.locks WHERE tenant = 'acme'", databaseOf(url));

    await server.query(`SELECT pg_terminate_backend(${Number(rows[0].backend_pid)})`);
    const lock = await waiter.lock('acme', { timeoutMs: 3000, owner: 'run-2' });

    expect(lock.tenant).toBe('acme');
    await lock.release();
  });

  it('records who holds a tenant while it is held, and forgets it on release', async () => {
    const url = await server.createDatabase();
    const store = await open(url);

    const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    const held = await server.query('SELECT tenant, owner, pid FROM contract_sync.locks', databaseOf(url));
    await lock.release();
    const after = await server.query('SELECT tenant FROM contract_sync.locks', databaseOf(url));

    expect(held.rows).toEqual([{ tenant: 'acme', owner: 'run-1', pid: process.pid }]);
    expect(after.rows).toEqual([]);
  });

  it('releases every lock still held when the store is closed', async () => {
    const url = await server.createDatabase();
    const first = await openPostgresStateStore({ url });
    const second = await open(url);
    await first.lock('acme', { timeoutMs: 0, owner: 'run-1' });

    await first.close();

    await (await second.lock('acme', { timeoutMs: 3000, owner: 'run-2' })).release();
  });
});

describe('postgres state store: a lock holder whose server restarted', () => {
  it(
    'fires the lock lost signal when the server stops, and refuses the holder writes after the restart though nobody took the tenant',
    { timeout: 60_000 },
    async () => {
      const url = await server.createDatabase();
      // The helper's server trades durability for speed (synchronous_commit=off): what it acknowledged
      // just before the immediate stop could be lost, which is not what this test is about.
      await server.query(`ALTER DATABASE ${databaseOf(url)} SET synchronous_commit = on`);
      const store = await openPostgresStateStore({ url, connectTimeoutMs: 2000 });
      opened.push(store);
      const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
      const applied = { contractId: 'C-1', fields: { Name: 'before' }, fingerprint: 'sha256:x', appliedAt: '2027-01-01T00:00:00.000Z', commit: null };
      await store.writeContract('acme', applied, { lock });

      await server.halt();
      // The lock's session sees its server go (however slowly the machine tells it); 5 s at most.
      for (const deadline = Date.now() + 5000; !lock.lost.aborted && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
      const lostWhileDown = lock.lost.aborted;
      await server.restart();
      // The pool reconnects: the write reaches the server, which refuses it (the advisory lock is gone).
      const late = await store.writeContract('acme', { ...applied, fields: { Name: 'late' } }, { lock }).catch((error: unknown) => error);
      const lateRun = await store
        .writeRun('acme', { lastAppliedCommit: null, pending: [], updatedAt: 'x' }, { lock, lastAppliedCommit: null })
        .catch((error: unknown) => error);

      expect(lostWhileDown).toBe(true);
      expect((lock.lost.reason as Error).message).toBe(
        'lost the lock of tenant acme: the connection holding its PostgreSQL advisory lock ended; nothing more is sent or recorded for it by this run',
      );
      expect(late).toBeInstanceOf(LockLostError);
      expect((late as Error).message).toMatch(/^lost the lock of tenant acme: the PostgreSQL session that held its advisory lock ended;/);
      expect(lateRun).toBeInstanceOf(LockLostError);
      expect((await store.readRecord('acme', 'C-1'))?.fields).toEqual({ Name: 'before' });
      expect(await store.readRun('acme')).toBeUndefined();
      await lock.release();
      // A new lock of the same store works again.
      const next = await store.lock('acme', { timeoutMs: 3000, owner: 'run-2' });
      await store.writeContract('acme', { ...applied, fields: { Name: 'after' } }, { lock: next });
      await next.release();
      expect((await store.readRecord('acme', 'C-1'))?.fields).toEqual({ Name: 'after' });
    },
  );
});

describe('postgres state store: a lock session whose server went silent', () => {
  it(
    'fires the lock lost signal once the lock session stops answering its probe, and the tenant goes to the next run once the session ends',
    { timeout: 30_000 },
    async () => {
      const url = await server.createDatabase();
      const store = await openPostgresStateStore({ url, lockProbeIntervalMs: 100, lockProbeTimeoutMs: 400 });
      opened.push(store);
      const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
      const backend = Number((await server.query("SELECT backend_pid FROM contract_sync.locks WHERE tenant = 'acme'", databaseOf(url))).rows[0].backend_pid);
      const healthy = await new Promise((resolve) => setTimeout(() => resolve(lock.lost.aborted), 500));

      // The backend holding the lock stops answering (as a server or network gone silent would), its socket still open.
      process.kill(backend, 'SIGSTOP');
      const stoppedAt = performance.now();
      let lostAfter: number;
      try {
        await new Promise<void>((resolve) => lock.lost.addEventListener('abort', () => resolve(), { once: true }));
        lostAfter = performance.now() - stoppedAt;
      } finally {
        process.kill(backend, 'SIGCONT');
      }
      const next = await open(url);
      const taken = await next.lock('acme', { timeoutMs: 5000, owner: 'run-2' });
      const late = await store
        .writeContract('acme', { contractId: 'C-1', fields: { Name: 'late' }, fingerprint: 'sha256:x', appliedAt: 'x', commit: null }, { lock })
        .catch((error: unknown) => error);

      expect(healthy).toBe(false);
      expect(lostAfter).toBeLessThan(2000);
      expect((lock.lost.reason as Error).message).toMatch(/^lost the lock of tenant acme: the connection holding its PostgreSQL advisory lock ended;/);
      expect(late).toBeInstanceOf(LockLostError);
      expect(await store.readRecord('acme', 'C-1')).toBeUndefined();
      await taken.release();
      await lock.release();
    },
  );
});
