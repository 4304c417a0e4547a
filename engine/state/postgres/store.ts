/**
 * Adapter: the PostgreSQL backend (`state: { backend: postgres, url: { env: NAME } }`), for state
 * shared by every machine that runs contract-sync (docs/architecture.md section 7). Tables:
 * schema.ts; locks: advisory-lock.ts.
 *
 * - Opening connects and brings the tables to this binary's version before anything else runs, so
 *   a command fails on a bad URL, credentials or permission before it sends anything to the CMS.
 * - Each write is one statement in its own transaction: writeContract resolves after COMMIT, so a
 *   record acknowledged to the engine survives a SIGKILL of the run at any moment.
 * - readTenant is one query per tenant.
 * - A lock holder's writes (WriteGuard) are fenced in the statement itself (advisory-lock.ts), and
 *   writeRun's compare-and-set reads the run record FOR UPDATE in the write's transaction.
 */
import pg from 'pg';
import { systemClock } from '../../io/clock.ts';
import { checkLockOptions } from '../lock-options.ts';
import { checkApplied, checkContractId, checkRunRecord, checkTenant } from '../store-input.ts';
import {
  LastAppliedChangedError,
  LockLostError,
  type AppliedContract,
  type HistoryQuery,
  type KnownContract,
  type KnownContracts,
  type LockOptions,
  type PendingContract,
  type StateStore,
  type StoredContract,
  type TenantLock,
  type TenantRunRecord,
  type WriteGuard,
  type DriftKeyChanges,
  type DriftKeys,
} from '../types.ts';
import { checkDriftKeyChanges } from '../drift-memory.ts';
import { checkHistoryEntry, checkHistoryQuery, selectHistory, type RunHistoryEntry } from '../history.ts';
import type { LockHolder } from '../lock-timeout-message.ts';
import { createLockManager, lockKeyOf, type LockManager } from './advisory-lock.ts';
import { describePostgresError, PostgresStateError, type PostgresTarget } from './errors.ts';
import { migrate, quoteIdentifier } from './schema.ts';
import { createSharedRuns, type SharedRunManager } from './shared-runs.ts';
import type { SharedRuns } from '../shared-run.ts';

export const DEFAULT_SCHEMA = 'contract_sync';

export interface PostgresStateStoreOptions {
  /** A postgres:// or postgresql:// URL naming a database. A secret: never in a message. */
  readonly url: string;
  readonly schema?: string;
  /** The clock, in epoch milliseconds: how long a lock was waited for. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** How long to wait for a connection (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** How often a held lock's session is probed, and how long an answer may take (advisory-lock.ts). */
  readonly lockProbeIntervalMs?: number;
  readonly lockProbeTimeoutMs?: number;
  /** How long a shared run's worker waits on tenants other workers hold before `next` answers `wait` (shared-runs.ts; default 1 s). */
  readonly sharedWaitMs?: number;
}

export interface PostgresStateStore extends StateStore {
  readonly schema: string;
}

/** Host, port and database of `url`, checked; the message names no part of the URL. */
export function postgresTargetOf(url: string, schema: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PostgresStateError('the state URL is not a valid URL (expected postgresql://USER:PASSWORD@HOST:PORT/DATABASE)');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new PostgresStateError(`the state URL must start with postgresql:// (or postgres://), not ${parsed.protocol}//`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (database === '') throw new PostgresStateError('the state URL names no database (expected postgresql://USER:PASSWORD@HOST:PORT/DATABASE)');
  const socketHost = parsed.searchParams.get('host');
  return { host: parsed.hostname === '' ? (socketHost ?? 'localhost') : parsed.hostname, port: parsed.port === '' ? '5432' : parsed.port, database, schema };
}

interface ContractRow {
  contract_id: string;
  fields: KnownContract['fields'];
}

interface RecordRow extends ContractRow {
  fingerprint: string;
  applied_at: string;
  commit: string | null;
}

interface HolderRow {
  backend_pid: number;
  owner: string | null;
  pid: number | null;
  host: string | null;
  since: Date | null;
}

function storedOf(row: RecordRow): StoredContract {
  return { contractId: row.contract_id, fields: row.fields, fingerprint: row.fingerprint, appliedAt: row.applied_at, commit: row.commit };
}

function holderOf(row: HolderRow): LockHolder {
  if (row.owner === null) return {};
  return {
    owner: row.owner,
    ...(row.pid === null ? {} : { pid: row.pid }),
    ...(row.host === null ? {} : { hostname: row.host }),
    ...(row.since === null ? {} : { acquiredAt: row.since.toISOString() }),
  };
}

// How long forceUnlock waits for a terminated session's locks to be freed.
const TERMINATE_WAIT_MS = 5000;

interface RunRow {
  last_applied_commit: string | null;
  planning_fingerprint: string | null;
  pending: PendingContract[];
  updated_at: string;
}

function sleepFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What the store's operations share: the pool, the schema, the locks, and how a failure is described. */
interface Store {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** The quoted schema name. */
  readonly s: string;
  readonly target: PostgresTarget;
  readonly locks: LockManager;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Connects, migrates the tables and returns the store; rejects with a one-line PostgresStateError. */
export async function openPostgresStateStore(options: PostgresStateStoreOptions): Promise<PostgresStateStore> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const target = postgresTargetOf(options.url, schema);
  const s = quoteIdentifier(schema);
  const now = options.now ?? systemClock.now;
  const sleep = options.sleep ?? sleepFor;
  const config: pg.ClientConfig = {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    application_name: 'contract-sync',
  };
  const pool = await openPool(config, schema, target);
  async function connect(): Promise<pg.Client> {
    // A session of its own (the locks', a shared run's claim): a server that vanished (no FIN, no
    // RST) is noticed within ~25 s, which for the lock session fires the locks' `lost` signals.
    const client = new pg.Client({ ...config, keepAliveInitialDelayMillis: 10_000 });
    await client.connect();
    return client;
  }
  function query<R extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return pool.query<R>(sql, values);
  }
  const locks = createLockManager({
    connect,
    query,
    schema,
    s,
    now,
    sleep,
    ...(options.lockProbeIntervalMs === undefined ? {} : { probeIntervalMs: options.lockProbeIntervalMs }),
    ...(options.lockProbeTimeoutMs === undefined ? {} : { probeTimeoutMs: options.lockProbeTimeoutMs }),
  });
  const shared = createSharedRuns({ connect, query, s, now, ...(options.sharedWaitMs === undefined ? {} : { waitForHeldMs: options.sharedWaitMs }) });
  const store: Store = { pool, schema, s, target, locks, now, sleep };
  let closed: Promise<void> | undefined;

  return {
    schema,
    sharedRuns: guardedSharedRuns(store, shared),
    readTenant: (tenant, only) => readTenant(store, tenant, only),
    writeContract: (tenant, applied, writeGuard) => writeContract(store, tenant, applied, writeGuard),
    readRun: (tenant) => readRun(store, tenant),
    writeRun: (tenant, record, writeGuard) => writeRun(store, tenant, record, writeGuard),
    lock: (tenant, lockOptions) => lock(store, tenant, lockOptions),
    listTenants: () => listTenants(store),
    listRecords: (tenant) => listRecords(store, tenant),
    readRecord: (tenant, contractId) => readRecord(store, tenant, contractId),
    removeRecord: (tenant, contractId) => removeRecord(store, tenant, contractId),
    lockHolder: (tenant) => lockHolder(store, tenant),
    forceUnlock: (tenant) => forceUnlock(store, tenant),
    appendHistory: (entry) => appendHistory(store, entry),
    readHistory: (query) => readHistory(store, query),
    readDriftKeys: (tenant) => readDriftKeys(store, tenant),
    listDriftTenants: () => listDriftTenants(store),
    writeDriftKeys: (tenant, changes) => writeDriftKeys(store, tenant, changes),
    close(): Promise<void> {
      closed ??= (async () => {
        await shared.close();
        await locks.close();
        await pool.end();
      })();
      return closed;
    },
  };
}

/** The pool of the store's queries, its tables migrated to this binary's version. */
async function openPool(config: pg.ClientConfig, schema: string, target: PostgresTarget): Promise<pg.Pool> {
  // allowExitOnIdle: a command that forgot close() still ends.
  const pool = new pg.Pool({ ...config, max: 4, allowExitOnIdle: true });
  // An idle connection the server closed: the next query opens another one.
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    try {
      await migrate(client, schema);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw describePostgresError(error, target, 'open');
  }
  return pool;
}

/** `run`, its failure described as one line naming the store and what it was `doing`. */
async function guard<T>(store: Store, doing: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw describePostgresError(error, store.target, doing);
  }
}

/** The shared runs of shared-runs.ts, their failures described; a lane's sessions opened with the lock session. */
function guardedSharedRuns(store: Store, shared: SharedRunManager): SharedRuns {
  return {
    begun: (key) => guard(store, 'read', () => shared.begun(key)),
    async beginOnce(key, begin) {
      // The worker's own failures (reading, validating) pass as they are; the store's are described.
      let own: { readonly error: unknown } | undefined;
      try {
        return await shared.beginOnce(key, () =>
          begin().catch((error: unknown) => {
            own = { error };
            throw error;
          }),
        );
      } catch (error) {
        if (own !== undefined) throw own.error;
        throw describePostgresError(error, store.target, 'write to');
      }
    },
    prepare: async (lanes) => {
      await Promise.allSettled([shared.prepare(lanes), store.locks.open()]);
    },
    join: (start) => guard(store, 'write to', () => shared.join(start)),
    async next(key, worker, lane) {
      const next = await guard(store, 'write to', () => shared.next(key, worker, lane));
      if (next.kind !== 'claimed') return next;
      const { claim } = next;
      return {
        kind: 'claimed',
        claim: { ...claim, finish: (result) => guard(store, 'write to', () => claim.finish(result)), abandon: () => claim.abandon() },
      };
    },
  };
}

// Fenced writes and lock holders

/**
 * The session holding the tenant's advisory lock (pg_locks splits the 64-bit key into classid
 * and objid), with what the `locks` row says of it; undefined when no session holds it. A row
 * left by a session that is gone (killed) names nobody: the lock itself decides.
 */
async function holderRow({ pool, s, schema }: Store, tenant: string): Promise<HolderRow | undefined> {
  const result = await pool.query<HolderRow>(
    `SELECT l.pid AS backend_pid, r.owner, r.pid, r.host, r.since
       FROM pg_locks l LEFT JOIN ${s}.locks r ON r.tenant = $1 AND r.backend_pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = ((hashtextextended($2, 0) >> 32) & 4294967295)::oid
        AND l.objid = (hashtextextended($2, 0) & 4294967295)::oid`,
    [tenant, lockKeyOf(schema, tenant)],
  );
  return result.rows[0];
}

/**
 * The condition a fenced write is made under: `lock`'s generation is still the tenant's latest
 * (read FOR SHARE, so that a new holder's raise waits for this write) and its session still holds
 * the advisory lock. `$1` is the tenant; the fence's values are `$first` to `$first + 2`.
 */
function fenceCondition({ s }: Store, first: number): string {
  return `EXISTS (SELECT 1 FROM ${s}.lock_fences f WHERE f.tenant = $1 AND f.generation = $${first}::bigint FOR SHARE)
    AND EXISTS (SELECT 1 FROM pg_locks l
      WHERE l.pid = $${first + 1}::integer AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = ((hashtextextended($${first + 2}::text, 0) >> 32) & 4294967295)::oid
        AND l.objid = (hashtextextended($${first + 2}::text, 0) & 4294967295)::oid)`;
}

/** The fence values of `guard`'s lock; undefined when the write carries none. */
function fenceValues({ locks, schema }: Store, tenant: string, guard: WriteGuard | undefined): [string, number, string] | undefined {
  const lock = guard?.lock;
  if (lock === undefined) return undefined;
  if (lock.tenant !== tenant) throw new TypeError(`a lock of tenant ${lock.tenant} cannot guard a write to tenant ${tenant}`);
  const fence = locks.fenceOf(lock);
  // A lock of another store instance: it cannot be checked, so the write is refused.
  if (fence === undefined) throw new LockLostError(tenant, 'the lock was not taken through this state store');
  return [fence.generation, fence.backendPid, lockKeyOf(schema, tenant)];
}

/** The error of a fenced write that found no lock: fires the lock's signal, says why. */
async function fenceRefused({ pool, s, locks }: Store, tenant: string, lock: TenantLock): Promise<LockLostError> {
  const current = await pool
    .query<{ generation: string }>(`SELECT generation::text AS generation FROM ${s}.lock_fences WHERE tenant = $1`, [tenant])
    .then((result) => result.rows[0]?.generation)
    .catch(() => undefined);
  const why =
    current !== undefined && current !== lock.fence
      ? `another run took it (lock generation ${current}, this run's ${lock.fence})`
      : 'the PostgreSQL session that held its advisory lock ended';
  return locks.fenceOf(lock)?.loss.lose(why) ?? new LockLostError(tenant, why);
}

// The records: contracts and run records

/** The known state of `tenant`'s contracts (of `only` when given), as the store recorded them. */
async function readTenant(store: Store, tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts> {
  checkTenant(tenant);
  if (only !== undefined) for (const id of only) checkContractId(id);
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result =
      only === undefined
        ? await pool.query<ContractRow>(`SELECT contract_id, fields FROM ${s}.contracts WHERE tenant = $1 ORDER BY contract_id`, [tenant])
        : await pool.query<ContractRow>(`SELECT contract_id, fields FROM ${s}.contracts WHERE tenant = $1 AND contract_id = ANY($2) ORDER BY contract_id`, [
            tenant,
            [...only],
          ]);
    return new Map(result.rows.map((row) => [row.contract_id, { fields: row.fields, from: 'state' as const }]));
  });
}

/** Records a contract applied; under a lock, only while the lock holds (the fence), else LockLostError. */
async function writeContract(store: Store, tenant: string, applied: AppliedContract, writeGuard?: WriteGuard): Promise<void> {
  checkTenant(tenant);
  checkApplied(applied);
  const { pool, s } = store;
  const fence = fenceValues(store, tenant, writeGuard);
  const values = [tenant, applied.contractId, JSON.stringify(applied.fields), applied.fingerprint, applied.appliedAt, applied.commit];
  const upsert = `ON CONFLICT (tenant, contract_id) DO UPDATE SET fields = EXCLUDED.fields, fingerprint = EXCLUDED.fingerprint, applied_at = EXCLUDED.applied_at, commit = EXCLUDED.commit`;
  const insert =
    fence === undefined
      ? `INSERT INTO ${s}.contracts (tenant, contract_id, fields, fingerprint, applied_at, commit) VALUES ($1, $2, $3, $4, $5, $6) ${upsert}`
      : `INSERT INTO ${s}.contracts (tenant, contract_id, fields, fingerprint, applied_at, commit)
         SELECT $1::text, $2::text, $3::json, $4::text, $5::text, $6::text WHERE ${fenceCondition(store, 7)} ${upsert}`;
  const parameters: unknown[] = fence === undefined ? values : [...values, ...fence];
  const written = await guard(store, 'write to', async () => {
    if (applied.runId === undefined) return ((await pool.query(insert, parameters)).rowCount ?? 0) > 0;
    // The record and, when its run is a shared run, the run's count of it: one statement, so
    // that a contract recorded is counted even if the worker dies at the next instruction.
    const runId = `$${parameters.push(applied.runId)}::text`;
    const result = await pool.query<{ written: number }>(
      `WITH written AS (${insert} RETURNING tenant, contract_id),
       counted AS (
         INSERT INTO ${s}.shared_run_applied (run_key, tenant, contract_id, applied_at)
         SELECT r.run_key, w.tenant, w.contract_id, $5::text FROM written w JOIN ${s}.shared_runs r ON r.run_id = ${runId}
         ON CONFLICT DO NOTHING
       )
       SELECT count(*)::integer AS written FROM written`,
      parameters,
    );
    return (result.rows[0]?.written ?? 0) > 0;
  });
  if (!written) throw await fenceRefused(store, tenant, writeGuard!.lock!);
}

async function readRun(store: Store, tenant: string): Promise<TenantRunRecord | undefined> {
  checkTenant(tenant);
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<RunRow>(`SELECT last_applied_commit, planning_fingerprint, pending, updated_at FROM ${s}.tenant_runs WHERE tenant = $1`, [
      tenant,
    ]);
    const row = result.rows[0];
    if (row === undefined) return undefined;
    return {
      lastAppliedCommit: row.last_applied_commit,
      ...(row.planning_fingerprint === null ? {} : { planningFingerprint: row.planning_fingerprint }),
      pending: row.pending,
      updatedAt: row.updated_at,
    };
  });
}

/** Writes the tenant's run record; under a lock only while it holds, and over the commit the run read (else LastAppliedChangedError). */
async function writeRun(store: Store, tenant: string, record: TenantRunRecord, writeGuard?: WriteGuard): Promise<void> {
  checkTenant(tenant);
  checkRunRecord(record);
  const { pool, s } = store;
  const pending = record.pending.map(({ contractId, outcome, reason, since, file }) => ({
    contractId,
    outcome,
    reason,
    since,
    ...(file === undefined ? {} : { file }),
  }));
  const fence = fenceValues(store, tenant, writeGuard);
  const expected = writeGuard?.lastAppliedCommit;
  const into = `INSERT INTO ${s}.tenant_runs (tenant, last_applied_commit, planning_fingerprint, pending, updated_at)`;
  const onConflict = `ON CONFLICT (tenant) DO UPDATE SET last_applied_commit = EXCLUDED.last_applied_commit, planning_fingerprint = EXCLUDED.planning_fingerprint,
         pending = EXCLUDED.pending, updated_at = EXCLUDED.updated_at`;
  const values: unknown[] = [tenant, record.lastAppliedCommit, record.planningFingerprint ?? null, JSON.stringify(pending), record.updatedAt];
  if (fence === undefined && expected === undefined) {
    return guard(store, 'write to', async () => {
      await pool.query(`${into} VALUES ($1, $2, $3, $4, $5) ${onConflict}`, values);
    });
  }
  // One statement, so one round trip: the record is written only while the fence holds (its row
  // read FOR SHARE until the write commits) and only over the commit the run read (none: no
  // record yet). When nothing was written, the run learns which of the two refused it.
  const checks: string[] = [];
  if (fence !== undefined) {
    checks.push(fenceCondition(store, values.length + 1));
    values.push(...fence);
  }
  let sameCommit = '';
  if (expected !== undefined) {
    const commit = `$${values.push(expected)}::text`;
    checks.push(`(${commit} IS NULL OR EXISTS (SELECT 1 FROM ${s}.tenant_runs WHERE tenant = $1))`);
    sameCommit = ` WHERE ${s}.tenant_runs.last_applied_commit IS NOT DISTINCT FROM ${commit}`;
  }
  const refused = await guard(store, 'write to', async () => {
    const written = await pool.query(
      `${into} SELECT $1::text, $2::text, $3::text, $4::json, $5::text WHERE ${checks.join(' AND ')} ${onConflict}${sameCommit}`,
      values,
    );
    if ((written.rowCount ?? 0) > 0) return undefined;
    if (fence !== undefined && (await pool.query(`SELECT 1 WHERE ${fenceCondition(store, 2)}`, [tenant, ...fence])).rowCount === 0) return 'fence' as const;
    const now = (await pool.query<{ commit: string | null }>(`SELECT last_applied_commit AS commit FROM ${s}.tenant_runs WHERE tenant = $1`, [tenant])).rows[0];
    return new LastAppliedChangedError(tenant, expected ?? null, now?.commit ?? null);
  });
  if (refused === 'fence') throw await fenceRefused(store, tenant, writeGuard!.lock!);
  if (refused !== undefined) throw refused;
}

async function listTenants(store: Store): Promise<string[]> {
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<{ tenant: string }>(
      `SELECT tenant FROM (SELECT tenant FROM ${s}.contracts UNION SELECT tenant FROM ${s}.tenant_runs) AS t ORDER BY tenant COLLATE "C"`,
    );
    return result.rows.map((row) => row.tenant);
  });
}

async function listRecords(store: Store, tenant: string): Promise<StoredContract[]> {
  checkTenant(tenant);
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<RecordRow>(
      `SELECT contract_id, fields, fingerprint, applied_at, commit FROM ${s}.contracts WHERE tenant = $1 ORDER BY contract_id COLLATE "C"`,
      [tenant],
    );
    return result.rows.map(storedOf);
  });
}

async function readRecord(store: Store, tenant: string, contractId: string): Promise<StoredContract | undefined> {
  checkTenant(tenant);
  checkContractId(contractId);
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<RecordRow>(
      `SELECT contract_id, fields, fingerprint, applied_at, commit FROM ${s}.contracts WHERE tenant = $1 AND contract_id = $2`,
      [tenant, contractId],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : storedOf(row);
  });
}

async function removeRecord(store: Store, tenant: string, contractId: string): Promise<boolean> {
  checkTenant(tenant);
  checkContractId(contractId);
  const { pool, s } = store;
  return guard(store, 'write to', async () => {
    const result = await pool.query(`DELETE FROM ${s}.contracts WHERE tenant = $1 AND contract_id = $2`, [tenant, contractId]);
    return (result.rowCount ?? 0) > 0;
  });
}

// Locks

async function lock(store: Store, tenant: string, lockOptions: LockOptions): Promise<TenantLock> {
  checkTenant(tenant);
  checkLockOptions(lockOptions);
  const { locks, target } = store;
  try {
    return await locks.lock(tenant, lockOptions);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'lock-timeout') throw error;
    throw describePostgresError(error, target, 'lock a tenant in');
  }
}

async function lockHolder(store: Store, tenant: string): Promise<LockHolder | undefined> {
  checkTenant(tenant);
  return guard(store, 'read', async () => {
    const row = await holderRow(store, tenant);
    return row === undefined ? undefined : holderOf(row);
  });
}

/** Frees the tenant's lock by ending the session that holds it; the holder it had, if any. */
async function forceUnlock(store: Store, tenant: string): Promise<LockHolder | undefined> {
  checkTenant(tenant);
  const { pool, s, now, sleep } = store;
  return guard(store, 'write to', async () => {
    const row = await holderRow(store, tenant);
    if (row !== undefined) {
      // Ending the holding session is the only way to free another session's advisory lock;
      // the server frees its locks as the session ends.
      await pool.query('SELECT pg_terminate_backend($1)', [row.backend_pid]);
      const started = now();
      while ((await holderRow(store, tenant))?.backend_pid === row.backend_pid && now() - started < TERMINATE_WAIT_MS) await sleep(50);
    }
    await pool.query(`DELETE FROM ${s}.locks WHERE tenant = $1`, [tenant]);
    return row === undefined ? undefined : holderOf(row);
  });
}

// The run history and the drift memory

async function appendHistory(store: Store, entry: RunHistoryEntry): Promise<void> {
  checkHistoryEntry(entry);
  const { pool, s } = store;
  return guard(store, 'write to', async () => {
    await pool.query(
      `INSERT INTO ${s}.run_history (run_id, started_at, finished_at, command, commit, started_by, report) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (run_id) DO UPDATE SET started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, command = EXCLUDED.command,
         commit = EXCLUDED.commit, started_by = EXCLUDED.started_by, report = EXCLUDED.report`,
      [entry.runId, entry.startedAt, entry.finishedAt, entry.command, entry.commit, JSON.stringify(entry.startedBy), JSON.stringify(entry)],
    );
  });
}

async function readHistory(store: Store, query: HistoryQuery = {}): Promise<RunHistoryEntry[]> {
  if (query.tenant !== undefined) checkTenant(query.tenant);
  checkHistoryQuery(query);
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<{ report: RunHistoryEntry }>(
      `SELECT report FROM ${s}.run_history
        WHERE $1::text IS NULL OR report->'tenants' @> jsonb_build_array(jsonb_build_object('tenant', $1::text))
        ORDER BY finished_at DESC, run_id COLLATE "C" DESC LIMIT $2`,
      [query.tenant ?? null, query.limit ?? null],
    );
    return selectHistory(
      result.rows.map((row) => row.report),
      query,
    );
  });
}

async function listDriftTenants(store: Store): Promise<string[]> {
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<{ tenant: string }>(`SELECT tenant FROM ${s}.drift_notified GROUP BY tenant ORDER BY tenant COLLATE "C"`);
    return result.rows.map((row) => row.tenant);
  });
}

async function readDriftKeys(store: Store, tenant: string): Promise<DriftKeys> {
  checkTenant(tenant);
  const { pool, s } = store;
  return guard(store, 'read', async () => {
    const result = await pool.query<{ contract_id: string; drift_key: string }>(
      `SELECT contract_id, drift_key FROM ${s}.drift_notified WHERE tenant = $1 ORDER BY contract_id COLLATE "C"`,
      [tenant],
    );
    return Object.fromEntries(result.rows.map((row) => [row.contract_id, row.drift_key]));
  });
}

async function writeDriftKeys(store: Store, tenant: string, changes: DriftKeyChanges): Promise<void> {
  checkTenant(tenant);
  checkDriftKeyChanges(changes);
  const { pool, s } = store;
  const entries = Object.entries(changes);
  if (entries.length === 0) return;
  const forget = entries.filter(([, key]) => key === null).map(([contractId]) => contractId);
  const remember = entries.filter((entry): entry is [string, string] => entry[1] !== null);
  return guard(store, 'write to', async () => {
    // One statement: every change of the call lands, or none.
    await pool.query(
      `WITH gone AS (DELETE FROM ${s}.drift_notified WHERE tenant = $1 AND contract_id = ANY($2::text[]))
       INSERT INTO ${s}.drift_notified (tenant, contract_id, drift_key)
         SELECT $1, contract_id, drift_key FROM unnest($3::text[], $4::text[]) AS t(contract_id, drift_key)
       ON CONFLICT (tenant, contract_id) DO UPDATE SET drift_key = EXCLUDED.drift_key`,
      [tenant, forget, remember.map(([contractId]) => contractId), remember.map(([, key]) => key)],
    );
  });
}
