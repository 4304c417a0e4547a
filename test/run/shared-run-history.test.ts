/**
 * Issue 41, item 2: a shared run's one history entry counts what the run applied, by whichever
 * worker, however its part ended: after a worker is SIGKILLed, after the claim sessions are
 * terminated (`pg_terminate_backend`) while the server runs, and after a PostgreSQL restart
 * (`pg_ctl stop -m immediate`, start) followed by a recovery run. Each tenant's `applied` is set
 * beside the emulator's own count of the contracts it changed (PATCHes answered 2xx, by ContractId).
 * Also item 1: no worker crashes with a stack trace, and each says what happened to it. A real
 * PostgreSQL, the emulator, and the CLI as child processes.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RunHistoryEntry } from '../../engine/state/history.ts';
import type { CliFinished } from '../helpers/cli-child.ts';
import { requestLog } from '../helpers/fleet.ts';
import { answeredPatches, sharedRunWorkers, type SharedRunSetup as Setup } from '../helpers/shared-run-workers.ts';

// A server stopped at once keeps every COMMIT it acknowledged, as in production: what the run recorded is what it counts.
const { server, setup, worker, startTakingPart, history } = sharedRunWorkers({ durableCommits: true });

/** Waits until the service has answered `count` PATCHes. */
async function patchesAnswered(s: Setup, count: number): Promise<void> {
  while (answeredPatches(await requestLog(s.emulator)).length < count) await delay(20);
}

/**
 * Per tenant: what the run's one history entry says it applied, the contracts the service changed
 * (distinct ContractIds whose PATCH it answered 2xx), and the PATCHes it answered.
 */
async function countsBeside(
  s: Setup,
): Promise<{ entries: RunHistoryEntry[]; counts: Record<string, { history: number; changedOnService: number; answered: number }> }> {
  const entries = await history(s);
  const answered = answeredPatches(await requestLog(s.emulator));
  const counts: Record<string, { history: number; changedOnService: number; answered: number }> = {};
  for (const tenant of s.fleet.tenants) {
    const mine = answered.filter((entry) => entry.tenant === tenant);
    counts[tenant] = {
      history: entries[0]?.tenants.find((line) => line.tenant === tenant)?.applied ?? -1,
      changedOnService: new Set(mine.map((entry) => entry.path)).size,
      answered: mine.length,
    };
  }
  return { entries, counts };
}

/** Every tenant's history count equals what the service changed for it, which is every changed contract of the fleet, each PATCHed once. */
function expectCountedAsOnService(s: Setup, counts: Awaited<ReturnType<typeof countsBeside>>['counts']): void {
  const expected = Object.fromEntries(
    s.fleet.tenants.map((tenant) => [
      tenant,
      { history: s.fleet.changed.get(tenant)!.size, changedOnService: s.fleet.changed.get(tenant)!.size, answered: s.fleet.changed.get(tenant)!.size },
    ]),
  );
  expect(counts).toEqual(expected);
}

/** A worker that stopped said what happened in one line of its own and printed no stack trace. */
function expectNoCrash(run: CliFinished): void {
  expect(run.stderr, run.stderr).not.toContain('internal error');
  expect(run.stderr, run.stderr).not.toMatch(/^\s+at /m);
}

describe("a shared run's history counts what was applied, by whichever worker, however it ended", () => {
  it('a worker SIGKILLed mid-run: the tenants taken over count what it applied', { timeout: 180_000 }, async () => {
    const s = await setup(4, 24, 60);
    const victim = worker(s, 'victim');
    // Killed while its first tenants are half sent: some of their PATCHes answered and recorded, others not yet sent.
    await patchesAnswered(s, 12);
    victim.child.kill('SIGKILL');
    expect((await victim.finished).signal).toBe('SIGKILL');
    const before = answeredPatches(await requestLog(s.emulator)).length;

    const rescuers = await Promise.all([worker(s, 'rescuer').finished, worker(s, 'second').finished]);

    for (const run of rescuers) expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const { entries, counts } = await countsBeside(s);
    expect(entries).toHaveLength(1);
    expectCountedAsOnService(s, counts);
    // The tenants the victim held say so; what it applied before it died is in their count all the same.
    const takenOver = entries[0]!.tenants.filter((tenant) => tenant.takenOverFrom?.includes('victim'));
    expect(takenOver.length).toBeGreaterThan(0);
    expect(takenOver.reduce((sum, tenant) => sum + tenant.applied, 0)).toBeGreaterThan(0);
    expect(before).toBeLessThan(changedTotal(s));
    expect(entries[0]!.tenants.every((tenant) => tenant.failed === 0 && tenant.unknown === undefined)).toBe(true);
  });

  it(
    'a worker SIGKILLed, no reads configured: what it had in flight and no read can settle is said (unknown), never counted as applied',
    { timeout: 180_000 },
    async () => {
      const s = await setup(4, 24, 60, { read: false });
      const victim = worker(s, 'victim');
      await patchesAnswered(s, 12);
      victim.child.kill('SIGKILL');
      await victim.finished;

      const rescuer = await worker(s, 'rescuer').finished;

      // Its Add/Remove patches left in flight are not sent blindly: those contracts fail, named, and the run exits 1.
      expectNoCrash(rescuer);
      expect(rescuer.code === 0 || /not sent blindly/.test(rescuer.stdout), `${rescuer.stdout}\n${rescuer.stderr}`).toBe(true);
      const { entries, counts } = await countsBeside(s);
      expect(entries).toHaveLength(1);
      for (const line of entries[0]!.tenants) {
        const { changedOnService } = counts[line.tenant]!;
        // Every contract counted was changed on the service; one changed and not counted is among those said unknown.
        expect(line.applied, line.tenant).toBeLessThanOrEqual(changedOnService);
        expect(changedOnService - line.applied, line.tenant).toBeLessThanOrEqual(line.unknown ?? 0);
        expect(line.failed, line.tenant).toBe(line.unknown ?? 0);
      }
      expect(entries[0]!.tenants.some((line) => line.takenOverFrom?.includes('victim'))).toBe(true);
    },
  );

  it(
    'the claim sessions terminated with pg_terminate_backend while three workers run: no stack trace, each says so, every tenant counted',
    { timeout: 180_000 },
    async () => {
      const s = await setup(6, 24, 150);
      // PATCHes held until every worker has joined, so that all three take part.
      const workers = await startTakingPart(s, ['w1', 'w2', 'w3'], 150);
      await patchesAnswered(s, 20);

      const { rows } = await server().query(
        `SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND query LIKE '%shared_run_tenants%FOR UPDATE%') AS cut`,
        s.database,
      );
      expect((rows[0] as { n: number }).n).toBeGreaterThan(0);
      const runs = await Promise.all(workers.map((run) => run.finished));

      for (const run of runs) {
        expectNoCrash(run);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      }
      const said = runs.map((run) => run.stdout).join('');
      expect(said).toMatch(/^worker w\d lost its claim of tenant \S+ \(its database session ended\)/m);
      const { entries, counts } = await countsBeside(s);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.tenants.map((tenant) => tenant.tenant)).toEqual([...s.fleet.tenants].sort());
      expectCountedAsOnService(s, counts);
    },
  );

  it(
    'PostgreSQL stopped (-m immediate) mid-run, started again, then a recovery run: every worker stops in one line; the entry counts both passes',
    { timeout: 180_000 },
    async () => {
      const s = await setup(4, 24, 60);
      const workers = ['w1', 'w2', 'w3'].map((name) => worker(s, name));
      await patchesAnswered(s, 12);

      await server().halt();
      let stopped: CliFinished[];
      try {
        stopped = await Promise.all(workers.map((run) => run.finished));
      } finally {
        await server().restart();
      }
      const beforeRecovery = answeredPatches(await requestLog(s.emulator)).length;
      const recovery = await worker(s, 'recovery').finished;

      for (const run of stopped) {
        expectNoCrash(run);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
        expect(run.stderr).toMatch(
          /PostgreSQL state store \(127\.0\.0\.1:\d+, database "[^"]+"\).*; run the same command again once the state store is reachable\n$/,
        );
      }
      expect(recovery.code, `${recovery.stdout}\n${recovery.stderr}`).toBe(0);
      expect(beforeRecovery).toBeLessThan(changedTotal(s));
      const { entries, counts } = await countsBeside(s);
      expect(entries).toHaveLength(1);
      expectCountedAsOnService(s, counts);
    },
  );
});

function changedTotal(s: Setup): number {
  return [...s.fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
}
