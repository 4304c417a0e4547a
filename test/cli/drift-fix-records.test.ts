/** `drift --fix` records what it read, like apply: afterwards a plan from the state store shows what a live read shows. */
import { expect, it } from 'vitest';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

it('drift --fix on an empty state store leaves one that plans 0 changes, nothing unknown, without a refresh', async () => {
  const fleet = createFleet(2, 6);
  emulator = await startEmulator(fleetSeed(fleet));
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true }));
  cleanups.push(cleanup);

  const fix = await runCli(['drift', '--fix'], dir, fleet.env);
  const plan = await runCli(['plan', '--format', 'json'], dir, fleet.env);

  expect(fix.code, fix.stdout + fix.stderr).toBe(0);
  expect(plan.code, plan.stderr).toBe(0);
  const document = JSON.parse(plan.stdout) as PlanDocument;
  expect(document.summary).toMatchObject({ contracts: 12, changed: 0 });
  expect(new Set(document.tenants.flatMap((tenant) => tenant.contracts.map((contract) => contract.knownFrom)))).toEqual(new Set(['state']));
});
