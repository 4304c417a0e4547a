/** `--shard I/N` on plan, apply and drift, in-process against the emulator: what each shard takes, and what is refused. */
import { describe, expect, it } from 'vitest';
import { shardOf } from '../../engine/desired/shard.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function setup(tenants = 6) {
  const fleet: Fleet = createFleet(tenants, 3);
  emulator = await startEmulator(fleetSeed(fleet));
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true }));
  cleanups.push(cleanup);
  return { fleet, dir };
}

function onShard(fleet: Fleet, index: number, count: number): string[] {
  return fleet.tenants.filter((tenant) => shardOf(tenant, count) === index);
}

/** The tenants of a plan document printed by `plan --format json`. */
function planTenants(stdout: string): string[] {
  return (JSON.parse(stdout) as { tenants: { tenant: string }[] }).tenants.map((tenant) => tenant.tenant);
}

async function apiTenants(method: string): Promise<string[]> {
  return (await requestLog(emulator!)).filter((entry) => entry.kind === 'api' && entry.method === method).map((entry) => entry.tenant ?? '?');
}

describe('--shard', () => {
  it('plan: the shards of 3 take every tenant once, each saying which shard it is', async () => {
    const { fleet, dir } = await setup();

    const runs = [];
    for (const index of [1, 2, 3]) runs.push(await runCli(['plan', '--shard', `${index}/3`, '--format', 'json'], dir, fleet.env));

    const planned = runs.map((run) => planTenants(run.stdout));
    runs.forEach((run, index) => {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`shard ${index + 1}/3: ${onShard(fleet, index + 1, 3).length} of 6 tenants`);
      expect(planned[index]).toEqual(onShard(fleet, index + 1, 3));
    });
    expect(planned.flat().sort()).toEqual([...fleet.tenants]);
  });

  it('plan --format text says the run was sharded on stdout', async () => {
    const { fleet, dir } = await setup();

    const run = await runCli(['plan', '--shard', '2/2'], dir, fleet.env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(`shard 2/2: ${onShard(fleet, 2, 2).length} of 6 tenants`);
  });

  it('apply: two shards together apply every changed contract once, each only to its tenants', async () => {
    const { fleet, dir } = await setup();

    const first = await runCli(['apply', '--shard', '1/2'], dir, fleet.env);
    const afterFirst = await apiTenants('PATCH');
    const second = await runCli(['apply', '--shard', '2/2'], dir, fleet.env);
    const all = await apiTenants('PATCH');

    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(first.stdout).toContain(`shard 1/2: ${onShard(fleet, 1, 2).length} of 6 tenants`);
    expect(new Set(afterFirst)).toEqual(new Set(onShard(fleet, 1, 2)));
    expect(new Set(all.slice(afterFirst.length))).toEqual(new Set(onShard(fleet, 2, 2)));
    expect(all).toHaveLength(6 * 2);
  });

  it('with --tenant, takes the tenants named that are on the shard', async () => {
    const { fleet, dir } = await setup();
    const [on] = onShard(fleet, 1, 2);
    const [off] = onShard(fleet, 2, 2);

    const run = await runCli(['plan', '--shard', '1/2', '--tenant', on!, '--tenant', off!, '--format', 'json'], dir, fleet.env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('shard 1/2: 1 of 2 tenants');
    expect(planTenants(run.stdout)).toEqual([on]);
  });

  it('drift: reads only the tenants of its shard', async () => {
    const { fleet, dir } = await setup();

    const run = await runCli(['drift', '--shard', '3/3'], dir, fleet.env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`shard 3/3: ${onShard(fleet, 3, 3).length} of 6 tenants`);
    expect(new Set(await apiTenants('GET'))).toEqual(new Set(onShard(fleet, 3, 3)));
  });

  it('a shard without tenants exits 0, says so, and sends nothing', async () => {
    const { fleet, dir } = await setup(2);
    const count = 16;
    const empty = Array.from({ length: count }, (_, index) => index + 1).find((index) => onShard(fleet, index, count).length === 0)!;

    const apply = await runCli(['apply', '--shard', `${empty}/${count}`], dir, fleet.env);
    const plan = await runCli(['plan', '--shard', `${empty}/${count}`, '--detailed-exitcode'], dir, fleet.env);
    const drift = await runCli(['drift', '--shard', `${empty}/${count}`, '--detailed-exitcode'], dir, fleet.env);

    for (const run of [apply, plan, drift]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`shard ${empty}/${count}: 0 of 2 tenants; nothing to do on this shard`);
    }
    expect(await requestLog(emulator!)).toEqual([]);
  });

  it.each([
    [['plan', '--shard', '0/4'], '--shard "0/4": the shard must be between 1 and 4'],
    [['apply', '--shard', '5/4'], '--shard "5/4": the shard must be between 1 and 4'],
    [['drift', '--shard', 'two'], '--shard "two" is not I/N'],
    [['plan', '--shard', '1/0'], '--shard "1/0": the number of shards must be at least 1'],
    [['apply', 'plan.json', '--shard', '1/2'], '--shard cannot be used with a plan file'],
    [['plan', '--shard', 'auto'], '--shard auto shares a run that sends between workers (apply, drift --fix); plan sends nothing: use --shard I/N'],
    [['drift', '--shard', 'auto'], '--shard auto shares a run that sends between workers; drift without --fix sends nothing: use --shard I/N'],
    [['apply', '--shard', 'auto', '--dry-run'], '--shard auto shares a run that sends between workers; a dry run sends nothing: use --shard I/N'],
    [['apply', '--shard', 'auto'], '--shard auto shares one run between workers through the PostgreSQL state store'],
  ])('refuses %j', async (args, message) => {
    const { fleet, dir } = await setup(1);

    const run = await runCli(args, dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(await requestLog(emulator!)).toEqual([]);
  });
});
