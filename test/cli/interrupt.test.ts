/**
 * Ctrl-C and CI cancellation, as real processes of bin/contract-sync-dev.js (the sources) against
 * the emulator, signalled halfway through sending: the run stops starting requests, lets those in
 * flight finish, records every answered PATCH, releases every lock, says what it sent and did not,
 * and exits 130 (SIGINT) or 143 (SIGTERM). The next run reads and sends only what was not recorded.
 * A run killed outright leaves a lock that `state list` shows as stale.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { startCli, type CliChild } from '../helpers/cli-child.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';
import { createRepo } from '../git/helpers.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

function start(args: readonly string[], cwd: string, env: Record<string, string>): CliChild {
  return startCli(args, { cwd, env: { ...process.env, ...env, CONTRACT_SYNC_LOG_LEVEL: 'warn' } });
}

/** A git repository of 2 tenants x 60 contracts (80 to change), sent at 20 requests/s per tenant: about 2 s of sending. */
async function setup(): Promise<{ fleet: Fleet; dir: string; stateDir: string; changed: number }> {
  const fleet = createFleet(2, 60);
  emulator = await startEmulator(fleetSeed(fleet));
  const repo = await createRepo({
    ...fleetRepoFiles(fleet, emulator, { read: true, statePath: '.contract-sync/state', rate: '{ requestsPerSecond: 20, concurrency: 2, maxInFlight: 4 }' }),
    '.gitignore': '.contract-sync/\n',
  });
  cleanups.push(() => repo.cleanup());
  return {
    fleet,
    dir: repo.dir,
    stateDir: path.join(repo.dir, '.contract-sync/state'),
    changed: [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0),
  };
}

async function lockFiles(stateDir: string, fleet: Fleet): Promise<string[]> {
  const found: string[] = [];
  for (const tenant of fleet.tenants) {
    const names = await readdir(path.join(stateDir, tenant)).catch(() => [] as string[]);
    if (names.includes('.lock')) found.push(tenant);
  }
  return found;
}

function apiCalls(log: Awaited<ReturnType<typeof requestLog>>, method: string, status?: number): string[] {
  return log
    .filter((entry) => entry.kind === 'api' && entry.method === method && (status === undefined || entry.status === status))
    .map((entry) => entry.path.replace(/^.*\//, ''));
}

describe.skipIf(process.platform === 'win32')('an apply interrupted by a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'on %s stops sending, records every answered PATCH, frees its locks, exits %i; the next run reads and sends only what was not recorded',
    { timeout: 90_000 },
    async (signal, exitCode) => {
      const { fleet, dir, stateDir, changed } = await setup();

      // No terminal: the plain progress lines; the first quarter of sending is the moment to stop it.
      const first = start(['apply', '--lock-timeout', '10'], dir, fleet.env);
      await first.waitFor('stderr', /^contract-sync apply: sending \d+\/\d+ contracts \((2[5-9]|[3-4]\d)%\)/m);
      first.child.kill(signal);
      const stopped = await first.finished;

      expect(stopped.code, stopped.stderr).toBe(exitCode);
      expect(stopped.stderr).toContain(`contract-sync: ${signal}: stopping: no new request starts`);
      const said = /^Interrupted: (\d+) contracts? sent, (\d+) not sent; run apply again to finish$/m.exec(stopped.stdout);
      expect(said, stopped.stdout).not.toBeNull();
      const [sent, notSent] = [Number(said![1]), Number(said![2])];
      expect(sent + notSent).toBe(changed);
      expect(sent).toBeGreaterThan(0);
      expect(notSent).toBeGreaterThan(0);

      // Every lock released.
      expect(await lockFiles(stateDir, fleet)).toEqual([]);
      // Every answered PATCH is recorded, and no other contract was patched.
      const firstLog = await requestLog(emulator!);
      const patched = apiCalls(firstLog, 'PATCH', 204);
      expect(apiCalls(firstLog, 'PATCH')).toHaveLength(patched.length);
      expect(patched).toHaveLength(sent);
      const store = fileStateStore(stateDir);
      const pendingIds = new Set<string>();
      for (const tenant of fleet.tenants) {
        const run = await store.readRun(tenant);
        // The commit advances: what was not sent is pending, and only that.
        expect(run?.lastAppliedCommit).toMatch(/^[0-9a-f]{40}$/);
        for (const entry of run?.pending ?? []) {
          expect(entry).toMatchObject({ outcome: 'failed', reason: 'not sent: the run was interrupted' });
          pendingIds.add(entry.contractId);
        }
        const records = await store.readTenant(tenant);
        for (const id of patched.filter((contractId) => contractId.startsWith(`${tenant}-`))) expect(records.get(id), id).toBeDefined();
      }
      expect(pendingIds.size).toBe(notSent);
      expect(patched.filter((id) => pendingIds.has(id))).toEqual([]);

      // The second run: reads only the contracts not sent, and sends them.
      const second = await start(['apply', '--lock-timeout', '10'], dir, fleet.env).finished;
      expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(0);
      const secondLog = (await requestLog(emulator!)).slice(firstLog.length);
      expect(apiCalls(secondLog, 'GET').sort()).toEqual([...pendingIds].sort());
      expect(apiCalls(secondLog, 'PATCH', 204).sort()).toEqual([...pendingIds].sort());
      for (const tenant of fleet.tenants) expect((await store.readRun(tenant))?.pending).toEqual([]);
      expect(await lockFiles(stateDir, fleet)).toEqual([]);
    },
  );

  it('killed outright, leaves locks that state list shows as stale, not held; the next run takes them over', { timeout: 90_000 }, async () => {
    const { fleet, dir, stateDir } = await setup();
    const first = start(['apply', '--lock-timeout', '10'], dir, fleet.env);
    await first.waitFor('stderr', /^contract-sync apply: sending /m);
    first.child.kill('SIGKILL');
    await first.finished;
    expect(await lockFiles(stateDir, fleet)).toEqual(fleet.tenants);

    const listed = await start(['state', 'list'], dir, {}).finished;

    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines).toHaveLength(fleet.tenants.length);
    for (const line of lines) {
      expect(line).toContain(`stale lock (its process ${first.child.pid} is not running on this host; the next run takes it over) of owner`);
      expect(line).not.toContain('locked by');
    }
    const again = await start(['apply', '--lock-timeout', '10'], dir, fleet.env).finished;
    expect(again.code, again.stderr).toBe(0);
    expect((await start(['state', 'list'], dir, {}).finished).stdout).not.toContain('lock (');
  });
});
