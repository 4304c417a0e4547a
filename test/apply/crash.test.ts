/**
 * Crash safety: `contract-sync apply` killed with SIGKILL mid-run, in a real child process, at
 * several points. The state store must stay readable and the next run must finish the work
 * without sending any contract's change a second time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diffContract } from '../../engine/plan/diff.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator, type RequestLogEntry } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog } from '../helpers/fleet.ts';

const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

function applied(log: readonly RequestLogEntry[]): RequestLogEntry[] {
  return log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH' && entry.status === 204);
}

async function killAfterPatches(child: ChildProcess, count: number): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`apply finished before ${count} patches; slow it down`);
    if (applied(await requestLog(emulator!)).length >= count) break;
    await delay(5);
  }
  child.kill('SIGKILL');
  await exited;
}

describe('apply killed mid-run', () => {
  it.each([3, 40, 110])('is finished by the next run after SIGKILL at %i patches, without resending', { timeout: 60_000 }, async (killAt) => {
    const fleet = createFleet(2, 90, killAt);
    emulator = await startEmulator(fleetSeed(fleet));
    // 40 requests/s per tenant: the run takes ~2 s, long enough to be killed in the middle.
    const { dir, cleanup } = await writeTree(
      fleetRepoFiles(fleet, emulator, { read: true, rate: '{ requestsPerSecond: 40, concurrency: 2, maxInFlight: 4 }' }),
    );
    cleanups.push(cleanup);
    const changed = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);

    // --allow-removals: the fleet removes 30 members per tenant, over the removal guard's default of 25.
    const child = spawn(process.execPath, [BIN, 'apply', '--allow-removals'], { cwd: dir, env: { ...process.env, ...fleet.env }, stdio: 'ignore' });
    await killAfterPatches(child, killAt);
    const store = fileStateStore(path.join(dir, '.contract-sync/state'));
    const readable = await Promise.all(fleet.tenants.map((tenant) => store.readTenant(tenant)));
    const next = await runCli(['apply', '--allow-removals', '--lock-timeout', '10'], dir, fleet.env);

    // Killed mid-run: not every changed contract recorded (the unchanged ones are recorded before the first PATCH).
    const recordedChanged = fleet.tenants.reduce(
      (sum, tenant, index) => sum + [...fleet.changed.get(tenant)!].filter((id) => readable[index]!.has(id)).length,
      0,
    );
    expect(recordedChanged).toBeLessThan(changed);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    const log = await requestLog(emulator);
    const byPath = new Map<string, number>();
    for (const entry of applied(log)) byPath.set(entry.path, (byPath.get(entry.path) ?? 0) + 1);
    expect([...byPath.values()].filter((count) => count > 1)).toEqual([]);
    expect(byPath.size).toBe(changed);
    expect(log.filter((entry) => entry.status === 409)).toEqual([]);
    for (const set of fleet.desired) {
      for (const contract of set.contracts) expect(diffContract(await liveContract(emulator, set.tenant, contract.id), contract.fields)).toEqual([]);
    }
  });
});
