/**
 * `contract-sync state` against real stores: a file store in a temporary repository and a
 * PostgreSQL database on a throwaway server, each seeded through the store itself.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileStateStore, type AppliedContract, type RunHistoryEntry, type StateStore } from '../../engine/state/index.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';
import { postgresDatabaseForFile } from '../helpers/postgres-server.ts';

const database = postgresDatabaseForFile();
const cleanups = cleanupsAfterEach();

const COMMIT = 'c'.repeat(40);

function applied(contractId: string, name: string): AppliedContract {
  return { contractId, fields: { Name: name }, fingerprint: `sha256:${name}`, appliedAt: '2027-01-01T00:00:00.000Z', commit: COMMIT };
}

function run(runId: string, finishedAt: string, tenants: readonly string[]): RunHistoryEntry {
  return {
    runId,
    command: 'apply',
    startedAt: '2027-01-01T00:00:00.000Z',
    finishedAt,
    commit: COMMIT,
    startedBy: { ci: 'github', actor: 'octocat' },
    tenants: tenants.map((tenant) => ({ tenant, changed: 2, applied: 2, failed: 0 })),
  };
}

interface Repo {
  readonly dir: string;
  readonly env: Record<string, string>;
  /** The store the config names, opened by the test (closed after the test). */
  open(): Promise<StateStore>;
}

const BACKENDS: readonly { readonly name: string; readonly repo: () => Promise<Repo> }[] = [
  {
    name: 'file',
    async repo() {
      const { dir, cleanup } = await writeTree({ 'contract-sync.yaml': configYaml(['acme', 'globex'], 'state: { backend: file, path: state }\n') });
      cleanups.push(cleanup);
      return { dir, env: {}, open: async () => fileStateStore(path.join(dir, 'state')) };
    },
  },
  {
    name: 'postgres',
    async repo() {
      const schema = database.newSchema('cli');
      const { dir, cleanup } = await writeTree({
        'contract-sync.yaml': configYaml(['acme', 'globex'], `state: { backend: postgres, url: { env: STATE_DB_URL }, schema: ${schema} }\n`),
      });
      cleanups.push(cleanup);
      return {
        dir,
        env: { STATE_DB_URL: database.url },
        async open() {
          const store = await openPostgresStateStore({ url: database.url, schema });
          cleanups.push(() => store.close());
          return store;
        },
      };
    },
  },
];

describe.each(BACKENDS)('contract-sync state on the $name store', ({ repo: makeRepo }) => {
  async function seeded(): Promise<Repo> {
    const repo = await makeRepo();
    const store = await repo.open();
    await store.writeContract('acme', applied('4711', 'first'));
    await store.writeContract('acme', applied('4712', 'second'));
    await store.writeContract('globex', applied('9001', 'globex'));
    await store.writeRun('acme', {
      lastAppliedCommit: COMMIT,
      pending: [{ contractId: '4713', outcome: 'failed', reason: 'HTTP 400', since: '2027-01-01T00:00:00.000Z' }],
      updatedAt: '2027-01-01T00:01:00.000Z',
    });
    await store.appendHistory(run('run-1', '2027-01-01T00:01:00.000Z', ['acme', 'globex']));
    await store.appendHistory(run('run-2', '2027-01-02T00:01:00.000Z', ['globex']));
    return repo;
  }

  it('lists tenants with their record counts, last applied commit, pending count and lock holder', async () => {
    const repo = await seeded();
    const lock = await (await repo.open()).lock('globex', { timeoutMs: 0, owner: 'run-held' });

    const text = await runCli(['state', 'list'], repo.dir, repo.env);
    const json = await runCli(['state', 'list', '--format', 'json', '--tenant', 'acme'], repo.dir, repo.env);
    await lock.release();

    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')).toEqual([
      `acme: 2 records, last applied commit ${COMMIT.slice(0, 12)}, 1 pending, unlocked`,
      expect.stringMatching(/^globex: 1 record, no applied commit, 0 pending, locked by owner "run-held", pid \d+ on host \S+, since \d{4}-\d\d-\d\dT/),
      '',
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ tenants: [{ tenant: 'acme', records: 2, lastAppliedCommit: COMMIT, pending: 1 }] });
  });

  it('shows one record, and exits 1 for a contract without one', async () => {
    const repo = await seeded();

    const shown = await runCli(['state', 'show', 'acme', '4711', '--format', 'json'], repo.dir, repo.env);
    const text = await runCli(['state', 'show', 'acme', '4711'], repo.dir, repo.env);
    const absent = await runCli(['state', 'show', 'acme', '9999'], repo.dir, repo.env);

    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual({ tenant: 'acme', ...applied('4711', 'first') });
    expect(text.stdout).toContain(`commit:      ${COMMIT}`);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toBe('contract-sync state show: no record of contract 9999 for tenant acme\n');
  });

  it('shows the run history newest first, by tenant and limit', async () => {
    const repo = await seeded();

    const all = await runCli(['state', 'history', '--format', 'json'], repo.dir, repo.env);
    const acme = await runCli(['state', 'history', '--tenant', 'acme'], repo.dir, repo.env);
    const limited = await runCli(['state', 'history', '--limit', '1', '--format', 'json'], repo.dir, repo.env);

    expect(all.code, all.stderr).toBe(0);
    expect((JSON.parse(all.stdout) as { runs: RunHistoryEntry[] }).runs.map((entry) => entry.runId)).toEqual(['run-2', 'run-1']);
    expect(acme.stdout).toBe(
      '2027-01-01T00:01:00.000Z  apply  run run-1  commit cccccccccccc  by octocat\n  acme: 2 changed, 2 applied, 0 failed\n  globex: 2 changed, 2 applied, 0 failed\n',
    );
    expect((JSON.parse(limited.stdout) as { runs: RunHistoryEntry[] }).runs.map((entry) => entry.runId)).toEqual(['run-2']);
  });

  it('refuses to unlock without --force, showing the holder; with it, unlocks and says whose lock it was', async () => {
    const repo = await seeded();
    const held = await (await repo.open()).lock('acme', { timeoutMs: 0, owner: 'run-held' });

    const refused = await runCli(['state', 'unlock', 'acme'], repo.dir, repo.env);
    const stillHeld = await (await repo.open()).lockHolder('acme');
    const forced = await runCli(['state', 'unlock', 'acme', '--force'], repo.dir, repo.env);
    const taken = await (await repo.open()).lock('acme', { timeoutMs: 0, owner: 'next-run' });
    const free = await runCli(['state', 'unlock', 'globex'], repo.dir, repo.env);
    await held.release();
    await taken.release();

    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^tenant acme is locked by owner "run-held", pid \d+/);
    expect(refused.stderr).toMatch(/run again with --force/);
    expect(stillHeld).toMatchObject({ owner: 'run-held' });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/^unlocked tenant acme: the lock was held by owner "run-held"/);
    expect(free.code).toBe(0);
    expect(free.stdout).toBe('tenant globex is not locked; nothing to do\n');
  });

  it('refuses to forget a record without --force; with it, forgets it; exits 1 when there is none', async () => {
    const repo = await seeded();

    const refused = await runCli(['state', 'rm', 'acme', '4711'], repo.dir, repo.env);
    const kept = await (await repo.open()).readRecord('acme', '4711');
    const removed = await runCli(['state', 'rm', 'acme', '4711', '--force'], repo.dir, repo.env);
    const again = await runCli(['state', 'rm', 'acme', '4711', '--force'], repo.dir, repo.env);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not removed; run again with --force/);
    expect(kept).toBeDefined();
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe('removed the record of contract 4711 for tenant acme\n');
    expect(await (await repo.open()).readRecord('acme', '4711')).toBeUndefined();
    expect([...(await (await repo.open()).readTenant('acme')).keys()]).toEqual(['4712']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no record of contract 4711 for tenant acme; nothing removed/);
  });
});

describe('contract-sync state usage', () => {
  it.each([
    { args: ['state'], message: /a subcommand is required/ },
    { args: ['state', 'nope'], message: /unknown subcommand "nope"/ },
    { args: ['state', 'show', 'acme'], message: /state show takes TENANT ID; got 1 argument/ },
    { args: ['state', 'unlock', '../x'], message: /tenant: expected a name matching/ },
    { args: ['state', 'history', '--limit', '0'], message: /--limit must be a whole number >= 1/ },
    { args: ['state', 'list', '--format', 'yaml'], message: /--format must be one of text, json/ },
  ])('refuses $args', async ({ args, message }) => {
    const { dir, cleanup } = await writeTree({ 'contract-sync.yaml': configYaml(['acme']) });
    cleanups.push(cleanup);

    const result = await runCli(args, dir);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/see contract-sync state --help/);
  });

  it('lists its subcommands, options and exit codes in --help', async () => {
    const result = await runCli(['state', '--help'], '.');

    expect(result.code).toBe(0);
    for (const word of ['list', 'show', 'history', 'unlock', 'rm', '--force', '--limit', 'Exit codes']) expect(result.stdout).toContain(word);
  });

  it('says in one line why the PostgreSQL store cannot be opened', async () => {
    const { dir, cleanup } = await writeTree({ 'contract-sync.yaml': configYaml(['acme'], 'state: { backend: postgres, url: { env: STATE_DB_URL } }\n') });
    cleanups.push(cleanup);

    const result = await runCli(['state', 'list'], dir, {});

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^contract-sync state list: state.url cannot be resolved: .*\n$/);
  });
});
