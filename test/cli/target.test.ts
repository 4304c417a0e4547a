/** `--target` / `--exclude` against the emulator: only the selected contracts are read and sent, and the run record keeps its commit. */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function setup(options: { seed?: (fleet: Fleet) => Seed; git?: boolean } = {}) {
  const fleet = createFleet(2, 6);
  emulator = await startEmulator(options.seed ? options.seed(fleet) : fleetSeed(fleet));
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true }));
  cleanups.push(cleanup);
  let head = '';
  if (options.git) {
    function git(...args: string[]): string {
      return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' }).trim();
    }
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'desired state');
    head = git('rev-parse', 'HEAD');
  }
  return { fleet, dir, head, env: { ...fleet.env, PATH: process.env.PATH ?? '' } };
}

/** `GET /contract/tenant-a-0001` -> `GET tenant-a-0001`, sorted. */
async function apiRequests(): Promise<string[]> {
  return (await requestLog(emulator!))
    .filter((entry) => entry.kind === 'api')
    .map((entry) => `${entry.method} ${entry.path.replace('/contract/', '')}`)
    .sort();
}

function withoutContract(tenant: string, id: string): (fleet: Fleet) => Seed {
  return (fleet) => {
    const seed = fleetSeed(fleet);
    const contracts = { ...seed.tenants[tenant]!.contracts };
    delete contracts[id];
    return { ...seed, tenants: { ...seed.tenants, [tenant]: { ...seed.tenants[tenant]!, contracts } } };
  };
}

describe('--target and --exclude', () => {
  it('apply reads and patches only the targets, selects their tenant without --tenant, and says the run was targeted', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['apply', '--target', 'tenant-a/tenant-a-0001', '--target', 'tenant-a/tenant-a-0003'], dir, env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Targeted run: 2 of 6 contracts (--target tenant-a/tenant-a-0001 --target tenant-a/tenant-a-0003).');
    // 0001 differs from its desired state, 0003 (index divisible by 3) does not.
    expect(await apiRequests()).toEqual(['GET tenant-a-0001', 'GET tenant-a-0003', 'PATCH tenant-a-0001']);
  });

  it('plan --refresh with --exclude globs reads every contract but the excluded ones', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['plan', '--refresh', '--exclude', 'tenant-a/*-000[0-3]', '--exclude', 'tenant-b/*'], dir, env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Targeted run: 2 of 12 contracts (--exclude tenant-a/*-000[0-3] --exclude tenant-b/*).');
    expect(run.stdout).toContain('2 contracts in 1 tenant to update');
    expect(await apiRequests()).toEqual(['GET tenant-a-0004', 'GET tenant-a-0005']);
  });

  it('drift checks only the targets', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['drift', '--target', 'tenant-b/tenant-b-0002'], dir, env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Targeted run: 1 of 6 contracts (--target tenant-b/tenant-b-0002).');
    expect(run.stdout).toContain('tenant tenant-b: its contract drifted');
    expect(await apiRequests()).toEqual(['GET tenant-b-0002']);
  });

  it.each([
    ['apply', 'nothing applied'],
    ['plan', 'no plan written'],
    ['drift', 'nothing read'],
  ])('%s refuses a target no desired-state file declares, naming it, and sends nothing', async (command, outcome) => {
    const { dir, env } = await setup();

    const run = await runCli([command, '--target', 'tenant-a/tenant-a-0001', '--target', 'tenant-a/9999'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`contract-sync ${command}: --target tenant-a/9999 matches no contract declared in the desired state`);
    expect(run.stderr).toContain(`1 target matches no contract: ${outcome}`);
    expect(await requestLog(emulator!)).toEqual([]);
  });

  it.each([
    [['apply', '--target', 'tenant-z/1'], '--target tenant-z/1: tenant "tenant-z" is not configured'],
    [['plan', '--exclude', 'tenant-a'], '--exclude: expected TENANT/ID (e.g. acme/4711), got "tenant-a"'],
    [
      ['plan', '--tenant', 'tenant-b', '--target', 'tenant-a/tenant-a-0001'],
      '--target tenant-a/tenant-a-0001 names tenant "tenant-a", which --tenant does not select',
    ],
    [['apply', 'plan.json', '--target', 'tenant-a/tenant-a-0001'], '--target and --exclude cannot be used with a plan file'],
  ])('%j is a usage error', async (args, message) => {
    const { dir, env } = await setup();

    const run = await runCli(args, dir, env);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(await requestLog(emulator!)).toEqual([]);
  });

  it('warns about an exclude that matches nothing', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['plan', '--exclude', 'tenant-a/nothing*'], dir, env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('contract-sync plan: warning: --exclude tenant-a/nothing* matches no contract');
  });

  it('a targeted apply keeps the last applied commit, settles its targets in pending and keeps the others; an untargeted one advances', async () => {
    const { dir, env, head } = await setup({ git: true, seed: withoutContract('tenant-a', 'tenant-a-0002') });
    const store = fileStateStore(path.join(dir, '.contract-sync/state'));
    const earlier = 'e'.repeat(40);
    const since = '2027-01-01T00:00:00.000Z';
    await store.writeRun('tenant-a', {
      lastAppliedCommit: earlier,
      pending: [
        { contractId: 'tenant-a-0001', outcome: 'failed', reason: 'earlier', since, file: 'contracts/tenant-a.yaml' },
        { contractId: 'tenant-a-0004', outcome: 'failed', reason: 'earlier', since, file: 'contracts/tenant-a.yaml' },
      ],
      updatedAt: since,
    });

    const targeted = await runCli(['apply', '--ref', 'HEAD', '--target', 'tenant-a/tenant-a-0001', '--target', 'tenant-a/tenant-a-0002'], dir, env);

    expect(targeted.code).toBe(1);
    const record = await store.readRun('tenant-a');
    expect(record?.lastAppliedCommit).toBe(earlier);
    // 0001 applied: settled. 0002 is not on the service: failed. 0004 was not targeted: kept as it was.
    expect(record?.pending.map((entry) => [entry.contractId, entry.outcome, entry.reason === 'earlier'])).toEqual([
      ['tenant-a-0002', 'failed', false],
      ['tenant-a-0004', 'failed', true],
    ]);
    expect(await store.readRun('tenant-b')).toBeUndefined();

    const untargeted = await runCli(['apply', '--ref', 'HEAD', '--tenant', 'tenant-a', '--exclude', 'tenant-b/*'], dir, env);

    expect(untargeted.code).toBe(1);
    // Excluding only another tenant leaves tenant-a whole: its record advances.
    expect((await store.readRun('tenant-a'))?.lastAppliedCommit).toBe(head);
  });

  it('applying a plan made with --target sends only its targets and keeps the last applied commit', async () => {
    const { dir, env } = await setup({ git: true });
    const store = fileStateStore(path.join(dir, '.contract-sync/state'));
    const earlier = 'e'.repeat(40);
    await store.writeRun('tenant-a', { lastAppliedCommit: earlier, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' });
    const plan = await runCli(['plan', '--ref', 'HEAD', '--refresh', '--target', 'tenant-a/tenant-a-0001', '--out', 'plan.json'], dir, env);
    expect(plan.code, plan.stderr).toBe(0);

    const run = await runCli(['apply', 'plan.json'], dir, env);

    expect(run.code, run.stderr).toBe(0);
    expect((await apiRequests()).filter((request) => request.startsWith('PATCH'))).toEqual(['PATCH tenant-a-0001']);
    expect((await store.readRun('tenant-a'))?.lastAppliedCommit).toBe(earlier);
  });
});
