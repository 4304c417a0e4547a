/** `contract-sync state push` / `pull` between a real file store and a real PostgreSQL database. */
import path from 'node:path';
import { expect, it } from 'vitest';
import { fileStateStore, type AppliedContract, type RunHistoryEntry, type StateStore } from '../../engine/state/index.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';
import { postgresDatabaseForFile } from '../helpers/postgres-server.ts';

const database = postgresDatabaseForFile();
const cleanups = cleanupsAfterEach();

function applied(contractId: string, name: string): AppliedContract {
  return {
    contractId,
    fields: { Name: name, Company: [{ Id: 12, RelationType: 'Supplier' }] },
    fingerprint: `sha256:${name}`,
    appliedAt: '2027-01-01T00:00:00.000Z',
    commit: 'c'.repeat(40),
  };
}

const ENTRY: RunHistoryEntry = {
  runId: 'run-1',
  command: 'drift --fix',
  startedAt: '2027-01-01T00:00:00.000Z',
  finishedAt: '2027-01-01T00:01:00.000Z',
  commit: null,
  startedBy: { ci: 'gitlab', actor: 'jane', url: 'https://gitlab.example.com/p/-/pipelines/1' },
  tenants: [{ tenant: 'acme', changed: 1, applied: 0, failed: 1, error: 'token refused' }],
};

async function fileRepo(): Promise<{ dir: string; store: StateStore }> {
  const { dir, cleanup } = await writeTree({ 'contract-sync.yaml': configYaml(['acme', 'globex'], 'state: { backend: file, path: state }\n') });
  cleanups.push(cleanup);
  return { dir, store: fileStateStore(path.join(dir, 'state')) };
}

async function postgresStore(): Promise<{ schema: string; store: StateStore }> {
  const schema = database.newSchema('copy');
  const store = await openPostgresStateStore({ url: database.url, schema });
  cleanups.push(() => store.close());
  return { schema, store };
}

async function seed(store: StateStore): Promise<void> {
  for (let n = 0; n < 5; n++) await store.writeContract('acme', applied(`47${n}`, `acme ${n}`));
  await store.writeContract('globex', applied('9001', 'globex'));
  await store.writeRun('acme', {
    lastAppliedCommit: 'c'.repeat(40),
    planningFingerprint: 'sha256:p',
    pending: [{ contractId: '4799', outcome: 'unknown', reason: 'reset', since: '2027-01-01T00:00:00.000Z', file: 'contracts/acme.yaml' }],
    updatedAt: '2027-01-01T00:02:00.000Z',
  });
  await store.appendHistory(ENTRY);
  await store.writeDriftKeys('acme', { '470': '0123456789abcdef', '471': 'fedcba9876543210' });
}

async function snapshot(store: StateStore): Promise<unknown> {
  const tenants = await store.listTenants();
  return {
    tenants: await Promise.all(
      tenants.map(async (tenant) => ({
        tenant,
        records: await store.listRecords(tenant),
        run: await store.readRun(tenant),
        driftKeys: await store.readDriftKeys(tenant),
      })),
    ),
    history: await store.readHistory(),
  };
}

it('pushes a file store to PostgreSQL, counts what it copied and verifies it', async () => {
  const { dir, store } = await fileRepo();
  await seed(store);
  const target = await postgresStore();

  const result = await runCli(['state', 'push', '--to', 'postgres', '--url-env', 'TARGET_DB_URL', '--schema', target.schema], dir, {
    TARGET_DB_URL: database.url,
  });

  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe(
    'copied 2 tenants: 6 records, 1 run record, 1 history entry, the drift memory of 2 contracts\nverified: the copy read back holds the same records (fingerprints), run records, history and drift memory\n',
  );
  expect(await snapshot(target.store)).toEqual(await snapshot(store));
});

it('pulls a PostgreSQL store into the configured file store', async () => {
  const source = await postgresStore();
  await seed(source.store);
  const { dir, store } = await fileRepo();

  const result = await runCli(['state', 'pull', '--from', 'postgres', '--url-env', 'SOURCE_DB_URL', '--schema', source.schema], dir, {
    SOURCE_DB_URL: database.url,
  });

  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/^copied 2 tenants: 6 records, 1 run record, 1 history entry, the drift memory of 2 contracts\nverified/);
  expect(await snapshot(store)).toEqual(await snapshot(source.store));
});

it('refuses to copy into a store that holds state without --force, and copies over it with --force', async () => {
  const { dir, store } = await fileRepo();
  await seed(store);
  const target = await postgresStore();
  await target.store.writeContract('initech', applied('1', 'other'));
  const args = ['state', 'push', '--to', 'postgres', '--url-env', 'TARGET_DB_URL', '--schema', target.schema];

  const refused = await runCli(args, dir, { TARGET_DB_URL: database.url });
  const untouched = await target.store.listTenants();
  const forced = await runCli([...args, '--force'], dir, { TARGET_DB_URL: database.url });

  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/the target store already holds state; nothing copied\. Run again with --force/);
  expect(untouched).toEqual(['initech']);
  expect(forced.code, forced.stderr).toBe(0);
  expect(await target.store.listTenants()).toEqual(['acme', 'globex', 'initech']);
});

it('fails while a run holds a tenant of the source, naming the holder', async () => {
  const { dir, store } = await fileRepo();
  await seed(store);
  const held = await store.lock('acme', { timeoutMs: 0, owner: 'apply-run' });
  const other = await fileRepo();

  const result = await runCli(['state', 'push', '--to', 'file', '--path', path.join(other.dir, 'state')], dir);
  await held.release();

  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/^contract-sync state push: tenant "acme" is locked by another run \(owner "apply-run"/);
});

it.each<{ args: string[]; env: Record<string, string>; message: RegExp }>([
  { args: ['--to', 'postgres'], env: {}, message: /--to postgres needs --url-env NAME/ },
  { args: ['--to', 's3'], env: {}, message: /--to must be postgres or file; got "s3"/ },
  { args: ['--to', 'file'], env: {}, message: /--to file needs --path DIR/ },
  { args: ['--to', 'postgres', '--url-env', 'NOPE'], env: {}, message: /--url-env NOPE: the variable is not set/ },
  { args: ['--to', 'postgres', '--url-env', 'BAD'], env: { BAD: 'postgresql://u:secret-pw@127.0.0.1:1/' }, message: /names no database/ },
])('refuses push $args in one line', async ({ args, env, message }) => {
  const { dir } = await fileRepo();

  const result = await runCli(['state', 'push', ...args], dir, env);

  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toContain('secret-pw');
});
