/**
 * A ContractId the service does not know: the service publishes no create endpoint, so plan
 * --refresh, apply, drift and import report it as "not on the service", never as "No changes".
 */
import path from 'node:path';
import { access } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** Two tenants of 6 contracts; tenant-a-0000 (one whose desired state matches live) and tenant-a-0001 (one that changes) are not on the service. */
async function setup(options: { read?: boolean } = {}) {
  const fleet = createFleet(2, 6);
  const seed = fleetSeed(fleet);
  const contracts = { ...seed.tenants['tenant-a']!.contracts };
  delete contracts['tenant-a-0000'];
  delete contracts['tenant-a-0001'];
  emulator = await startEmulator({ ...seed, tenants: { ...seed.tenants, 'tenant-a': { ...seed.tenants['tenant-a']!, contracts } } });
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: options.read ?? true }));
  cleanups.push(cleanup);
  return { dir, env: fleet.env };
}

async function patches(): Promise<string[]> {
  return (await requestLog(emulator!)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').map((entry) => entry.path);
}

describe('a contract not on the service', () => {
  it('apply: the headline does not say "No changes", and the failure and the summary say "not on the service"', async () => {
    const { dir, env } = await setup();

    // Both targets plan to no op where they can be read: only the missing one is a problem.
    const run = await runCli(['apply', '--target', 'tenant-a/tenant-a-0000', '--target', 'tenant-a/tenant-a-0003'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('No changes');
    expect(run.stdout).toContain('Nothing to send for 1 planned contract in 1 tenant, but 1 contract could not be planned: not on the service (listed below).');
    // Listed in the preview itself, before the run's own Failures: the headline never points at a section that is not printed.
    expect(run.stdout).toMatch(/\nNot planned:\n {2}tenant-a tenant-a-0000 \(contracts\/tenant-a\.yaml:\d+\) not on the service: [^\n]+\n[\s\S]*\nFailures:\n/);
    expect(run.stdout).toMatch(
      /\n {2}tenant-a tenant-a-0000 \(contracts\/tenant-a\.yaml:\d+\) not on the service: the service has no contract tenant-a-0000 \(its read was answered 404\); contract-sync manages contracts that exist and cannot create one/,
    );
    expect(run.stdout).toContain('tenant-a: no contract changed, 0 ops, 2 requests, 0 retries, 1 failed (1 contract not on the service)');
    expect(run.stdout).toMatch(/Apply: no contract changed, .*, 1 failed \(1 contract not on the service\)\./);
    expect(await patches()).toEqual([]);
  });

  it('apply: a PATCH answered 404 (no reads configured) says "not on the service" too', async () => {
    const { dir, env } = await setup({ read: false });

    const run = await runCli(['apply', '--target', 'tenant-a/tenant-a-0001'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /tenant-a tenant-a-0001 \(contracts\/tenant-a\.yaml:\d+\) not on the service: the service has no contract tenant-a-0001 \(its patch was answered 404\)/,
    );
    expect(run.stdout).toMatch(/Apply: 0 of 1 contract changed, .*, 1 failed \(1 contract not on the service\)\./);
    expect(await patches()).toEqual(['/contract/tenant-a-0001']);
  });

  it('plan --refresh: names the contract as not on the service and writes no plan', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['plan', '--refresh', '--tenant', 'tenant-a', '--out', 'plan.json'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /contract-sync plan: tenant-a tenant-a-0000 \(contracts\/tenant-a\.yaml:\d+\): not on the service: the service has no contract tenant-a-0000/,
    );
    expect(run.stderr).toMatch(/contract-sync plan: tenant-a tenant-a-0001 .*: not on the service/);
    expect(run.stderr).toContain('2 contracts not on the service: no plan written');
    expect(run.stdout).toBe('');
    await expect(access(path.join(dir, 'plan.json'))).rejects.toThrow();
  });

  it('drift: lists it under "Not checked" as not on the service, and the summary never says "No drift:"', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['drift', '--target', 'tenant-a/tenant-a-0000', '--target', 'tenant-a/tenant-a-0003'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('tenant tenant-a: no drift in 1 of 2 contracts, 1 not checked');
    expect(run.stdout).toMatch(
      /Not checked:\n {2}tenant-a tenant-a-0000 \(contracts\/tenant-a\.yaml:\d+\) not on the service: the service has no contract tenant-a-0000/,
    );
    expect(run.stdout).toContain('No drift found in the contracts checked, but 1 contract not on the service (listed under "Not checked").');
    expect(run.stdout).not.toContain('No drift:');
  });

  it('drift --format markdown says it too', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['drift', '--format', 'markdown', '--target', 'tenant-a/tenant-a-0000'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('not on the service: the service has no contract tenant-a-0000');
    expect(run.stdout).toContain('1 contract not on the service');
  });

  it('import: names the id as not on the service and writes nothing', async () => {
    const { dir, env } = await setup();

    // An id the repository does not declare either: import refuses declared ones before reading.
    const run = await runCli(['import', '--tenant', 'tenant-a', '--id', 'tenant-a-0099', '--out', 'contracts/imported.yaml'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'could not read the contract of tenant "tenant-a" (1 contract not on the service):\n  tenant-a-0099: not on the service (its read was answered 404)',
    );
    await expect(access(path.join(dir, 'contracts/imported.yaml'))).rejects.toThrow();
  });
});
