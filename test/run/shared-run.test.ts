/**
 * `--shard auto` (issue 24): workers that share one run through the PostgreSQL state store, as real
 * child processes against the emulator and a real PostgreSQL. What holds: every tenant is done by
 * exactly one worker, every changed contract PATCHed exactly once (counted on the emulator's
 * request log), a killed worker's tenant taken over in the same run, one history entry per run,
 * a later commit a new run, and the tenant locks keeping a worker and a plain apply apart.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { startEmulator } from '../../emulator/index.ts';
import { createRepo } from '../git/helpers.ts';
import type { CliFinished } from '../helpers/cli-child.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog, setFaults, type Fleet } from '../helpers/fleet.ts';
import { answeredPatches as patches, HOLD_MS, sharedRunWorkers, type SharedRunSetup as Setup } from '../helpers/shared-run-workers.ts';

const { server, setup, start, worker, startTakingPart, history } = sharedRunWorkers();

/** How many times each contract was PATCHed (answered 2xx). */
async function patchCounts(s: Setup): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const entry of patches(await requestLog(s.emulator))) {
    const id = decodeURIComponent(entry.path.split('/').at(-1)!);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

function changedIds(fleet: Fleet): string[] {
  return [...fleet.changed.values()].flatMap((ids) => [...ids]).sort();
}

/** The tenants a worker says it took, in order. */
function tenantsTaken(stdout: string): string[] {
  return [...stdout.matchAll(/^worker \S+ took tenant (\S+) /gm)].map((match) => match[1]!);
}

/** Runs `count` workers at once; each must exit 0. */
async function workers(s: Setup, count: number): Promise<CliFinished[]> {
  const runs = await Promise.all(Array.from({ length: count }, (_, index) => worker(s, `w${index + 1}`).finished));
  for (const run of runs) expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  return runs;
}

/** Runs `count` workers at once, each sure to take part (startTakingPart); each must exit 0. */
async function workersTakingPart(s: Setup, count: number, latencyMs: number): Promise<CliFinished[]> {
  const names = Array.from({ length: count }, (_, index) => `w${index + 1}`);
  const started = await startTakingPart(s, names, latencyMs);
  const runs = await Promise.all(started.map((run) => run.finished));
  for (const run of runs) expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  return runs;
}

function expectEachPatchedOnce(counts: ReadonlyMap<string, number>, fleet: Fleet): void {
  expect([...counts.keys()].sort()).toEqual(changedIds(fleet));
  expect([...counts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
}

describe('apply --shard auto', () => {
  it.each([2, 3])(
    '%i workers share one run: every tenant done by one of them, every changed contract PATCHed once, one history entry',
    { timeout: 120_000 },
    async (count) => {
      const s = await setup(3 * count, 12, 40);

      const runs = await workersTakingPart(s, count, 40);

      const taken = runs.map((run) => tenantsTaken(run.stdout));
      expect(taken.flat().sort()).toEqual([...s.fleet.tenants].sort());
      // Every worker took part (the PATCHes were held until every worker had joined).
      for (const [index, tenants] of taken.entries()) expect(tenants.length, runs[index]!.stdout).toBeGreaterThan(0);
      expectEachPatchedOnce(await patchCounts(s), s.fleet);
      // All joined the same run.
      const runIds = new Set(runs.map((run) => /^shared run (\S+):/m.exec(run.stdout)?.[1]));
      expect(runIds.size).toBe(1);
      const entries = await history(s);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.runId).toBe([...runIds][0]);
      expect(entries[0]!.tenants.map((tenant) => tenant.tenant)).toEqual([...s.fleet.tenants].sort());
      for (const [index, tenants] of taken.entries()) {
        for (const tenant of tenants)
          expect(entries[0]!.tenants.find((entry) => entry.tenant === tenant)).toMatchObject({ worker: `w${index + 1}`, failed: 0 });
      }
      expect(entries[0]!.tenants.reduce((sum, tenant) => sum + tenant.applied, 0)).toBe(changedIds(s.fleet).length);
      // A tenant's token, asked for as it is taken, serves its PATCHes: one token request per tenant.
      const tokens = (await requestLog(s.emulator)).filter((entry) => entry.kind === 'token' && entry.tenant !== null).map((entry) => entry.tenant);
      expect(tokens.sort()).toEqual([...s.fleet.tenants].sort());
    },
  );

  it(
    'a worker that joins a begun run reads only the files of the tenants it takes, and applies them as the first worker would',
    { timeout: 120_000 },
    async () => {
      const s = await setup(6, 12, 40);
      // The first worker's PATCHes are held until the second has joined: it takes three tenants (its lanes), the second the others.
      await setFaults(s.emulator, { api: { latencyMs: [HOLD_MS, HOLD_MS] } });
      const first = worker(s, 'first');
      while (!/^shared run \S+: worker first joined/m.test(first.stdout())) await delay(50);
      const joining = worker(s, 'joining');
      while (!/^shared run \S+: worker joining joined/m.test(joining.stdout())) await delay(50);
      await setFaults(s.emulator, { api: { latencyMs: [40, 40] } });
      const runs = await Promise.all([first.finished, joining.finished]);

      for (const run of runs) expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(runs[0]!.stdout).toMatch(/^shared run \S+: worker first joined \(6 tenants, 0 done\); it validated the whole desired state$/m);
      expect(runs[1]!.stdout).toMatch(
        /^shared run \S+: worker joining joined \(6 tenants, 0 done\); a worker that joined before validated the whole desired state; this one reads only the tenants it takes$/m,
      );
      const taken = tenantsTaken(runs[1]!.stdout);
      expect(taken.length).toBeGreaterThan(0);
      expectEachPatchedOnce(await patchCounts(s), s.fleet);
      for (const set of s.fleet.desired.filter((candidate) => taken.includes(candidate.tenant))) {
        for (const contract of set.contracts) expect((await liveContract(s.emulator, set.tenant, contract.id)).Name).toBe(contract.fields.Name);
      }
      expect((await history(s))[0]!.tenants.filter((tenant) => tenant.worker === 'joining').map((tenant) => tenant.tenant)).toEqual([...taken].sort());
    },
  );

  it('sends nothing when any tenant has an error in its desired state: no run is begun, and every worker reports it', { timeout: 120_000 }, async () => {
    let broken = '';
    const s = await setup(4, 3, 0, {
      edit(files, fleet) {
        broken = fleet.desired.at(-1)!.file;
        files[broken] += '  broken:\n    Name: [unclosed\n';
      },
    });

    const runs = await Promise.all(['w1', 'w2'].map((name) => worker(s, name).finished));

    for (const run of runs) {
      expect(run.code, run.stdout).toBe(1);
      expect(run.stderr).toContain(broken);
      expect(run.stdout).not.toMatch(/joined|took tenant/);
    }
    expect(patches(await requestLog(s.emulator))).toEqual([]);
    expect(await history(s)).toEqual([]);
  });

  it('takes the largest tenant first', { timeout: 120_000 }, async () => {
    const s = await setup(4, 6, 0);
    // tenant-c gets many more contracts than the others.
    const big = createFleet(1, 30, 11).desired[0]!;
    const file = stringify({ tenant: 'tenant-c', contracts: Object.fromEntries(big.contracts.map((contract) => [`big-${contract.id}`, contract.fields])) });
    await s.repo.commit('a big tenant', { 'contracts/tenant-c-big.yaml': file });

    const run = await worker(s, 'solo').finished;

    expect(tenantsTaken(run.stdout)[0], run.stdout + run.stderr).toBe('tenant-c');
  });

  it("takes over a killed worker's tenant in the same run: every changed contract PATCHed exactly once", { timeout: 120_000 }, async () => {
    const s = await setup(4, 24, 60);
    const victim = worker(s, 'victim');
    // Killed halfway through its first tenants: some of their PATCHes answered, others not yet sent.
    while (patches(await requestLog(s.emulator)).length < 10) await delay(20);
    victim.child.kill('SIGKILL');
    const killed = await victim.finished;
    expect(killed.signal).toBe('SIGKILL');
    const before = patches(await requestLog(s.emulator)).length;
    expect(before).toBeLessThan(changedIds(s.fleet).length);
    const victimTook = tenantsTaken(killed.stdout);

    const [rescuer, second] = await workers(s, 2);

    // The same run: the tenants the victim did not finish are taken over, the others taken fresh.
    expect(rescuer!.stdout + second!.stdout).toMatch(/taken over from worker victim/);
    expect(
      [
        ...rescuer!.stdout.matchAll(/^shared run (\S+):/gm),
        ...second!.stdout.matchAll(/^shared run (\S+):/gm),
        ...killed.stdout.matchAll(/^shared run (\S+):/gm),
      ]
        .map((m) => m[1])
        .filter((id, index, all) => all.indexOf(id) === index),
    ).toHaveLength(1);
    expect([...tenantsTaken(rescuer!.stdout), ...tenantsTaken(second!.stdout)].sort()).toEqual(expect.arrayContaining(victimTook));
    expectEachPatchedOnce(await patchCounts(s), s.fleet);
    const entries = await history(s);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.tenants.map((tenant) => tenant.tenant)).toEqual([...s.fleet.tenants].sort());
    expect(entries[0]!.tenants.every((tenant) => tenant.worker !== 'victim' && tenant.failed === 0)).toBe(true);
  });

  it(
    'a worker whose claim sessions are cut while it lives finishes its tenants, says so, and another worker marks them done: each contract PATCHed once, each tenant listed once',
    { timeout: 120_000 },
    async () => {
      const s = await setup(4, 24, 60);
      const cut = worker(s, 'cut');
      while (patches(await requestLog(s.emulator)).length < 4) await delay(20);
      // PATCHes held while the sessions are cut and the second worker starts: no tenant of the cut worker ends meanwhile.
      await setFaults(s.emulator, { api: { latencyMs: [HOLD_MS, HOLD_MS] } });
      const { rows } = await server().query(
        "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%SKIP LOCKED%') AS cut",
        s.database,
      );
      expect((rows[0] as { n: number }).n).toBeGreaterThan(0);
      const other = worker(s, 'other');
      while (!/^shared run \S+: worker other joined/m.test(other.stdout())) await delay(50);
      await setFaults(s.emulator, { api: { latencyMs: [60, 60] } });

      const [cutRun, otherRun] = await Promise.all([cut.finished, other.finished]);

      expect(cutRun.code, cutRun.stderr).toBe(0);
      expect(otherRun.code, otherRun.stderr).toBe(0);
      const lost = [...cutRun.stdout.matchAll(/^worker cut lost its claim of tenant (\S+) \(its database session ended\)/gm)].map((m) => m[1]!);
      expect(lost.length, cutRun.stdout).toBeGreaterThan(0);
      expect(tenantsTaken(otherRun.stdout)).toEqual(expect.arrayContaining(lost));
      expectEachPatchedOnce(await patchCounts(s), s.fleet);
      const entries = await history(s);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.tenants.map((tenant) => tenant.tenant)).toEqual([...s.fleet.tenants].sort());
      for (const tenant of lost) expect(entries[0]!.tenants.find((entry) => entry.tenant === tenant)).toMatchObject({ worker: 'other', failed: 0 });
    },
  );

  it('a later commit is a new run; the same commit again joins the finished run and sends nothing', { timeout: 120_000 }, async () => {
    const s = await setup(3, 6, 0);
    const [first] = await workers(s, 1);
    const firstRun = /^shared run (\S+):/m.exec(first!.stdout)![1];
    const patchedFirst = patches(await requestLog(s.emulator)).length;

    const again = await worker(s, 'again').finished;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`shared run ${firstRun}: worker again joined (3 tenants, 3 done)`);
    expect(tenantsTaken(again.stdout)).toEqual([]);
    expect(patches(await requestLog(s.emulator)).length).toBe(patchedFirst);

    const set = s.fleet.desired[1]!;
    const renamed = stringify({
      tenant: set.tenant,
      contracts: Object.fromEntries(set.contracts.map((contract) => [contract.id, { ...contract.fields, Name: `later ${contract.id}` }])),
    });
    await s.repo.commit('later', { [set.file]: renamed });
    const later = await worker(s, 'later').finished;

    expect(later.code, later.stderr).toBe(0);
    const laterRun = /^shared run (\S+): worker later joined \(3 tenants, 0 done\)/m.exec(later.stdout)?.[1];
    expect(laterRun).toBeDefined();
    expect(laterRun).not.toBe(firstRun);
    expect(patches(await requestLog(s.emulator)).length).toBe(patchedFirst + set.contracts.length);
    const entries = await history(s);
    expect(entries.map((entry) => entry.runId).sort()).toEqual([firstRun, laterRun].sort());
  });

  it('a worker and a plain apply on the same tenants exclude each other through the tenant locks', { timeout: 120_000 }, async () => {
    const s = await setup(3, 24, 40);
    const plain = start(s, ['apply', '--ref', 'HEAD', '--tenant', 'tenant-a', '--lock-timeout', '120']);
    // The plain apply holds tenant-a's lock and is sending when the worker starts.
    while (patches(await requestLog(s.emulator)).length < 3) await delay(20);
    const shared = worker(s, 'w1');

    const [plainRun, sharedRun] = await Promise.all([plain.finished, shared.finished]);

    expect(plainRun.code, plainRun.stderr).toBe(0);
    expect(sharedRun.code, sharedRun.stderr).toBe(0);
    expectEachPatchedOnce(await patchCounts(s), s.fleet);
    // The worker took tenant-a too, after the plain apply released it: nothing left to send.
    const entry = (await history(s)).find((candidate) => candidate.tenants.some((tenant) => tenant.worker === 'w1'))!;
    expect(entry.tenants.find((tenant) => tenant.tenant === 'tenant-a')).toMatchObject({ worker: 'w1', applied: 0, failed: 0 });
  });

  it(
    'drift --fix: two workers share one run, each fixing its tenants; every drifted contract PATCHed once, one history entry',
    { timeout: 120_000 },
    async () => {
      const s = await setup(4, 12, 40);

      const runs = await Promise.all(
        ['d1', 'd2'].map((name) => start(s, ['drift', '--fix', '--shard', 'auto', '--ref', 'HEAD'], { CONTRACT_SYNC_WORKER: name }).finished),
      );

      for (const run of runs) expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const taken = runs.map((run) => tenantsTaken(run.stdout));
      expect(taken.flat().sort()).toEqual([...s.fleet.tenants].sort());
      expectEachPatchedOnce(await patchCounts(s), s.fleet);
      const entries = await history(s);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.command).toBe('drift --fix');
      expect(entries[0]!.tenants.map((tenant) => [tenant.tenant, tenant.worker])).toEqual(
        [...s.fleet.tenants].sort().map((tenant) => [tenant, taken[0]!.includes(tenant) ? 'd1' : 'd2']),
      );
    },
  );

  it('is refused with a file store, saying why; nothing is sent', { timeout: 60_000 }, async () => {
    const fleet = createFleet(1, 2);
    const emulator = await startEmulator(fleetSeed(fleet));
    onTestFinished(() => emulator.close());
    const repo = await createRepo(fleetRepoFiles(fleet, emulator, { statePath: '.contract-sync/state' }));
    onTestFinished(() => repo.cleanup());

    const run = await worker({ repo, env: fleet.env }, 'w1').finished;

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--shard auto shares one run between workers through the PostgreSQL state store');
    expect(run.stderr).toContain('use --shard I/N with it');
    expect(await requestLog(emulator)).toEqual([]);
  });
});
