/** apply and drift --fix record each run in the state store's history; a dry run does not; a failed history write only warns. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { fileStateStore } from '../../engine/state/index.ts';
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

const CI = {
  GITHUB_ACTIONS: 'true',
  GITHUB_ACTOR: 'octocat',
  GITHUB_RUN_ID: '42',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_REPOSITORY: 'acme/contracts',
};

async function fleetRepo(): Promise<{ dir: string; env: Record<string, string>; fleet: ReturnType<typeof createFleet> }> {
  const fleet = createFleet(2, 3);
  emulator = await startEmulator(fleetSeed(fleet));
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true }));
  cleanups.push(cleanup);
  return { dir, env: { ...fleet.env, ...CI }, fleet };
}

it('records an apply with who started it and each tenant outcome; a dry run records nothing', async () => {
  const { dir, env, fleet } = await fleetRepo();

  const dry = await runCli(['apply', '--dry-run'], dir, env);
  const afterDry = await fileStateStore(path.join(dir, '.contract-sync/state')).readHistory();
  const apply = await runCli(['apply'], dir, env);
  const history = await fileStateStore(path.join(dir, '.contract-sync/state')).readHistory();

  expect(dry.code, dry.stderr).toBe(0);
  expect(afterDry).toEqual([]);
  expect(apply.code, apply.stderr).toBe(0);
  expect(history).toHaveLength(1);
  expect(history[0]).toMatchObject({
    command: 'apply',
    runId: expect.any(String),
    startedBy: { ci: 'github', actor: 'octocat', ciRunId: '42', url: 'https://github.com/acme/contracts/actions/runs/42' },
    tenants: fleet.tenants.map((tenant) => ({ tenant, changed: fleet.changed.get(tenant)!.size, applied: fleet.changed.get(tenant)!.size, failed: 0 })),
  });
  expect(Date.parse(history[0]!.finishedAt)).toBeGreaterThanOrEqual(Date.parse(history[0]!.startedAt));
});

it('records drift --fix, and not a drift without --fix', async () => {
  const { dir, env } = await fleetRepo();

  const drift = await runCli(['drift'], dir, env);
  const fix = await runCli(['drift', '--fix'], dir, env);
  const history = await fileStateStore(path.join(dir, '.contract-sync/state')).readHistory();

  expect(drift.code, drift.stderr).toBe(0);
  expect(fix.code, fix.stderr).toBe(0);
  expect(history.map((entry) => entry.command)).toEqual(['drift --fix']);
});

it('only warns when the history cannot be written: the apply still succeeds and its records are kept', async () => {
  const { dir, env, fleet } = await fleetRepo();
  // A file where the history directory belongs.
  await mkdir(path.join(dir, '.contract-sync/state'), { recursive: true });
  await writeFile(path.join(dir, '.contract-sync/state/.history'), 'not a directory');

  const apply = await runCli(['apply'], dir, env);
  const records = await fileStateStore(path.join(dir, '.contract-sync/state')).listRecords(fleet.tenants[0]!);

  expect(apply.code, apply.stderr).toBe(0);
  expect(apply.stderr).toMatch(/contract-sync apply: warning: the run history could not be written \(.+\); the run itself is recorded/);
  expect(records.length).toBeGreaterThan(0);
});
