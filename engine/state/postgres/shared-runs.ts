/**
 * Shared runs on PostgreSQL (`--shard auto`, engine/state/shared-run.ts): workers that know
 * nothing of each other share one run through four tables (schema.ts, versions 3 to 5).
 *
 * - A run is a row of `shared_runs` keyed by what every worker computes alike (the command, the
 *   commit, the selection); each worker inserts it and its tenants with ON CONFLICT DO NOTHING,
 *   so the first one's id and sizes are the run's.
 * - A worker inserts the run only after it has read and validated the whole desired state, with
 *   each tenant's files: a worker that finds the run there already reads only the files of the
 *   tenants it takes.
 * - A worker takes a tenant with `SELECT ... FOR UPDATE SKIP LOCKED`, largest first, on a claim
 *   session of its own, and keeps that transaction open while it works on the tenant. The row lock
 *   is the claim: the other workers skip the row; the claim ends with the COMMIT that marks the
 *   tenant done (so a tenant is never free and unfinished at once), or with the session: a worker
 *   killed, or whose machine vanished, loses its session and its row locks (within the keepalive
 *   below), and the next worker asking takes the tenant over in the same run. What it sends then
 *   is planned from what the state store recorded under the tenant's lock.
 * - A worker with nothing left to take waits on the held rows (`FOR UPDATE` without SKIP LOCKED,
 *   under a short lock_timeout): it passes a row over the moment its claim commits it done, and
 *   takes it over the moment its worker's session ends, so it sees the run's end at once.
 * - The run's history entry (run_history) is written in the transaction that marks a tenant
 *   done, under a transaction advisory lock of the run, from every tenant done: the last worker to
 *   finish writes the run whole, once, with every tenant and the worker that did it.
 * - What the run applied is counted from `shared_run_applied`, one row per contract, written by the
 *   statement that records the contract (store.ts): a tenant's `applied` is what every worker and
 *   every pass of the run recorded, whether the worker that did it finished, was killed, lost its
 *   claim's session or its server; the finishing pass adds only what it left undone.
 *
 * Why not a job queue on PostgreSQL (pg-boss, graphile-worker): their jobs end on a timeout the
 * worker must outlive or renew, where a row lock ends exactly when the session does; and they
 * would add their own schema and process model for what is one SELECT here.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import { checkHistoryEntry, type HistoryCommand, type HistoryTenant, type RunHistoryEntry, type StartedBy } from '../history.ts';
import type { SharedRunClaim, SharedRunJoined, SharedRunNext, SharedRunStart, SharedRuns, SharedTenantResult } from '../shared-run.ts';

export interface SharedRunDeps {
  /** A new connection: the claim session. */
  connect(): Promise<pg.Client>;
  query<R extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<R>>;
  /** The quoted schema name. */
  readonly s: string;
  readonly now: () => number;
  /** How long `next` waits on tenants other workers hold before it answers `wait` (default 1 s). */
  readonly waitForHeldMs?: number;
}

export interface SharedRunManager extends SharedRuns {
  /** Ends the claim session: an open claim is given up (rolled back), and another worker takes its tenant. */
  close(): Promise<void>;
}

/** The tenant a worker takes next: the largest not done. */
function nextTenantSql(schema: string): string {
  return `SELECT tenant, size, files FROM ${schema}.shared_run_tenants WHERE run_key = $1 AND done_at IS NULL ORDER BY size DESC, tenant COLLATE "C" LIMIT 1`;
}

const WAIT_FOR_HELD_MS = 1000;

/** SQLSTATE lock_not_available: a lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Shared runs not touched for this long are forgotten when a run starts (their history entry stays). */
const KEEP_RUNS = "interval '30 days'";

interface TenantRow {
  tenant: string;
  size: number;
  files: string[] | null;
}

interface DoneRow {
  tenant: string;
  worker: string;
  result: SharedTenantResult;
  done_at: string;
  /** Contracts of the tenant any worker recorded as applied in this run. */
  applied: number;
  /** Every worker that took the tenant, in the order they took it. */
  workers: string[] | null;
}

interface RunRow {
  run_id: string;
  command: HistoryCommand;
  commit: string;
  started_at: string;
  started_by: StartedBy;
}

/** The default name of a worker: its host and process. */
export function defaultWorkerName(): string {
  return `${hostname()}:${process.pid}`;
}

/** A worker's lane: one claim session, and whether it holds a claim (its session's open transaction). */
interface Lane {
  session?: Promise<pg.Client>;
  claimed: boolean;
}

/** What the parts of one manager share: its connections, its lanes, and the claim sessions that ended under them. */
interface Runs {
  readonly deps: SharedRunDeps;
  /** The quoted schema name. */
  readonly s: string;
  /** The SELECT of the next tenant (nextTenantSql), without its locking clause. */
  readonly nextTenant: string;
  /** One claim session per lane: a lane's open claim is its session's open transaction. */
  readonly lanes: Map<number, Lane>;
  /** Claim sessions the server or the network ended: their row locks, the claims, are gone. */
  readonly endedSessions: WeakSet<pg.Client>;
}

export function createSharedRuns(deps: SharedRunDeps): SharedRunManager {
  const runs: Runs = { deps, s: deps.s, nextTenant: nextTenantSql(deps.s), lanes: new Map(), endedSessions: new WeakSet() };
  return {
    begun: (key) => isBegun(runs, key),
    prepare: (count) => prepareLanes(runs, count),
    beginOnce: (key, begin) => beginOnce(runs, key, begin),
    join: (start) => joinRun(runs, start),
    next: (key, worker, index = 0) => nextOnLane(runs, key, worker, index),
    close: () => closeLanes(runs),
  };
}

// --- Lanes and their claim sessions

function laneOf(runs: Runs, index: number): Lane {
  let lane = runs.lanes.get(index);
  if (lane === undefined) {
    lane = { claimed: false };
    runs.lanes.set(index, lane);
  }
  return lane;
}

/** The lane's claim session: the one it has, else a new one. */
function claimSession(runs: Runs, lane: Lane): Promise<pg.Client> {
  if (lane.session !== undefined) return lane.session;
  const opening = (async () => {
    const client = await runs.deps.connect();
    function gone(): void {
      runs.endedSessions.add(client);
      if (lane.session === opening) delete lane.session;
    }
    client.on('error', gone);
    client.on('end', gone);
    // A worker whose machine vanishes (no FIN) loses its claims within ~25 s; a long tenant is
    // one long transaction, which a server default must not end.
    await client.query(
      'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3; SET idle_in_transaction_session_timeout = 0',
    );
    return client;
  })().catch((error: unknown) => {
    if (lane.session === opening) delete lane.session;
    throw error;
  });
  lane.session = opening;
  return opening;
}

async function prepareLanes(runs: Runs, count: number): Promise<void> {
  await Promise.allSettled(Array.from({ length: count }, (_, index) => claimSession(runs, laneOf(runs, index))));
}

async function closeLanes(runs: Runs): Promise<void> {
  const sessions = [...runs.lanes.values()].flatMap((lane) => (lane.session === undefined ? [] : [lane.session]));
  runs.lanes.clear();
  await Promise.all(sessions.map(async (session) => (await session.catch(() => undefined))?.end().catch(() => undefined)));
}

// --- Beginning and joining a run

async function isBegun(runs: Runs, key: string): Promise<boolean> {
  return (await runs.deps.query(`SELECT 1 FROM ${runs.s}.shared_runs WHERE run_key = $1`, [key])).rowCount === 1;
}

async function beginOnce<T>(runs: Runs, key: string, begin: () => Promise<T>): Promise<T | undefined> {
  if (await isBegun(runs, key)) return undefined;
  // On lane 0's claim session, which the worker's first claim uses next: a worker that dies
  // while it begins the run frees the lock with its session.
  const client = await claimSession(runs, laneOf(runs, 0));
  await client.query("SELECT pg_advisory_lock(hashtextextended('contract-sync:begin-shared-run:' || $1, 0))", [key]);
  try {
    return (await isBegun(runs, key)) ? undefined : await begin();
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtextextended('contract-sync:begin-shared-run:' || $1, 0))", [key]);
  }
}

async function joinRun({ deps, s }: Runs, start: SharedRunStart): Promise<SharedRunJoined> {
  await deps.query(`DELETE FROM ${s}.shared_runs WHERE created_at < now() - ${KEEP_RUNS}`, []);
  // The run and its tenants in one statement: a run that is there has its tenants (workers
  // that find it begun bring none).
  await deps.query(
    `WITH run AS (
       INSERT INTO ${s}.shared_runs (run_key, run_id, command, commit, started_at, started_by) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_key) DO NOTHING
     )
     INSERT INTO ${s}.shared_run_tenants (run_key, tenant, size, files)
       SELECT $1, t.tenant, t.size, t.files::jsonb FROM unnest($7::text[], $8::integer[], $9::text[]) AS t(tenant, size, files) ON CONFLICT DO NOTHING`,
    [
      start.key,
      start.runId,
      start.command,
      start.commit,
      start.startedAt,
      JSON.stringify(start.startedBy),
      start.tenants.map((tenant) => tenant.tenant),
      start.tenants.map((tenant) => tenant.size),
      start.tenants.map((tenant) => JSON.stringify(tenant.files)),
    ],
  );
  const run = (await deps.query<{ run_id: string; started_at: string }>(`SELECT run_id, started_at FROM ${s}.shared_runs WHERE run_key = $1`, [start.key]))
    .rows[0]!;
  const counts = (
    await deps.query<{ tenants: number; done: number }>(
      `SELECT count(*)::integer AS tenants, count(done_at)::integer AS done FROM ${s}.shared_run_tenants WHERE run_key = $1`,
      [start.key],
    )
  ).rows[0]!;
  return { runId: run.run_id, startedAt: run.started_at, tenants: counts.tenants, done: counts.done };
}

// --- Taking the next tenant

/** SharedRuns.next on lane `index`. */
async function nextOnLane(runs: Runs, key: string, worker: string, index: number): Promise<SharedRunNext> {
  const lane = laneOf(runs, index);
  if (lane.claimed) throw new TypeError(`lane ${index} takes one tenant at a time: finish or abandon its claim first`);
  const client = await claimSession(runs, lane);
  try {
    return await nextOn(runs, lane, client, key, worker);
  } catch (error) {
    // The session ended while it held no claim (pg_terminate_backend, a cut connection): nothing
    // of the run is lost with it, so the lane asks once more on a new session. A server that is
    // gone fails that one too, and the worker stops saying so.
    if (lane.claimed || !(runs.endedSessions.has(client) || isConnectionLoss(error))) throw error;
    runs.endedSessions.add(client);
    delete lane.session;
    void client.end().catch(() => undefined);
    return nextOn(runs, lane, await claimSession(runs, lane), key, worker);
  }
}

/** Takes the next tenant on the lane's claim session `client` (see SharedRuns.next). */
async function nextOn(runs: Runs, lane: Lane, client: pg.Client, key: string, worker: string): Promise<SharedRunNext> {
  await client.query('BEGIN');
  const row = await lockNextTenant(runs, client, key);
  if (row === undefined) {
    await client.query('ROLLBACK');
    const open = (
      await runs.deps.query<{ open: number }>(`SELECT count(*)::integer AS open FROM ${runs.s}.shared_run_tenants WHERE run_key = $1 AND done_at IS NULL`, [
        key,
      ])
    ).rows[0]!.open;
    return open === 0 ? { kind: 'finished' } : { kind: 'wait', open };
  }
  lane.claimed = true;
  try {
    return { kind: 'claimed', claim: claimOf(runs, lane, client, key, worker, row, await recordClaim(runs, key, row.tenant, worker)) };
  } catch (error) {
    lane.claimed = false;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * In the transaction `client` has begun: the row of the next tenant, locked, or undefined when
 * every tenant left stayed held while it waited (or none is left). Any other failure rolls back.
 */
async function lockNextTenant({ deps, nextTenant }: Runs, client: pg.Client, key: string): Promise<TenantRow | undefined> {
  try {
    const free = (await client.query<TenantRow>(`${nextTenant} FOR UPDATE SKIP LOCKED`, [key])).rows[0];
    if (free !== undefined) return free;
    // Every tenant left is held. Wait on the held rows in turn: a row whose claim commits done
    // is passed over at once, and one whose worker died (or gave it up) is taken over. So the
    // run's end, or a takeover, is seen the moment it happens, not at the next poll.
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.ceil(deps.waitForHeldMs ?? WAIT_FOR_HELD_MS))}`);
    return (await client.query<TenantRow>(`${nextTenant} FOR UPDATE`, [key])).rows[0];
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return undefined;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Records that `worker` took `tenant`; the workers that took it earlier in the run, in order. */
async function recordClaim({ deps, s }: Runs, key: string, tenant: string, worker: string): Promise<string[]> {
  // Outside the claim's transaction: kept even when this worker dies, to say who took over from whom.
  const earlier = await deps.query<{ worker: string }>(`SELECT worker FROM ${s}.shared_run_claims WHERE run_key = $1 AND tenant = $2 ORDER BY claimed_at`, [
    key,
    tenant,
  ]);
  await deps.query(`INSERT INTO ${s}.shared_run_claims (run_key, tenant, worker) VALUES ($1, $2, $3)`, [key, tenant, worker]);
  return earlier.rows.map((claim) => claim.worker);
}

// --- A claim, and finishing its tenant

function claimOf(runs: Runs, lane: Lane, client: pg.Client, key: string, worker: string, row: TenantRow, takenOverFrom: readonly string[]): SharedRunClaim {
  let ended = false;
  function end(): void {
    ended = true;
    lane.claimed = false;
  }
  return {
    tenant: row.tenant,
    size: row.size,
    files: row.files ?? undefined,
    takenOverFrom,
    async finish(result) {
      if (ended) throw new TypeError(`the claim of tenant ${row.tenant} has ended`);
      try {
        await markDone(runs, client, key, row.tenant, worker, result);
        await writeRunHistory(runs, client, key);
        await client.query('COMMIT');
        return 'done';
      } catch (error) {
        // The session ended under the claim: the server rolled its transaction back, and the tenant is free for another worker.
        if (runs.endedSessions.has(client) || isConnectionLoss(error)) return 'lost';
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        end();
      }
    },
    async abandon() {
      if (ended) return;
      end();
      await client.query('ROLLBACK').catch(() => undefined);
    },
  };
}

/** In the claim's transaction: `tenant` done by `worker`, with its pass's result. */
async function markDone({ deps, s }: Runs, client: pg.Client, key: string, tenant: string, worker: string, result: SharedTenantResult): Promise<void> {
  await client.query(`UPDATE ${s}.shared_run_tenants SET done_at = $3, worker = $4, result = $5 WHERE run_key = $1 AND tenant = $2`, [
    key,
    tenant,
    new Date(deps.now()).toISOString(),
    worker,
    JSON.stringify(result),
  ]);
}

// --- The run's history entry

/** In the claim's transaction: the run's history entry, written again from every tenant done so far. */
async function writeRunHistory(runs: Runs, client: pg.Client, key: string): Promise<void> {
  // One writer of the run's entry at a time: it then sees every tenant finished before it.
  const { s } = runs;
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended('contract-sync:shared-run:' || $1, 0))", [key]);
  const entry = await historyOf(runs, client, key);
  if (entry === undefined) return;
  checkHistoryEntry(entry);
  await client.query(
    `INSERT INTO ${s}.run_history (run_id, started_at, finished_at, command, commit, started_by, report) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (run_id) DO UPDATE SET started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, command = EXCLUDED.command,
       commit = EXCLUDED.commit, started_by = EXCLUDED.started_by, report = EXCLUDED.report`,
    [entry.runId, entry.startedAt, entry.finishedAt, entry.command, entry.commit, JSON.stringify(entry.startedBy), JSON.stringify(entry)],
  );
}

/** The run's history entry from its tenants done, as `client` sees them; undefined when the run is gone. */
async function historyOf({ s }: Runs, client: pg.Client, key: string): Promise<RunHistoryEntry | undefined> {
  const run = (await client.query<RunRow>(`SELECT run_id, command, commit, started_at, started_by FROM ${s}.shared_runs WHERE run_key = $1`, [key])).rows[0];
  if (run === undefined) return undefined;
  const done = (
    await client.query<DoneRow>(
      `SELECT t.tenant, t.worker, t.result, t.done_at,
         (SELECT count(*)::integer FROM ${s}.shared_run_applied a WHERE a.run_key = t.run_key AND a.tenant = t.tenant) AS applied,
         (SELECT array_agg(c.worker ORDER BY c.claimed_at) FROM ${s}.shared_run_claims c WHERE c.run_key = t.run_key AND c.tenant = t.tenant) AS workers
       FROM ${s}.shared_run_tenants t WHERE t.run_key = $1 AND t.done_at IS NOT NULL ORDER BY t.tenant COLLATE "C"`,
      [key],
    )
  ).rows;
  const tenants = done.map(historyTenantOf);
  const finishedAt = done.reduce((latest, row) => (row.done_at > latest ? row.done_at : latest), run.started_at);
  return { runId: run.run_id, command: run.command, startedAt: run.started_at, finishedAt, commit: run.commit, startedBy: run.started_by, tenants };
}

/**
 * A done tenant's line in the run's history: `applied` counts every contract the run recorded as
 * applied for it, by any worker in any pass (never fewer than the finishing pass says it applied);
 * `changed` adds what the finishing pass planned and did not apply; `failed`, `unknown` and `error`
 * are the finishing pass's, which planned what every earlier pass left.
 */
export function historyTenantOf(row: Pick<DoneRow, 'tenant' | 'worker' | 'result' | 'applied' | 'workers'>): HistoryTenant {
  const { result } = row;
  const applied = Math.max(row.applied, result.applied);
  const earlier = [...new Set(row.workers ?? [])].filter((worker) => worker !== row.worker);
  return {
    tenant: row.tenant,
    ...result,
    changed: applied + Math.max(0, result.changed - result.applied),
    applied,
    worker: row.worker,
    ...(earlier.length === 0 ? {} : { takenOverFrom: earlier }),
  };
}

/** A query failed because its connection is gone (terminated by the server, or cut), not because of what it asked. */
function isConnectionLoss(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  // 57P01..57P03: the server terminated the session (pg_terminate_backend, shutdown); 08xxx: connection exceptions.
  if (typeof code === 'string' && (/^57P0[1-3]$/.test(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && /Connection terminated|not queryable|ECONNRESET|EPIPE/.test(message);
}
