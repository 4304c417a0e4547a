/** `contract-sync apply` in-process against the emulator: output, exit codes, report, locks, secrets. */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, secretEnvOf, type Fleet } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function setup(options: { seed?: (fleet: Fleet) => Seed; read?: boolean; fleet?: Fleet } = {}) {
  const fleet = options.fleet ?? createFleet(2, 6);
  emulator = await startEmulator(options.seed ? options.seed(fleet) : fleetSeed(fleet));
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: options.read ?? true }));
  cleanups.push(cleanup);
  return { fleet, dir, emulator };
}

function patches(log: Awaited<ReturnType<typeof requestLog>>): string[] {
  return log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').map((entry) => entry.path);
}

describe('contract-sync apply', () => {
  it('applies, writes the report, and has nothing to do on the second run', async () => {
    const { fleet, dir } = await setup();

    const first = await runCli(['apply', '--report', 'report.json'], dir, fleet.env);
    const second = await runCli(['apply'], dir, fleet.env);

    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/Apply: 8 contracts changed, \d+ ops, 20 requests, 0 retries\./);
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(report).toMatchObject({ version: 1, dryRun: false, summary: { tenants: 2, changed: 8, applied: 8, failed: 0 } });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Apply: nothing to do; every contract planned already matches its desired state');
    expect(patches(await requestLog(emulator!))).toHaveLength(8);
  });

  it('records the git commit the desired state came from with each applied contract and in the run record', async () => {
    const { fleet, dir } = await setup();
    function git(...args: string[]): string {
      return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' }).trim();
    }
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'desired state');
    const head = git('rev-parse', 'HEAD');

    const run = await runCli(['apply', '--ref', 'HEAD'], dir, { ...fleet.env, PATH: process.env.PATH ?? '' });

    expect(run.code, run.stderr).toBe(0);
    const record = await fileStateStore(path.join(dir, '.contract-sync/state')).readRecord('tenant-a', 'tenant-a-0001');
    expect(record).toMatchObject({ commit: head, fingerprint: expect.stringMatching(/^sha256:/) });
    expect(await fileStateStore(path.join(dir, '.contract-sync/state')).readRun('tenant-a')).toMatchObject({ lastAppliedCommit: head, pending: [] });
  });

  it('sends nothing and writes nothing with --dry-run', async () => {
    const { fleet, dir } = await setup();

    const run = await runCli(['apply', '--dry-run'], dir, fleet.env);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Dry run: 8 contracts would change');
    expect(patches(await requestLog(emulator!))).toEqual([]);
    expect((await fileStateStore(path.join(dir, '.contract-sync/state')).readTenant('tenant-a')).size).toBe(0);
  });

  it('lists each failure by tenant, contract, status and reason, and still applies the other tenant', async () => {
    // tenant-b's service does not know one contract: its PATCH is a 404; the rest must go through.
    const { fleet, dir } = await setup({
      seed: (fleet) => {
        const seed = fleetSeed(fleet);
        const contracts = { ...seed.tenants['tenant-b']!.contracts };
        delete contracts['tenant-b-0001'];
        return { ...seed, tenants: { ...seed.tenants, 'tenant-b': { ...seed.tenants['tenant-b']!, contracts } } };
      },
    });

    const run = await runCli(['apply', '--report', 'report.json'], dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /Failures:\n {2}tenant-b tenant-b-0001 \(contracts\/tenant-b\.yaml:\d+\) not on the service: the service has no contract tenant-b-0001 \(its read was answered 404\)/,
    );
    expect(run.stdout).toContain('tenant-a: 4 contracts changed');
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(report.tenants[1].failures).toEqual([expect.objectContaining({ contractId: 'tenant-b-0001', outcome: 'not-on-service', status: 404 })]);
  });

  it('stops a tenant before any request when its secret is refused, without printing the secret', async () => {
    const { fleet, dir } = await setup();
    const env = { ...fleet.env, [secretEnvOf('tenant-a')]: 'not-the-right-secret-42' };

    const run = await runCli(['apply', '--report', 'report.json'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/\ntenant-a: not started, \d+ contracts not sent: .*invalid_client/);
    expect(run.stdout).toContain('tenant-b: 4 contracts changed');
    const log = await requestLog(emulator!);
    expect(log.filter((entry) => entry.kind === 'api' && entry.tenant === 'tenant-a')).toEqual([]);
    const everything = run.stdout + run.stderr + (await readFile(path.join(dir, 'report.json'), 'utf8'));
    for (const secret of [...Object.values(fleet.env), 'not-the-right-secret-42']) expect(everything).not.toContain(secret);
  });

  it('refuses a token without core:write before any PATCH, naming the scope', async () => {
    const { fleet, dir } = await setup({
      seed: (fleet) => {
        const seed = fleetSeed(fleet);
        const tenant = seed.tenants['tenant-a']!;
        return { ...seed, tenants: { ...seed.tenants, 'tenant-a': { ...tenant, clients: [{ ...tenant.clients![0]!, scopes: ['core:read'] }] } } };
      },
    });

    const run = await runCli(['apply'], dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /\ntenant-a: not started, \d+ contracts not sent: .*core:write.*; grant client cs-tenant-a the scopes in the identity provider\n/,
    );
    expect((await requestLog(emulator!)).filter((entry) => entry.kind === 'api' && entry.tenant === 'tenant-a')).toEqual([]);
  });

  it('waits for the lock of a tenant another run holds, then exits 1 saying so', async () => {
    const { fleet, dir } = await setup();
    const store = fileStateStore(path.join(dir, '.contract-sync/state'));
    const held = await store.lock('tenant-a', { timeoutMs: 1000, owner: 'other-run' });

    const run = await runCli(['apply', '--lock-timeout', '0.3'], dir, fleet.env);
    await held.release();

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/tenant-a: 0 of \d+ contracts changed.*\n {2}.*tenant-a.*other-run/);
    expect(run.stdout).toContain('tenant-b: 4 contracts changed');
    expect((await requestLog(emulator!)).filter((entry) => entry.kind === 'api' && entry.tenant === 'tenant-a')).toEqual([]);
  });

  it('exits 1 with one line naming the format marker, sending nothing, when a newer contract-sync wrote the state directory', async () => {
    const { fleet, dir } = await setup();
    const marker = path.join(dir, '.contract-sync/state/.format.json');
    await mkdir(path.dirname(marker), { recursive: true });
    await writeFile(marker, '{"format":"contract-sync-file-state","version":3}\n');

    const run = await runCli(['apply'], dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `contract-sync apply: ${path.join(dir, '.contract-sync/state/.format.json')}: the state directory is in format version 3, newer than the one this contract-sync reads (version 2); a newer contract-sync wrote this state: upgrade contract-sync to use it\n`,
    );
    expect(patches(await requestLog(emulator!))).toEqual([]);
  });

  it.each([
    [['apply', '--refresh', '--no-refresh'], /exclude each other/],
    [['apply', '--lock-timeout', 'soon'], /--lock-timeout must be a number of seconds/],
    [['apply', '--tenant', 'nobody'], /--tenant "nobody" is not configured/],
  ])('refuses %j', async (args, message) => {
    const { fleet, dir } = await setup();

    const run = await runCli(args, dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
  });
});
