/**
 * An incremental `plan --refresh` says what it read live: how many contracts, and that those
 * unchanged in git were not read; when it read none, it says so and names drift and
 * plan --full --refresh. "No changes" there is not "no drift". Exit codes are those of any plan.
 */
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { refreshNote } from '../../engine/plan/render-refresh-note.ts';
import { parsePlan } from '../../engine/plan/read-plan.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { EMPTY_SAVED_PLAN } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

let emulator: Emulator | undefined;
const repos: TestRepo[] = [];

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  await Promise.all(repos.splice(0).map((repo) => repo.cleanup()));
});

const NONE_READ =
  'Read live: no contract. None changed in git since the last applied commit, and contracts unchanged in git were not read, ' +
  'so this plan does not show changes made on the service; contract-sync drift (or plan --full --refresh) reads every contract.';

/** Applied once (every tenant's last applied commit is HEAD), then one contract edited on the service, outside git. */
async function applied(): Promise<{ fleet: Fleet; repo: TestRepo; edited: string }> {
  const fleet = createFleet(2, 3);
  emulator = await startEmulator(fleetSeed(fleet));
  const repo = await createRepo({ ...fleetRepoFiles(fleet, emulator, { read: true, statePath: '.contract-sync/state' }), '.gitignore': '.contract-sync/\n' });
  repos.push(repo);
  const apply = await runCli(['apply'], repo.dir, fleet.env);
  expect(apply.code, apply.stderr).toBe(0);
  const [set] = fleet.desired;
  const edited = set!.contracts[0]!;
  const response = await fetch(`${emulator.urls.adminUrl}/contracts/${set!.tenant}/${edited.id}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...edited.fields, Name: 'Edited on the service' }),
  });
  expect(response.ok).toBe(true);
  return { fleet, repo, edited: edited.id };
}

describe('plan --refresh, incremental', () => {
  it('that reads nothing says so, names drift and plan --full --refresh, and exits as before', async () => {
    const { fleet, repo } = await applied();
    const before = (await requestLog(emulator!)).length;

    const plan = await runCli(['plan', '--refresh'], repo.dir, fleet.env);
    const detailed = await runCli(['plan', '--refresh', '--detailed-exitcode'], repo.dir, fleet.env);
    const json = await runCli(['plan', '--refresh', '--format', 'json'], repo.dir, fleet.env);

    expect(plan.code, plan.stderr).toBe(0);
    expect(detailed.code).toBe(0);
    expect(plan.stdout).toContain('No changes: no contract to plan.');
    expect(plan.stdout.endsWith(`\n${NONE_READ}\n`)).toBe(true);
    // Beside a document, on stderr: the JSON stays one document.
    expect(json.code).toBe(0);
    expect(parsePlan(json.stdout).summary.contracts).toBe(0);
    expect(json.stderr).toContain(`contract-sync plan: ${NONE_READ}\n`);
    // Nothing was read indeed.
    expect((await requestLog(emulator!)).slice(before).filter((entry) => entry.kind === 'api')).toEqual([]);

    // What the note points to finds the edit; a plan without --refresh says nothing of reads.
    const full = await runCli(['plan', '--full', '--refresh', '--detailed-exitcode'], repo.dir, fleet.env);
    expect(full.code).toBe(2);
    expect(full.stdout).not.toContain('Read live:');
    expect((await runCli(['plan'], repo.dir, fleet.env)).stdout).not.toContain('Read live:');
  });

  it('that reads some says how many and that contracts unchanged in git were not read', async () => {
    const { fleet, repo, edited } = await applied();
    const [set] = fleet.desired;
    const renamed = set!.contracts[1]!;
    await repo.commit('rename one contract', {
      [set!.file]: stringify({
        tenant: set!.tenant,
        contracts: Object.fromEntries(
          set!.contracts.map((contract) => [contract.id, contract.id === renamed.id ? { ...contract.fields, Name: 'Renamed in git' } : contract.fields]),
        ),
      }),
    });
    const before = (await requestLog(emulator!)).length;

    const plan = await runCli(['plan', '--refresh', '--detailed-exitcode'], repo.dir, fleet.env);

    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain(
      '\nRead live: 1 contract, those this plan covers; contracts unchanged in git were not read (contract-sync drift, or plan --full --refresh, reads every contract).\n',
    );
    const reads = (await requestLog(emulator!)).slice(before).filter((entry) => entry.kind === 'api');
    expect(reads.map((entry) => `${entry.method} ${entry.path.replace(/^.*\//, '')}`)).toEqual([`GET ${renamed.id}`]);
    expect(reads.some((entry) => entry.path.endsWith(edited))).toBe(false);
  });

  it('a plan of every contract says nothing: every contract was read', () => {
    const plan = parsePlan(JSON.stringify(EMPTY_SAVED_PLAN));
    expect(refreshNote(plan)).toBeUndefined();
  });
});
