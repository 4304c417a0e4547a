/**
 * The PostgreSQL backend's tables, versioned: contract-sync creates and migrates them itself at
 * first use. Every table lives in one schema (default `contract_sync`), named by the config.
 *
 *   schema_version  one row: the version of the tables below
 *   contracts       one row per contract: the known state after its last successful PATCH
 *   tenant_runs     one row per tenant: TenantRunRecord (last applied commit, pending contracts)
 *   locks           one row per tenant lock held: who holds it (the lock itself is an advisory lock)
 *   run_history     one row per run: its report (reserved for the run history)
 *   lock_fences     one row per tenant ever locked: the generation of its latest lock, the fencing
 *                   token a lock holder's writes carry (version 2)
 *   shared_runs         one row per shared run (`--shard auto`): its key, id, command, commit (version 3)
 *   shared_run_tenants  one row per tenant of a shared run: its size, its desired-state files (version
 *                       4), and once done, who did it and how
 *   shared_run_claims   one row per time a worker took a tenant: who took it over from whom
 *   shared_run_applied  one row per contract a shared run applied, written in the statement that
 *                       records the contract (version 5): the run's history counts these, whichever
 *                       worker applied them and however its part ended
 *   drift_notified      one row per contract whose drift was notified: the drift's key (version 6)
 *
 * Timestamps the engine hands over as ISO strings are stored as text, so that a record reads back
 * exactly as it was written, as in the file backend.
 */
import type { PoolClient } from 'pg';

/** The version of the tables this binary creates and reads. */
export const SCHEMA_VERSION = 6;

/** Migration N takes the tables from version N - 1 to N. `s` is the quoted schema name. */
const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    CREATE TABLE ${s}.contracts (
      tenant text NOT NULL,
      contract_id text NOT NULL,
      fields json NOT NULL,
      fingerprint text NOT NULL,
      applied_at text NOT NULL,
      commit text,
      PRIMARY KEY (tenant, contract_id)
    );
    CREATE TABLE ${s}.tenant_runs (
      tenant text PRIMARY KEY,
      last_applied_commit text,
      planning_fingerprint text,
      pending json NOT NULL,
      updated_at text NOT NULL
    );
    CREATE TABLE ${s}.locks (
      tenant text PRIMARY KEY,
      owner text NOT NULL,
      pid integer NOT NULL,
      host text NOT NULL,
      since timestamptz NOT NULL,
      backend_pid integer NOT NULL
    );
    CREATE TABLE ${s}.run_history (
      run_id text PRIMARY KEY,
      started_at timestamptz,
      finished_at timestamptz,
      command text,
      commit text,
      started_by jsonb,
      report jsonb
    );`,
  // 2: fencing (advisory-lock.ts). A binary of version 1 does not carry it, so it refuses these tables.
  (s) => `
    CREATE TABLE ${s}.lock_fences (
      tenant text PRIMARY KEY,
      generation bigint NOT NULL
    );`,
  // 3: shared runs (shared-runs.ts). A worker holds its tenant's row FOR UPDATE until it is done.
  (s) => `
    CREATE TABLE ${s}.shared_runs (
      run_key text PRIMARY KEY,
      run_id text NOT NULL,
      command text NOT NULL,
      commit text NOT NULL,
      started_at text NOT NULL,
      started_by jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE ${s}.shared_run_tenants (
      run_key text NOT NULL REFERENCES ${s}.shared_runs (run_key) ON DELETE CASCADE,
      tenant text NOT NULL,
      size integer NOT NULL,
      done_at text,
      worker text,
      result jsonb,
      PRIMARY KEY (run_key, tenant)
    );
    CREATE TABLE ${s}.shared_run_claims (
      run_key text NOT NULL REFERENCES ${s}.shared_runs (run_key) ON DELETE CASCADE,
      tenant text NOT NULL,
      worker text NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX ON ${s}.shared_run_claims (run_key, tenant);`,
  // 4: a shared run's tenants name their desired-state files: a worker joining a run whose first
  // worker validated the whole desired state reads only the files of the tenants it takes.
  (s) => `ALTER TABLE ${s}.shared_run_tenants ADD COLUMN files jsonb;`,
  // 5: what a shared run applied, contract by contract, written with each contract's record: the
  // run's history is the sum over its workers and passes, not what the last one remembered.
  (s) => `
    CREATE INDEX ON ${s}.shared_runs (run_id);
    CREATE TABLE ${s}.shared_run_applied (
      run_key text NOT NULL REFERENCES ${s}.shared_runs (run_key) ON DELETE CASCADE,
      tenant text NOT NULL,
      contract_id text NOT NULL,
      applied_at text NOT NULL,
      PRIMARY KEY (run_key, tenant, contract_id)
    );`,
  // 6: the drift notifications' memory (engine/notify/dedupe.ts): a hash per contract, no contract data.
  (s) => `
    CREATE TABLE ${s}.drift_notified (
      tenant text NOT NULL,
      contract_id text NOT NULL,
      drift_key text NOT NULL,
      PRIMARY KEY (tenant, contract_id)
    );`,
];

// One key for every migration of every schema: migrations are rare and short.
const MIGRATION_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended('contract-sync:migration', 0))";

/** Schema names are checked by the config; quoted all the same. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Thrown when the database holds tables of a newer contract-sync. */
export class SchemaVersionError extends Error {
  readonly code = 'state-schema-version';
}

function tooNew(schema: string, version: number): SchemaVersionError {
  return new SchemaVersionError(
    `the state schema "${schema}" is at version ${version}, newer than this contract-sync knows (${SCHEMA_VERSION}); upgrade contract-sync (a newer one has written this state)`,
  );
}

/** The tables' version, or 0 when there are none yet. */
async function currentVersion(client: PoolClient, s: string): Promise<number> {
  try {
    const result = await client.query<{ version: number }>(`SELECT version FROM ${s}.schema_version`);
    return result.rows[0]?.version ?? 0;
  } catch (error) {
    // 3F000: no such schema; 42P01: no such table.
    const code = (error as { code?: string }).code;
    if (code === '3F000' || code === '42P01') return 0;
    throw error;
  }
}

/**
 * Brings the schema to SCHEMA_VERSION. A database already there costs one query and needs no
 * CREATE privilege; otherwise the migration runs in one transaction under a transaction-level
 * advisory lock, so that concurrent first runs wait for each other and only one migrates.
 */
export async function migrate(client: PoolClient, schema: string): Promise<void> {
  const s = quoteIdentifier(schema);
  const seen = await currentVersion(client, s);
  if (seen === SCHEMA_VERSION) return;
  if (seen > SCHEMA_VERSION) throw tooNew(schema, seen);
  await client.query('BEGIN');
  try {
    await client.query(MIGRATION_LOCK_SQL);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_version (version integer NOT NULL)`);
    // Read again under the lock: another run may have migrated while this one waited.
    const version = await currentVersion(client, s);
    if (version > SCHEMA_VERSION) throw tooNew(schema, version);
    for (let next = version + 1; next <= SCHEMA_VERSION; next++) await client.query(MIGRATIONS[next - 1]!(s));
    if (version === 0) await client.query(`INSERT INTO ${s}.schema_version (version) VALUES ($1)`, [SCHEMA_VERSION]);
    else await client.query(`UPDATE ${s}.schema_version SET version = $1`, [SCHEMA_VERSION]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
