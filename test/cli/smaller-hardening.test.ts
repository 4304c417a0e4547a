/**
 * Issue 41, item 6, end to end: a Retry-After beyond what contract-sync waits says that the retry
 * was skipped and why (against the emulator's injected 503s); a saved plan carrying another
 * tenant's contract is refused with the true reason (a real git repository, plan --out, apply).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, setFaults } from '../helpers/fleet.ts';
import { createRepo } from '../git/helpers.ts';

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

describe("a saved plan carrying another tenant's contract", () => {
  it('is refused naming where the plan says it is declared, never as a known state that moved; nothing of it is sent', async () => {
    const fleet = createFleet(2, 3);
    emulator = await startEmulator(fleetSeed(fleet));
    const repo = await createRepo(fleetRepoFiles(fleet, emulator, { read: true }));
    cleanups.push(() => repo.cleanup());
    const planned = await runCli(['plan', '--refresh', '--out', 'plan.json'], repo.dir, fleet.env);
    const plan = JSON.parse(await readFile(path.join(repo.dir, 'plan.json'), 'utf8')) as PlanDocument;
    // Move one of tenant-b's changed contracts into tenant-a's section, as a hand-edited or mixed-up plan would.
    const [tenantA, tenantB] = plan.tenants as [PlanDocument['tenants'][number], PlanDocument['tenants'][number]];
    const moved = tenantB.contracts.find((contract) => contract.action === 'update')!;
    const edited = {
      ...plan,
      tenants: [
        { ...tenantA, contracts: [...tenantA.contracts, moved] },
        { ...tenantB, contracts: tenantB.contracts.filter((contract) => contract !== moved) },
      ],
    };
    await writeFile(path.join(repo.dir, 'plan.json'), JSON.stringify(edited));

    const applied = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(planned.code, planned.stderr).toBe(0);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain(
      `tenant-a ${moved.id} (${moved.file}:${moved.line}) refused: stale plan: at the plan's commit this tenant declares no contract ${moved.id}, which the plan lists from ${moved.file}:${moved.line}; run contract-sync plan again`,
    );
    expect(applied.stdout).not.toContain('changed since the plan was made');
    expect(applied.stdout).toContain('Apply: 3 of 4 contracts changed');
    const patched = (await requestLog(emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').map((entry) => entry.path);
    expect(patched).not.toContain(`/contract/${moved.id}`);
  }, 30_000);
});
