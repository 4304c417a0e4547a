/** `contract-sync plan --refresh`: the known state read live from the in-process emulator over real HTTP. */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePlan } from '../../engine/plan/read-plan.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

let emulator: Emulator | undefined;
const repos: TestRepo[] = [];

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  await Promise.all(repos.splice(0).map((repo) => repo.cleanup()));
});

async function setup(options: { read?: boolean; seed?: (fleet: Fleet) => Seed } = {}) {
  const fleet = createFleet(2, 3);
  emulator = await startEmulator(options.seed ? options.seed(fleet) : fleetSeed(fleet));
  const repo = await createRepo(fleetRepoFiles(fleet, emulator, { read: options.read ?? true }));
  repos.push(repo);
  return { fleet, emulator, repo };
}

function knownFroms(plan: PlanDocument): string[] {
  return plan.tenants.flatMap((tenant) => tenant.contracts.map((contract) => contract.knownFrom));
}

describe('plan --refresh', () => {
  it('plans against live reads with a read-only client, sending no PATCH, where a plain plan sends nothing at all', async () => {
    // The clients may only read: asking for core:write as well would get no token at all.
    const { fleet, emulator, repo } = await setup({
      seed: (fleet) => {
        const seed = fleetSeed(fleet);
        return {
          ...seed,
          tenants: Object.fromEntries(
            Object.entries(seed.tenants).map(([tenant, entry]) => [
              tenant,
              { ...entry, clients: entry.clients!.map((client) => ({ ...client, scopes: ['core:read'] })) },
            ]),
          ),
        };
      },
    });

    const plain = await runCli(['plan', '--format', 'json'], repo.dir);
    const afterPlain = await requestLog(emulator);
    const refreshed = await runCli(['plan', '--refresh', '--format', 'json'], repo.dir, fleet.env);

    expect(plain.code, plain.stderr).toBe(0);
    expect(knownFroms(parsePlan(plain.stdout))).toEqual(Array(6).fill('unknown'));
    expect(afterPlain).toEqual([]);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const plan = parsePlan(refreshed.stdout);
    expect(knownFroms(plan)).toEqual(Array(6).fill('live'));
    expect(plan.summary).toMatchObject({ contracts: 6, changed: 4 });
    const api = (await requestLog(emulator)).filter((entry) => entry.kind === 'api');
    expect(api.map((entry) => `${entry.method} ${entry.status}`)).toEqual(Array(6).fill('GET 200'));
  });

  it('marks what the change since --base touched, with the known state read live', async () => {
    const { fleet, repo } = await setup();
    await repo.git('checkout', '-q', '-b', 'feature');
    const set = fleet.desired[0]!;
    const noop = set.contracts[0]!;
    await repo.commit('rename one contract', {
      [set.file]: stringify({
        tenant: set.tenant,
        contracts: Object.fromEntries(
          set.contracts.map((contract) => [contract.id, contract === noop ? { ...contract.fields, Name: 'Renamed on the branch' } : contract.fields]),
        ),
      }),
    });

    const run = await runCli(['plan', '--refresh', '--ref', 'HEAD', '--base', 'main', '--format', 'json', '--out', 'plan.json'], repo.dir, fleet.env);

    expect(run.code, run.stderr).toBe(0);
    const plan = parsePlan(await readFile(path.join(repo.dir, 'plan.json'), 'utf8'));
    const touched = plan.tenants.flatMap((tenant) =>
      tenant.contracts.filter((contract) => contract.touched).map((contract) => `${contract.id} ${contract.knownFrom} ${contract.action}`),
    );
    expect(touched).toEqual([`${noop.id} live update`]);
    expect(plan.summary).toMatchObject({ touched: 1, changed: 5 });
    expect(plan.source.base).toMatchObject({ ref: 'main' });
  });

  it('writes no plan and exits 1 naming the contract when a read fails', async () => {
    const { fleet, emulator, repo } = await setup({
      seed: (fleet) => {
        const seed = fleetSeed(fleet);
        const tenant = seed.tenants['tenant-b']!;
        const contracts = { ...tenant.contracts };
        delete contracts['tenant-b-0001'];
        return { ...seed, tenants: { ...seed.tenants, 'tenant-b': { ...tenant, contracts } } };
      },
    });

    const run = await runCli(['plan', '--refresh', '--out', 'plan.json'], repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /contract-sync plan: tenant-b tenant-b-0001 \(contracts\/tenant-b\.yaml:\d+\): not on the service: the service has no contract tenant-b-0001/,
    );
    expect(run.stderr).toContain('1 contract not on the service: no plan written');
    expect(run.stdout).toBe('');
    await expect(access(path.join(repo.dir, 'plan.json'))).rejects.toThrow(/ENOENT/);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH')).toEqual([]);
  });

  it('writes no plan and exits 1 when a tenant cannot get a token, without printing the secret', async () => {
    const { fleet, repo } = await setup();
    const env = { ...fleet.env, SECRET_TENANT_A: 'not-the-right-secret-42' };

    const run = await runCli(['plan', '--refresh', '--out', 'plan.json'], repo.dir, env);

    expect(run.code).toBe(1);
    // One line for the tenant, naming it once and what to fix; none per contract; nothing read of any tenant.
    expect(run.stderr).toMatch(
      /^contract-sync plan: tenant tenant-a not started: the token endpoint rejected client cs-tenant-a \(invalid_client\).*; check the secret in environment variable SECRET_TENANT_A \(tenants\.tenant-a\.clientSecret\) and tenants\.tenant-a\.clientId; nothing of it read or sent$/m,
    );
    expect(run.stderr).toContain('1 tenant not started: no plan written');
    expect(run.stderr).not.toContain('could not start');
    expect((await requestLog(emulator!)).filter((entry) => entry.kind === 'api')).toEqual([]);
    await expect(access(path.join(repo.dir, 'plan.json'))).rejects.toThrow(/ENOENT/);
    for (const secret of Object.values(env)) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it.each([
    [['plan', '--refresh'], false, /--refresh needs reads; configure api\.read .*no plan written/],
    [['plan', '--refresh', '--no-refresh'], true, /--refresh and --no-refresh exclude each other/],
  ])('refuses %j', async (args, read, message) => {
    const { fleet, emulator, repo } = await setup({ read });

    const run = await runCli(args, repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await requestLog(emulator)).toEqual([]);
  });
});
