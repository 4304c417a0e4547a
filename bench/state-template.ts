/**
 * The PostgreSQL state of a bench fleet, written once and copied per round: a template database
 * holding a record of every live contract (as if applied), and `CREATE DATABASE ... TEMPLATE` copies
 * of it. Shared by bench/shards.ts and bench/auto-shards.ts.
 */
import { fingerprint } from '../engine/model/fingerprint.ts';
import { openPostgresStateStore } from '../engine/state/postgres/index.ts';
import type { Fleet } from '../test/helpers/fleet.ts';
import type { PostgresServer } from '../test/helpers/postgres-server.ts';

/** Creates database `name` holding a record of every live contract of `fleet`. */
export async function writeTemplate(postgres: PostgresServer, fleet: Pick<Fleet, 'live'>, name: string): Promise<string> {
  const store = await openPostgresStateStore({ url: await postgres.createDatabase(name) });
  try {
    const appliedAt = new Date().toISOString();
    for (const [tenant, contracts] of fleet.live) {
      await Promise.all(
        [...contracts].map(([contractId, fields]) =>
          store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt, commit: null }),
        ),
      );
    }
  } finally {
    await store.close();
  }
  return name;
}

/** A fresh copy of `template` named `name`; its URL. */
export async function copyDatabase(postgres: PostgresServer, template: string, name: string): Promise<string> {
  const version = Number((await postgres.query('SHOW server_version_num')).rows[0].server_version_num);
  await postgres.query(`CREATE DATABASE ${name} TEMPLATE ${template}${version >= 150000 ? ' STRATEGY FILE_COPY' : ''}`);
  return postgres.superuserUrl(name);
}
