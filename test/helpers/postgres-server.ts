/**
 * A throwaway PostgreSQL server for one test file: initdb + pg_ctl in a temporary directory,
 * listening on a free loopback port (and a socket in the same directory). No mock database.
 *
 * - The binaries are taken from PATH, or else from the highest /usr/lib/postgresql/<version>/bin
 *   (Debian's layout). None at all fails the test with a message saying how to install them.
 * - initdb and postgres refuse to run as root: as root, they run as the `postgres` system user
 *   (runuser), and the temporary directory is handed to that user.
 * - The superuser is `postgres`, trusted on the socket and on loopback TCP; every other role must
 *   give its password over TCP (scram-sha-256), so that a wrong password can be tested.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

const run = promisify(execFile);

export interface PostgresServer {
  readonly port: number;
  /** A URL of the superuser for `database` (default: the `postgres` database). */
  superuserUrl(database?: string): string;
  /** Creates a fresh database and returns the superuser's URL for it. */
  createDatabase(name?: string): Promise<string>;
  /** Runs SQL as the superuser in `database`. */
  query(sql: string, database?: string): Promise<pg.QueryResult>;
  /** Stops the server at once (no shutdown checkpoint) and removes its directory. */
  stop(): Promise<void>;
  /** Stops the server at once (`pg_ctl stop -m immediate`: every session ends), keeping its data for restart(). */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port, with the same data (crash recovery runs first). */
  restart(): Promise<void>;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The directory holding initdb and pg_ctl. */
async function findBinaries(): Promise<string> {
  const initdb = onPath('initdb');
  if (initdb !== undefined && existsSync(path.join(path.dirname(initdb), 'pg_ctl'))) return path.dirname(initdb);
  let versions: string[] = [];
  try {
    versions = (await readdir(DEBIAN_ROOT)).filter((name) => existsSync(path.join(DEBIAN_ROOT, name, 'bin', 'initdb')));
  } catch {
    // No Debian layout.
  }
  versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  if (versions[0] !== undefined) return path.join(DEBIAN_ROOT, versions[0], 'bin');
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl) were found neither on PATH nor under /usr/lib/postgresql/*/bin; ' +
      'these tests need a real server: install it (e.g. apt-get install postgresql; .ci/run does this in CI)',
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** Runs a server binary, as the `postgres` user when this process is root. */
async function runServerBinary(binDir: string, name: string, args: readonly string[]): Promise<void> {
  const file = path.join(binDir, name);
  const [command, commandArgs] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, [...args]];
  try {
    await run(command, commandArgs, { env: { ...process.env, LC_ALL: 'C' } });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${name} failed: ${stderr || stdout || (error as Error).message}`, { cause: error });
  }
}

let databases = 0;

export interface PostgresOptions {
  /**
   * Every COMMIT acknowledged is in the WAL the server wrote (synchronous_commit on), so that a
   * server stopped with `-m immediate` keeps everything it acknowledged, as a production server does.
   * Off by default: the last few hundred milliseconds of commits may be lost then, which is faster.
   */
  readonly durableCommits?: boolean;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const binDir = await findBinaries();
  const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-pg-'));
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o700);
  const data = path.join(dir, 'data');
  await runServerBinary(binDir, 'initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const hba = ['local all all trust', 'host all postgres 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 scram-sha-256', ''].join('\n');
  await writeFile(path.join(data, 'pg_hba.conf'), hba);
  const port = await freePort();
  // fsync off: a server stopped at once leaves what it wrote to the OS, which keeps it (only a crash of the machine would lose it).
  const commits = options.durableCommits ? 'on' : 'off';
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=${commits} -c full_page_writes=off -c max_connections=200`;
  await runServerBinary(binDir, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', settings, '-w', '-t', '30', 'start']);

  function superuserUrl(database = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${port}/${database}`;
  }
  async function query(sql: string, database?: string): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: superuserUrl(database) });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  }
  return {
    port,
    superuserUrl,
    query,
    async createDatabase(name = `test_${process.pid}_${++databases}`): Promise<string> {
      // FILE_COPY (PostgreSQL 15+; the only way before) is several times faster than WAL_LOG for a small template.
      const version = Number((await query('SHOW server_version_num')).rows[0].server_version_num);
      await query(`CREATE DATABASE ${name}${version >= 150000 ? ' STRATEGY FILE_COPY' : ''}`);
      return superuserUrl(name);
    },
    async stop(): Promise<void> {
      await runServerBinary(binDir, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
    async halt(): Promise<void> {
      await runServerBinary(binDir, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    async restart(): Promise<void> {
      await runServerBinary(binDir, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', settings, '-w', '-t', '30', 'start']);
    },
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
    throw new Error('running as root, and there is no `postgres` system user to run the PostgreSQL server as (the postgresql package creates it)');
  });
  const { stdout: group } = await run('id', ['-g', 'postgres']);
  return { uid: Number(stdout.trim()), gid: Number(group.trim()) };
}

/** The database a test file shares: its URL once started, and a fresh schema per test (as fresh as a new database, and much cheaper). */
export interface FileDatabase {
  readonly url: string;
  newSchema(prefix: string): string;
}

/** A throwaway server with one database for the tests of the calling file: started before them, stopped after them. */
export function postgresDatabaseForFile(): FileDatabase {
  let server: PostgresServer | undefined;
  let url: string | undefined;
  let schemas = 0;
  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get url() {
      if (url === undefined) throw new Error('the database is started in beforeAll: use its url inside a test');
      return url;
    },
    newSchema: (prefix) => `${prefix}_${++schemas}`,
  };
}
