/**
 * Issue 41, item 6, end to end: a Retry-After beyond what contract-sync waits says that the retry
 * was skipped and why (against the emulator's injected 503s).
 */
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, setFaults } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

describe('Retry-After beyond the longest wait', () => {
  it('a PATCH answered 503 with Retry-After: 86400 fails at once, saying the retry was skipped and why', async () => {
    const fleet = createFleet(1, 4);
    emulator = await startEmulator(fleetSeed(fleet));
    const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator));
    cleanups.push(cleanup);
    const changed = [...fleet.changed.get('tenant-a')!][0]!;
    await setFaults(emulator, { seed: 1, api: { status: { '503': 1 }, retryAfterSeconds: 86_400 } });
    const started = Date.now();

    const run = await runCli(['apply', '--auto-approve', '--target', `tenant-a/${changed}`], dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `503: PATCH /contract/${changed}: 503 Service Unavailable: {"error":"injected_fault","message":"injected fault: 503"}; not retried: the service asked to wait 86400 s (Retry-After), longer than the 300 s contract-sync waits for one request; run again later`,
    );
    const patches = (await requestLog(emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH');
    expect(patches).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);
});
