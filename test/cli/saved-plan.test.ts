/**
 * `plan --out PLAN.json` then `apply PLAN.json`: real git repositories, the in-process emulator
 * over real HTTP, and the file state store.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { applyOps } from '../../engine/model/apply-ops.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { parsePlan } from '../../engine/plan/read-plan.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

let emulator: Emulator | undefined;
const repos: TestRepo[] = [];

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  await Promise.all(repos.splice(0).map((repo) => repo.cleanup()));
});

interface Setup {
  readonly fleet: Fleet;
  readonly emulator: Emulator;
  readonly repo: TestRepo;
  /** The commit holding the fleet's desired state. */
  readonly commit: string;
}

/** Two tenants of three contracts (two of each to change), committed, the state store matching the service. */
async function setup(): Promise<Setup> {
  const fleet = createFleet(2, 3);
  emulator = await startEmulator(fleetSeed(fleet));
  const repo = await createRepo(fleetRepoFiles(fleet, emulator, { read: true }));
  repos.push(repo);
  const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
  for (const [tenant, contracts] of fleet.live) {
    for (const [contractId, fields] of contracts) {
      await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-01-01T00:00:00.000Z', commit: null });
    }
  }
  return { fleet, emulator, repo, commit: (await repo.git('rev-parse', 'HEAD')).trim() };
}

/** The requests the emulator logged after the first `since`. */
async function requestsSince(emulator: Emulator, since: number): Promise<Awaited<ReturnType<typeof requestLog>>> {
  return (await requestLog(emulator)).slice(since);
}

async function patchPaths(emulator: Emulator, since = 0): Promise<string[]> {
  return (await requestsSince(emulator, since))
    .filter((entry) => entry.kind === 'api' && entry.method === 'PATCH')
    .map((entry) => entry.path)
    .sort();
}

function updates(plan: PlanDocument): { tenant: string; id: string; ops: PlanDocument['tenants'][number]['contracts'][number]['ops'] }[] {
  return plan.tenants.flatMap((tenant) =>
    tenant.contracts.filter((contract) => contract.action === 'update').map((contract) => ({ tenant: tenant.tenant, id: contract.id, ops: contract.ops })),
  );
}

async function readSaved(dir: string): Promise<PlanDocument> {
  return parsePlan(await readFile(path.join(dir, 'plan.json'), 'utf8'));
}

async function putLive(emulator: Emulator, tenant: string, id: string, fields: ContractFields): Promise<void> {
  const response = await fetch(`${emulator.urls.adminUrl}/contracts/${tenant}/${id}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(fields),
  });
  if (!response.ok) throw new Error(`PUT refused: ${response.status}`);
}

describe('apply PLAN.json', () => {
  it.each([
    ['the state store', [], 'state'],
    ['live reads (--refresh)', ['--refresh'], 'live'],
  ])('applies exactly the ops of a fresh plan made from %s, at the plan commit, and records that commit', async (_name, flags, knownFrom) => {
    const { fleet, emulator, repo, commit } = await setup();
    const planned = await runCli(['plan', ...flags, '--out', 'plan.json'], repo.dir, fleet.env);
    const plan = await readSaved(repo.dir);
    // A later commit edits a contract the plan leaves alone: applying the plan must not send it.
    const desiredB = fleet.desired[1]!;
    const edited = { ...desiredB.contracts[0]!.fields, Name: 'Edited after the plan was made' };
    const head = await repo.commit('edit after planning', {
      [desiredB.file]: stringify({
        tenant: desiredB.tenant,
        contracts: Object.fromEntries(
          desiredB.contracts.map((contract) => [contract.id, contract.id === desiredB.contracts[0]!.id ? edited : contract.fields]),
        ),
      }),
    });
    const before = new Map(await Promise.all(updates(plan).map(async ({ tenant, id }) => [id, await liveContract(emulator, tenant, id)] as const)));

    const applied = await runCli(['apply', 'plan.json', '--report', 'report.json'], repo.dir, fleet.env);

    expect(planned.code, planned.stderr).toBe(0);
    expect(plan.tenants.flatMap((tenant) => tenant.contracts.map((contract) => contract.knownFrom))).toEqual(Array(6).fill(knownFrom));
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Apply: 4 contracts changed');
    expect(await patchPaths(emulator)).toEqual(
      [...fleet.changed.values()]
        .flatMap((ids) => [...ids])
        .map((id) => `/contract/${id}`)
        .sort(),
    );
    for (const { tenant, id, ops } of updates(plan)) {
      expect(diffContract(await liveContract(emulator, tenant, id), applyOps(before.get(id), ops)), id).toEqual([]);
    }
    const report = JSON.parse(await readFile(path.join(repo.dir, 'report.json'), 'utf8'));
    expect(report.source).toEqual({ repo: '.', ref: null, commit });
    const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
    for (const tenant of fleet.tenants) expect(await store.readRun(tenant)).toMatchObject({ lastAppliedCommit: commit, pending: [] });
    expect(head).not.toBe(commit);
  });

  it('refuses a contract changed out of band since a --refresh plan as stale, applies the rest, then applies a new plan', async () => {
    const { fleet, emulator, repo } = await setup();
    const planned = await runCli(['plan', '--refresh', '--out', 'plan.json'], repo.dir, fleet.env);
    const changedA = [...fleet.changed.get('tenant-a')!];
    const stale = changedA[0]!;
    await putLive(emulator, 'tenant-a', stale, { ...fleet.live.get('tenant-a')!.get(stale)!, Comment: 'changed by hand' });

    const first = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);
    const firstPatches = await patchPaths(emulator);
    const record = await fileStateStore(path.join(repo.dir, '.contract-sync/state')).readRun('tenant-a');
    const seen = (await requestLog(emulator)).length;
    const replanned = await runCli(['plan', '--refresh', '--out', 'plan.json'], repo.dir, fleet.env);
    const second = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(planned.code, planned.stderr).toBe(0);
    expect(first.code).toBe(1);
    expect(firstPatches).not.toContain(`/contract/${stale}`);
    expect(firstPatches).toHaveLength(3);
    expect(first.stdout).toMatch(
      new RegExp(
        `tenant-a ${stale} \\(contracts/tenant-a\\.yaml:\\d+\\) refused: stale plan: the known state \\(read live\\) changed since the plan was made; run contract-sync plan again`,
      ),
    );
    expect(first.stdout).toContain('Apply: 3 of 4 contracts changed');
    expect(first.stdout).toContain('1 failed (1 refused as stale: run contract-sync plan again).');
    expect(record?.pending).toEqual([
      expect.objectContaining({ contractId: stale, outcome: 'failed', file: 'contracts/tenant-a.yaml', reason: expect.stringContaining('stale plan') }),
    ]);
    expect(replanned.code, replanned.stderr).toBe(0);
    expect(second.code, second.stdout).toBe(0);
    expect(await patchPaths(emulator, seen)).toEqual([`/contract/${stale}`]);
    expect(
      diffContract(await liveContract(emulator, 'tenant-a', stale), fleet.desired[0]!.contracts.find((contract) => contract.id === stale)!.fields),
    ).toEqual([]);
  });

  it('refuses a state-store plan whose contract was applied since, and says so in a dry run too', async () => {
    const { fleet, emulator, repo } = await setup();
    await runCli(['plan', '--out', 'plan.json'], repo.dir, fleet.env);
    await runCli(['apply', '--no-refresh', '--tenant', 'tenant-b'], repo.dir, fleet.env);
    const seen = (await requestLog(emulator)).length;

    const dryRun = await runCli(['apply', 'plan.json', '--dry-run'], repo.dir, fleet.env);
    const run = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(dryRun.code).toBe(1);
    expect(dryRun.stdout).toContain('Dry run: 2 of 4 contracts would change');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/tenant-b tenant-b-\d+ \(contracts\/tenant-b\.yaml:\d+\) refused: stale plan: the known state \(in the state store\) changed/);
    expect(await patchPaths(emulator, seen)).toEqual([...fleet.changed.get('tenant-a')!].map((id) => `/contract/${id}`).sort());
  });

  it('refuses, as stale, contracts a working-tree plan changed with uncommitted edits, which the plan commit does not hold', async () => {
    const { fleet, emulator, repo } = await setup();
    const set = fleet.desired[0]!;
    const edited = set.contracts[0]!;
    await repo.write({
      [set.file]: stringify({
        tenant: set.tenant,
        contracts: Object.fromEntries(
          set.contracts.map((contract) => [contract.id, contract === edited ? { ...contract.fields, Name: 'Uncommitted' } : contract.fields]),
        ),
      }),
    });
    await runCli(['plan', '--out', 'plan.json'], repo.dir, fleet.env);

    const run = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(`tenant-a ${edited.id} \\(contracts/tenant-a\\.yaml:\\d+\\) refused: stale plan: planning it again gives other ops than the reviewed ones`),
    );
    expect(await patchPaths(emulator)).toEqual(
      [...fleet.changed.values()]
        .flatMap((ids) => [...ids])
        .map((id) => `/contract/${id}`)
        .sort(),
    );
  });

  it('refuses, as stale, a contract an earlier run left uncertain when the plan trusted the state store and reads could settle it', async () => {
    const { fleet, emulator, repo } = await setup();
    const uncertain = [...fleet.changed.get('tenant-a')!][0]!;
    const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
    await store.writeRun('tenant-a', {
      lastAppliedCommit: null,
      pending: [{ contractId: uncertain, outcome: 'interrupted', reason: 'run x', since: '2026-01-01T00:00:00.000Z' }],
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    await runCli(['plan', '--out', 'plan.json'], repo.dir, fleet.env);

    const run = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(
        `${uncertain} .* refused: stale plan: an earlier run \\(2026-01-01T00:00:00.000Z\\) stopped while applying this contract, .*run contract-sync plan --refresh again`,
      ),
    );
    expect(await patchPaths(emulator)).toHaveLength(3);
    expect(await store.readRun('tenant-a')).toMatchObject({
      pending: [{ contractId: uncertain, outcome: 'interrupted', reason: 'run x', file: 'contracts/tenant-a.yaml' }],
    });
  });

  it.each([
    [
      'a commit rewritten since (not an ancestor of HEAD)',
      async (repo: TestRepo) => {
        await repo.git('commit', '-q', '--amend', '-m', 'rewritten');
      },
      /plan\.json: the plan was made from commit [0-9a-f]{40}, which is not an ancestor of the current commit [0-9a-f]{40} .*run contract-sync plan again; nothing applied/,
    ],
    [
      'a branch abandoned since',
      async (repo: TestRepo) => {
        await repo.git('checkout', '-q', '-b', 'abandoned');
        await repo.git('commit', '-q', '--allow-empty', '-m', 'on the branch');
        await runCli(['plan', '--out', 'plan.json'], repo.dir);
        await repo.git('checkout', '-q', 'main');
      },
      /which is not an ancestor of the current commit/,
    ],
    [
      'a commit this clone does not have',
      async (repo: TestRepo) => {
        const text = await readFile(path.join(repo.dir, 'plan.json'), 'utf8');
        const plan = JSON.parse(text) as PlanDocument;
        await writeFile(path.join(repo.dir, 'plan.json'), JSON.stringify({ ...plan, source: { ...plan.source, commit: 'f'.repeat(40) } }));
      },
      /which this clone does not have, .*fetch it \(git fetch --no-tags origin f{40}\) or run contract-sync plan again; nothing applied/,
    ],
  ])('refuses the whole plan when it was made from %s, sending nothing', async (_name, afterPlan, message) => {
    const { fleet, emulator, repo } = await setup();
    const planned = await runCli(['plan', '--out', 'plan.json'], repo.dir, fleet.env);
    await afterPlan(repo);

    const run = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(planned.code).toBe(0);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await requestLog(emulator)).toEqual([]);
  });

  it.each([
    ['not JSON', '{"version": 1,', /plan\.json: the plan is not JSON .*; nothing applied/],
    ['of an unknown version', '{"version": 2}', /plan\.json: plan version 2 is not supported \(this contract-sync reads version 1\); nothing applied/],
    ['not a plan', '{"version": 1, "tenants": []}', /plan\.json: invalid plan: .*; nothing applied/],
    ['missing', null, /plan\.json: cannot read the plan file \(ENOENT\); nothing applied/],
  ])('refuses a plan file that is %s, naming it and sending nothing', async (_name, content, message) => {
    const { fleet, emulator, repo } = await setup();
    if (content !== null) await writeFile(path.join(repo.dir, 'plan.json'), content);

    const run = await runCli(['apply', 'plan.json'], repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await requestLog(emulator)).toEqual([]);
  });

  it.each([
    [['--tenant', 'tenant-a'], /--tenant cannot be used with a plan file/],
    [['--ref', 'HEAD'], /--ref cannot be used with a plan file/],
    [['--no-refresh'], /--refresh and --no-refresh cannot be used with a plan file/],
    [['other.json'], /unexpected argument "other\.json"/],
  ])('refuses apply plan.json %j', async (flags, message) => {
    const { fleet, emulator, repo } = await setup();
    await runCli(['plan', '--out', 'plan.json'], repo.dir, fleet.env);

    const run = await runCli(['apply', 'plan.json', ...flags], repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await requestLog(emulator)).toEqual([]);
  });

  it('refuses a --refresh plan when the config it is applied with has no api.read', async () => {
    const { fleet, emulator, repo } = await setup();
    await runCli(['plan', '--refresh', '--out', 'plan.json'], repo.dir, fleet.env);
    const seen = (await requestLog(emulator)).length;
    const config = await readFile(path.join(repo.dir, 'contract-sync.yaml'), 'utf8');
    await writeFile(path.join(repo.dir, 'no-read.yaml'), config.replace(/, read: \{ path: "[^"]*" \}/, ''));

    const run = await runCli(['apply', 'plan.json', '--config', 'no-read.yaml'], repo.dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/plan\.json was made with --refresh .*configure api\.read/);
    expect(await requestsSince(emulator, seen)).toEqual([]);
  });
});
