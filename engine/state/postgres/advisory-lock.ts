/**
 * Per-tenant locks across machines: PostgreSQL session-level advisory locks
 * (`pg_try_advisory_lock(hashtextextended('<schema>:<tenant>', 0))`), held on one dedicated
 * connection of the store for as long as any lock is held.
 *
 * Why advisory locks rather than lease rows: the server frees a session's advisory locks the moment
 * the session ends, so a holder that is killed, loses its runner or its connection releases its
 * locks within seconds (at once for a closed socket; within the TCP keepalive set below for a
 * machine that vanished), with no lease length to choose and no heartbeat to keep. The `locks`
 * table only says who holds a tenant, for a waiter's message; it never decides anything.
 *
 * Fencing: each acquisition raises the tenant's generation in `lock_fences` (in the lock session,
 * once the advisory lock is held) and the handle's `fence` is that generation. A holder's write
 * (store.ts) carries it and the lock session's backend pid, and is made only while the row still
 * has that generation (read FOR SHARE, so that a new holder's raise waits for a write under way)
 * and that backend still holds the advisory lock: a run whose session ended, or whose tenant another
 * run took since, writes nothing. The session ending fires the handles' `lost` signals at once.
 *
 * Session advisory locks are reentrant within a session, so two lock() calls of one store for one
 * tenant are kept apart here (`held`). Behind a transaction-mode pooler (PgBouncer
 * pool_mode=transaction) a session is not kept between transactions and these locks do not work:
 * the state URL must reach PostgreSQL directly or through a session-mode pool.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import { lockTimeoutMessage } from '../lock-timeout-message.ts';
import { LockTimeoutError, type LockOptions, type TenantLock } from '../types.ts';
import { lossSignal, type LossSignal } from '../write-guard.ts';

export interface LockSessionDeps {
  /** A new connection, used only for locks. */
  connect(): Promise<pg.Client>;
  /** Runs a query on the store's pool (reading a holder). */
  query<R extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<R>>;
  readonly schema: string;
  /** The quoted schema name. */
  readonly s: string;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /**
   * While a lock is held, the lock session is asked `SELECT 1` this often; an answer that takes
   * longer than `probeTimeoutMs` (a server or network that went silent, where no FIN or RST comes)
   * ends the session and fires its locks' `lost` signals. Both together stay below the ~25 s in
   * which the server drops a silent session and frees its locks (tcp_keepalives_* below), so that
   * the holder stops before another run can take its tenants. Defaults 5 s and 10 s.
   */
  readonly probeIntervalMs?: number;
  readonly probeTimeoutMs?: number;
}

/** What a write of a lock holder is checked against (see the file header). */
export interface LockFence {
  readonly generation: string;
  /** The backend pid of the session holding the advisory lock. */
  readonly backendPid: number;
  readonly loss: LossSignal;
}

export interface LockManager {
  lock(tenant: string, options: LockOptions): Promise<TenantLock>;
  /** Opens the lock session ahead of the first lock. */
  open(): Promise<void>;
  /** The fence of a lock this manager handed out; undefined for any other object. */
  fenceOf(lock: TenantLock): LockFence | undefined;
  /** Ends the lock session: every lock still held is released by the server. */
  close(): Promise<void>;
}

// Polling a held lock: quickly at first, then at most once a second.
const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1000;

interface HolderRow {
  owner: string;
  pid: number;
  host: string;
  since: Date;
}

/** True for the error of a query on a session the server ended (57P01: terminated by an administrator) or that broke. */
function isSessionGone(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '57P01' || (typeof message === 'string' && /Connection terminated|not queryable/i.test(message));
}

/** The text whose hash is the tenant's advisory lock key. */
export function lockKeyOf(schema: string, tenant: string): string {
  return `${schema}:${tenant}`;
}

export function createLockManager(deps: LockSessionDeps): LockManager {
  const { s, schema, now, sleep } = deps;
  let session: Promise<pg.Client> | undefined;
  // Tenants this store holds or is taking; the server cannot tell them apart within one session.
  const held = new Set<string>();
  const fences = new WeakMap<TenantLock, LockFence>();
  // The lost signals of the locks the current session holds, by tenant.
  let holding = new Map<string, LossSignal>();
  let backendPid = 0;

  function lockSession(): Promise<pg.Client> {
    session ??= (async () => {
      const client = await deps.connect();
      const ours = new Map<string, LossSignal>();
      holding = ours;
      let gone = false;
      function sessionGone(): void {
        // The connection broke: its locks are gone with it, and so may the tenants be (another run
        // may take them at once). The next lock() opens a new one.
        if (gone) return;
        gone = true;
        if (holding === ours) {
          session = undefined;
          held.clear();
          // A query of this session that never ends (a silent server) must not hold up the next session's.
          chain = Promise.resolve();
        }
        for (const loss of ours.values()) loss.lose('the connection holding its PostgreSQL advisory lock ended');
        ours.clear();
      }
      client.on('error', sessionGone);
      client.on('end', sessionGone);
      const probe = setInterval(() => {
        if (gone) {
          clearInterval(probe);
          return;
        }
        if (ours.size === 0) return;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const silent = new Promise<'silent'>((resolve) => {
          timer = setTimeout(() => resolve('silent'), deps.probeTimeoutMs ?? 10_000);
        });
        void Promise.race([serially(() => client.query('SELECT 1')).then(() => 'answered' as const), silent])
          .catch(() => 'failed' as const)
          .then((outcome) => {
            clearTimeout(timer);
            if (outcome === 'answered' || gone) return;
            sessionGone();
            clearInterval(probe);
            // A silent server would never answer a goodbye: the socket is closed here and now.
            client.connection.stream.destroy();
          });
      }, deps.probeIntervalMs ?? 5000);
      // The probe alone must not keep a process alive that has nothing else to do.
      probe.unref();
      client.on('end', () => clearInterval(probe));
      // A holder whose machine vanishes (no FIN) is noticed by the server within ~25 s.
      await client.query('SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3');
      backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      return client;
    })().catch((error: unknown) => {
      session = undefined;
      throw error;
    });
    return session;
  }

  // One connection runs one query at a time: the tenants of a run take and release their locks
  // concurrently, so their queries on the lock session are chained.
  let chain: Promise<unknown> = Promise.resolve();
  function serially<T>(work: () => Promise<T>): Promise<T> {
    const run = chain.then(work);
    chain = run.catch(() => undefined);
    return run;
  }

  function keyOf(tenant: string): string {
    return lockKeyOf(schema, tenant);
  }

  /** The generation of the lock just taken, or undefined when another session holds the tenant. */
  async function tryTake(tenant: string, owner: string): Promise<{ generation: string; backendPid: number } | undefined> {
    if (held.has(tenant)) return undefined;
    held.add(tenant);
    try {
      return await serially(async () => {
        const client = await lockSession();
        // One statement, one round trip: the lock session is shared by the run's tenants, whose
        // locks are taken one after another on it. The holder and the new generation are written
        // only when the advisory lock was taken (a materialised CTE is evaluated once).
        const result = await client.query<{ ok: boolean; generation: string | null }>(
          `WITH taken AS MATERIALIZED (SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok),
           holder AS (
             INSERT INTO ${s}.locks (tenant, owner, pid, host, since, backend_pid) SELECT $2::text, $3::text, $4::integer, $5::text, now(), pg_backend_pid() FROM taken WHERE ok
             ON CONFLICT (tenant) DO UPDATE SET owner = EXCLUDED.owner, pid = EXCLUDED.pid, host = EXCLUDED.host, since = EXCLUDED.since, backend_pid = EXCLUDED.backend_pid
           ),
           fence AS (
             INSERT INTO ${s}.lock_fences (tenant, generation) SELECT $2::text, 1 FROM taken WHERE ok
             ON CONFLICT (tenant) DO UPDATE SET generation = ${s}.lock_fences.generation + 1 RETURNING generation::text AS generation
           )
           SELECT taken.ok, (SELECT generation FROM fence) AS generation FROM taken`,
          [keyOf(tenant), tenant, owner, process.pid, hostname()],
        );
        const row = result.rows[0];
        if (row?.ok !== true) {
          held.delete(tenant);
          return undefined;
        }
        if (row.generation === null) throw new Error(`the lock of tenant ${tenant} was taken without a fence generation`);
        return { generation: row.generation, backendPid };
      });
    } catch (error) {
      held.delete(tenant);
      throw error;
    }
  }

  async function holderOf(tenant: string): Promise<{ owner?: string; pid?: number; hostname?: string; acquiredAt?: string }> {
    const result = await deps.query<HolderRow>(`SELECT owner, pid, host, since FROM ${s}.locks WHERE tenant = $1`, [tenant]);
    const row = result.rows[0];
    return row === undefined ? {} : { owner: row.owner, pid: row.pid, hostname: row.host, acquiredAt: row.since.toISOString() };
  }

  function handle(tenant: string, client: Promise<pg.Client>, taken: { generation: string; backendPid: number }): TenantLock {
    let released: Promise<void> | undefined;
    const loss = lossSignal(tenant);
    holding.set(tenant, loss);
    const sessionHolding = holding;
    const lock: TenantLock = {
      tenant,
      lost: loss.signal,
      fence: taken.generation,
      release(): Promise<void> {
        released ??= (async () => {
          // A lock whose session broke is already free: nothing left to release.
          if (session !== client) return;
          try {
            await serially(async () => {
              const connection = await client;
              await connection.query(`DELETE FROM ${s}.locks WHERE tenant = $1 AND backend_pid = pg_backend_pid()`, [tenant]);
              await connection.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [keyOf(tenant)]);
            });
          } catch (error) {
            // The session was ended (`state unlock --force` terminates it): its locks went with it.
            if (!isSessionGone(error)) throw error;
            if (session === client) {
              session = undefined;
              held.clear();
            }
          } finally {
            held.delete(tenant);
            if (sessionHolding.get(tenant) === loss) sessionHolding.delete(tenant);
          }
        })();
        return released;
      },
    };
    fences.set(lock, { ...taken, loss });
    return lock;
  }

  return {
    async open(): Promise<void> {
      await lockSession();
    },

    async lock(tenant: string, options: LockOptions): Promise<TenantLock> {
      const started = now();
      let pause = FIRST_POLL_MS;
      for (;;) {
        const taken = await tryTake(tenant, options.owner);
        if (taken !== undefined) return handle(tenant, session!, taken);
        const waited = now() - started;
        if (waited >= options.timeoutMs) throw new LockTimeoutError(tenant, lockTimeoutMessage(tenant, await holderOf(tenant), waited));
        await sleep(Math.min(pause, options.timeoutMs - waited));
        pause = Math.min(pause * 2, MAX_POLL_MS);
      }
    },

    fenceOf(lock: TenantLock): LockFence | undefined {
      return fences.get(lock);
    },

    async close(): Promise<void> {
      const current = session;
      session = undefined;
      held.clear();
      if (current === undefined) return;
      const client = await current.catch(() => undefined);
      await client?.end().catch(() => undefined);
    },
  };
}
