/**
 * Incremental apply with real git repositories, the file state store and the emulator: a run on a
 * new commit plans only the files changed since the tenant's last applied commit (plus the files
 * of contracts an earlier run did not finish), and plans exactly the ops a full run would.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createRandom, generateContract } from '../../bench/generate-contracts.ts';
import { openRunInput, readScopes, readWholeInput, type ScopeHistory } from '../../engine/run/input.ts';
import type { CliIo } from '../../engine/cli/io.ts';
import type { ContractFields, Op } from '../../engine/model/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { readPlannedKnownState, storeReader } from '../../engine/run/known-state.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { readKnownState } from '../../engine/state/memory-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { createFleet, fleetConfigYaml, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';

const FILES_PER_TENANT = 3;

/** tenant -> file -> contract id -> fields: a desired state as the files hold it. */
type Desired = Map<string, Map<string, Map<string, ContractFields>>>;

function fileName(tenant: string, index: number): string {
  return `contracts/${tenant}/part-${index}.yaml`;
}

/** The fleet's desired contracts spread over a few files per tenant. */
function desiredOf(fleet: Fleet): Desired {
  const desired: Desired = new Map();
  for (const set of fleet.desired) {
    const files = new Map<string, Map<string, ContractFields>>();
    for (let index = 0; index < FILES_PER_TENANT; index += 1) files.set(fileName(set.tenant, index), new Map());
    set.contracts.forEach((contract, index) => files.get(fileName(set.tenant, index % FILES_PER_TENANT))!.set(contract.id, contract.fields));
    desired.set(set.tenant, files);
  }
  return desired;
}

function filesOf(desired: Desired): Record<string, string | null> {
  const files: Record<string, string | null> = {};
  for (const [tenant, byFile] of desired) {
    for (const [file, contracts] of byFile) {
      files[file] = contracts.size === 0 ? null : stringify({ tenant, contracts: Object.fromEntries(contracts) });
    }
  }
  return files;
}

let emulator: Emulator;
const PATH_ENV = { PATH: process.env.PATH ?? '' };
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup(options: { read: boolean; fleet?: Fleet }) {
  const fleet = options.fleet ?? createFleet(2, 9);
  emulator = await startEmulator(fleetSeed(fleet));
  const started = emulator;
  cleanups.push(() => started.close());
  const desired = desiredOf(fleet);
  const repo = await createRepo({ 'contract-sync.yaml': fleetConfigYaml(fleet, emulator, { read: options.read }), ...filesOf(desired) } as Record<
    string,
    string
  >);
  cleanups.push(() => repo.cleanup());
  // Without reads, the state store must know what the service holds, as after an earlier apply.
  if (!options.read) {
    const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
    for (const [tenant, contracts] of fleet.live) {
      for (const [contractId, fields] of contracts)
        await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-11-01T00:00:00.000Z', commit: null });
    }
  }
  const env = { ...fleet.env, ...PATH_ENV };
  return { fleet, desired, repo, env };
}

async function apiRequests(since: number) {
  return (await requestLog(emulator)).slice(since).filter((entry) => entry.kind === 'api');
}

describe('incremental apply', () => {
  it('plans only the files changed since the last applied commit, and everything with --full', async () => {
    const { desired, repo, env } = await setup({ read: true });
    const first = await runCli(['apply'], repo.dir, env);
    const file = fileName('tenant-a', 1);
    const [id] = [...desired.get('tenant-a')!.get(file)!.keys()];
    desired
      .get('tenant-a')!
      .get(file)!
      .set(id!, { ...desired.get('tenant-a')!.get(file)!.get(id!)!, Name: 'Renamed in the second commit' });
    await repo.commit('rename one contract', filesOf(desired));
    const logged = (await requestLog(emulator)).length;

    const second = await runCli(['apply'], repo.dir, env);
    const secondRequests = await apiRequests(logged);
    const full = await runCli(['apply', '--full'], repo.dir, env);

    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('tenant-a: every contract planned (no earlier run recorded a commit)');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/tenant-a: incremental since [0-9a-f]{12}: 1 contract changed in git\n/);
    expect(second.stdout).toMatch(/tenant-b: incremental since [0-9a-f]{12}: no contract changed in git\n/);
    expect(second.stdout).toContain('1 contract in 1 tenant to update');
    // Only the changed contract is read (api.read is configured), not the others of its file, and patched.
    const readIds = secondRequests.filter((entry) => entry.method === 'GET').map((entry) => path.basename(entry.path));
    expect(readIds).toEqual([id]);
    expect(secondRequests.filter((entry) => entry.method === 'PATCH').map((entry) => path.basename(entry.path))).toEqual([id]);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).toContain('Apply: nothing to do');
    expect(full.stdout).not.toContain('incremental since');
  });

  it('plans a contract whose last apply failed again, though its file did not change', async () => {
    const { desired, repo, env } = await setup({ read: false });
    const file = fileName('tenant-b', 2);
    desired.get('tenant-b')!.get(file)!.set('tenant-b-new', { Name: 'Not on the service yet' });
    await repo.commit('a contract the service does not have', filesOf(desired));
    const failed = await runCli(['apply'], repo.dir, env);
    await fetch(`${emulator.urls.adminUrl}/contracts/tenant-b/tenant-b-new`, {
      method: 'PUT',
      body: JSON.stringify({ Name: 'Created by hand' }),
      headers: { 'Content-Type': 'application/json' },
    });
    desired.get('tenant-a')!.get(fileName('tenant-a', 0))!.delete('tenant-a-0000');
    await repo.commit('an unrelated change', filesOf(desired));
    const logged = (await requestLog(emulator)).length;

    const retried = await runCli(['apply'], repo.dir, env);

    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/tenant-b-new .*404/);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(
      /tenant-b: incremental since [0-9a-f]{12}: 1 contract changed in git or left unfinished \(1 contract an earlier run did not finish\)/,
    );
    const patched = (await apiRequests(logged)).filter((entry) => entry.method === 'PATCH');
    expect(patched.map((entry) => [path.basename(entry.path), entry.status])).toEqual([['tenant-b-new', 204]]);
  });

  it('plans every contract again when the last applied commit is not an ancestor of the new one', async () => {
    const { repo, env } = await setup({ read: false });
    await runCli(['apply'], repo.dir, env);
    await repo.git('commit', '-q', '--amend', '-m', 'rewritten history');

    const run = await runCli(['apply'], repo.dir, env);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/tenant-a: every contract planned \(the last applied commit [0-9a-f]{12} is not an ancestor of this one/);
  });

  it('refuses to apply a commit older than the last applied one, unless --full', async () => {
    const { desired, repo, env } = await setup({ read: false });
    const older = (await repo.git('rev-parse', 'HEAD')).trim();
    const file = fileName('tenant-a', 0);
    const [id] = [...desired.get('tenant-a')!.get(file)!.keys()];
    desired
      .get('tenant-a')!
      .get(file)!
      .set(id!, { ...desired.get('tenant-a')!.get(file)!.get(id!)!, Name: 'Newer' });
    await repo.commit('a newer desired state', filesOf(desired));
    await runCli(['apply'], repo.dir, env);
    const logged = (await requestLog(emulator)).length;

    const refused = await runCli(['apply', '--ref', older], repo.dir, env);
    const refusedPatches = (await apiRequests(logged)).filter((entry) => entry.method === 'PATCH');
    const forced = await runCli(['apply', '--ref', older, '--full'], repo.dir, env);

    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/tenant-a: not applied: it was last applied at [0-9a-f]{12}, which is newer than this commit .*pass --full/);
    expect(refusedPatches).toEqual([]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`~ Name: "Newer" -> `);
  });

  it('records no commit after a run from uncommitted desired-state edits, so the next run plans every contract', async () => {
    const { desired, repo, env } = await setup({ read: false });
    await runCli(['apply'], repo.dir, env);
    const file = fileName('tenant-a', 0);
    const [id] = [...desired.get('tenant-a')!.get(file)!.keys()];
    desired
      .get('tenant-a')!
      .get(file)!
      .set(id!, { ...desired.get('tenant-a')!.get(file)!.get(id!)!, Name: 'Not committed' });
    await repo.write(filesOf(desired));
    const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));

    const dirty = await runCli(['apply'], repo.dir, env);
    const record = await store.readRun('tenant-a');
    await repo.git('checkout', '--', file);
    const next = await runCli(['apply'], repo.dir, env);

    expect(dirty.code, dirty.stderr).toBe(0);
    expect(dirty.stdout).toMatch(/tenant-a: incremental since [0-9a-f]{12}: 1 contract changed in git/);
    expect(record?.lastAppliedCommit).toBeNull();
    // The edit was undone in git: only a full run sees that the service still holds it.
    expect(next.stdout).toContain('tenant-a: every contract planned (no earlier run recorded a commit)');
    expect(next.stdout).toMatch(new RegExp(`~ ${id}  .*\\n.*Name: "Not committed" -> `));
  });

  it('reads only the contract a commit changed, not the other 199 of its file', async () => {
    const fleet = createFleet(1, 200);
    emulator = await startEmulator(fleetSeed(fleet));
    const started = emulator;
    cleanups.push(() => started.close());
    const contracts = new Map(fleet.desired[0]!.contracts.map((contract) => [contract.id, contract.fields]));
    const file = 'contracts/tenant-a/all.yaml';
    function yaml(): string {
      return stringify({ tenant: 'tenant-a', contracts: Object.fromEntries(contracts) });
    }
    const repo = await createRepo({
      'contract-sync.yaml': fleetConfigYaml(fleet, emulator, { read: true }),
      '.gitignore': '.contract-sync/\n',
      [file]: yaml(),
    });
    cleanups.push(() => repo.cleanup());
    const env = { ...fleet.env, ...PATH_ENV };
    // The first run removes the seed's extra members of 200 contracts: more than the removal guard allows.
    const first = await runCli(['apply', '--allow-removals'], repo.dir, env);
    const id = 'tenant-a-0100';
    contracts.set(id, { ...contracts.get(id)!, Name: 'Renamed in the second commit' });
    await repo.commit('rename one contract of 200', { [file]: yaml() });
    const firstReads = (await apiRequests(0)).filter((entry) => entry.method === 'GET').length;
    const logged = (await requestLog(emulator)).length;

    const second = await runCli(['apply'], repo.dir, env);
    const requests = await apiRequests(logged);

    expect(first.code, first.stderr).toBe(0);
    expect(firstReads).toBe(200);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/tenant-a: incremental since [0-9a-f]{12}: 1 contract changed in git\n/);
    expect(requests.filter((entry) => entry.method === 'GET').map((entry) => path.basename(entry.path))).toEqual([id]);
    expect(requests.filter((entry) => entry.method === 'PATCH').map((entry) => path.basename(entry.path))).toEqual([id]);
  }, 120_000);

  it("reports a run record it cannot read as that tenant's error, and still applies the other tenant", async () => {
    const { repo, env } = await setup({ read: false });
    await writeFile(path.join(repo.dir, '.contract-sync/state/tenant-a/.run.json'), '{"version":1,');

    const run = await runCli(['apply'], repo.dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('tenant-a: every contract planned (its run record cannot be read)');
    expect(run.stdout).toMatch(/tenant-a.*\.run\.json: not JSON/);
    expect(run.stdout).toMatch(/tenant-b: \d+ contracts changed, .*0 retries/);
    expect(run.stderr).not.toContain('internal error');
  });
});

/** One edit of a random history, applied to the model of the files. */
type Edit =
  | { readonly kind: 'rename'; readonly tenant: number; readonly pick: number }
  | { readonly kind: 'add'; readonly tenant: number; readonly file: number; readonly live: boolean }
  | { readonly kind: 'remove'; readonly tenant: number; readonly pick: number }
  | { readonly kind: 'move'; readonly tenant: number; readonly pick: number; readonly file: number };

const editArbitrary: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('rename' as const), tenant: fc.nat(1), pick: fc.nat(50) }),
  fc.record({ kind: fc.constant('add' as const), tenant: fc.nat(1), file: fc.nat(FILES_PER_TENANT - 1), live: fc.boolean() }),
  fc.record({ kind: fc.constant('remove' as const), tenant: fc.nat(1), pick: fc.nat(50) }),
  fc.record({ kind: fc.constant('move' as const), tenant: fc.nat(1), pick: fc.nat(50), file: fc.nat(FILES_PER_TENANT - 1) }),
);

/** A commit's edits, and which tenants the run after it applies (an empty list: all of them). */
const stepArbitrary = fc.record({ edits: fc.array(editArbitrary, { minLength: 1, maxLength: 4 }), only: fc.constantFrom([], ['tenant-a'], ['tenant-b']) });

function contractsOf(desired: Desired, tenant: string): [string, string][] {
  return [...desired.get(tenant)!].flatMap(([file, contracts]) => [...contracts.keys()].map((id): [string, string] => [file, id]));
}

async function applyEdit(desired: Desired, edit: Edit, step: number, serial: () => number): Promise<void> {
  const tenant = `tenant-${'ab'[edit.tenant]}`;
  const files = desired.get(tenant)!;
  if (edit.kind === 'add') {
    const id = `${tenant}-added-${serial()}`;
    const fields = generateContract(createRandom(serial()), step);
    files.get(fileName(tenant, edit.file))!.set(id, fields);
    // Some added contracts exist on the service, some do not (their PATCH is a 404 and stays pending).
    if (edit.live)
      await fetch(`${emulator.urls.adminUrl}/contracts/${tenant}/${id}`, {
        method: 'PUT',
        body: JSON.stringify({ Name: 'live' }),
        headers: { 'Content-Type': 'application/json' },
      });
    return;
  }
  const contracts = contractsOf(desired, tenant);
  if (contracts.length === 0) return;
  const [file, id] = contracts[edit.pick % contracts.length]!;
  const fields = files.get(file)!.get(id)!;
  if (edit.kind === 'rename') files.get(file)!.set(id, { ...fields, Name: `${String(fields.Name)} / ${step}` });
  if (edit.kind === 'remove' || edit.kind === 'move') files.get(file)!.delete(id);
  if (edit.kind === 'move') files.get(fileName(tenant, edit.file))!.set(id, fields);
}

/** The plan the run input gives against the state store (as `plan` makes it, or apply without reads); `since`: incremental, as apply or as plan. */
async function planOf(repo: TestRepo, options: { readonly ref?: string; readonly base?: string; readonly since?: ScopeHistory }): Promise<PlanDocument> {
  const io: CliIo = { stdout: { write: () => true }, stderr: { write: () => true }, env: PATH_ENV, cwd: repo.dir };
  const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
  const opened = await openRunInput(
    io,
    options.since === 'ancestor' ? 'apply' : 'plan',
    { repo: '.', ...(options.ref ? { ref: options.ref } : {}) },
    {},
    options.base,
  );
  if ('kind' in opened) throw new Error(`input not ready: ${JSON.stringify(opened)}`);
  const scopes = options.since ? await readScopes(opened, store, options.since) : undefined;
  const loaded = await readWholeInput(opened, {
    ...(scopes ? { scopes } : {}),
    describeIncremental: options.since === 'any',
    ...(options.base ? { base: options.base } : {}),
    records: false,
  });
  opened.close();
  const { config, contractSets, source, touched } = loaded;
  // A full run reads every record of its tenants; the incremental one only those it plans.
  const known = options.since ? await readPlannedKnownState(storeReader(store), contractSets) : await readKnownState(store, Object.keys(config.tenants));
  return createPlan(contractSets, known, { createdAt: '2026-11-22T00:00:00.000Z', source, collections: config.collections, ...(touched ? { touched } : {}) });
}

/** Every contract with ops, by tenant and id. */
function opsOf(plan: PlanDocument): Record<string, readonly Op[]> {
  const ops: Record<string, readonly Op[]> = {};
  for (const tenant of plan.tenants)
    for (const contract of tenant.contracts) if (contract.action === 'update') ops[`${tenant.tenant}/${contract.id}`] = contract.ops;
  return ops;
}

/** What a pull-request plan marks: the touched contracts and those no longer managed. */
function marksOf(plan: PlanDocument): { touched: string[]; noLongerManaged: unknown } {
  const touched = plan.tenants.flatMap((tenant) =>
    tenant.contracts.filter((contract) => contract.touched === true).map((contract) => `${tenant.tenant}/${contract.id}`),
  );
  return { touched: touched.sort(), noLongerManaged: plan.noLongerManaged };
}

async function plannedOps(repo: TestRepo, incremental: boolean): Promise<Record<string, readonly Op[]>> {
  return opsOf(await planOf(repo, incremental ? { since: 'ancestor' } : {}));
}

describe('incremental and full runs', () => {
  it('plan the same ops over random histories of edits, partial applies and failed contracts; pull-request plans too', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 2, maxLength: 4 }), async (steps) => {
        const { desired, repo, env } = await setup({ read: false, fleet: createFleet(2, 6, 11) });
        let counter = 0;
        function serial(): number {
          counter += 1;
          return counter;
        }
        try {
          const root = (await repo.git('rev-list', '--max-parents=0', 'HEAD')).trim();
          for (const [index, step] of steps.entries()) {
            const run = await runCli(['apply', ...step.only.flatMap((tenant) => ['--tenant', tenant])], repo.dir, env);
            expect(run.stderr).not.toContain('internal error');
            for (const edit of step.edits) await applyEdit(desired, edit, index, serial);
            await repo.commit(`step ${index}`, filesOf(desired));

            const full = await plannedOps(repo, false);
            const incremental = await plannedOps(repo, true);

            expect(incremental).toEqual(full);

            // A pull request's plan from the first commit, and a plan of that older commit (the
            // last applied commits are not in its history): the same ops and marks as --full.
            const pullRequest = await planOf(repo, { ref: 'HEAD', base: root, since: 'any' });
            const pullRequestFull = await planOf(repo, { ref: 'HEAD', base: root });
            const older = await planOf(repo, { ref: root, since: 'any' });
            const olderFull = await planOf(repo, { ref: root });

            expect(opsOf(pullRequest)).toEqual(opsOf(pullRequestFull));
            expect(marksOf(pullRequest)).toEqual(marksOf(pullRequestFull));
            expect(opsOf(older)).toEqual(opsOf(olderFull));
            // After a run of both tenants, nothing makes the plan fall back to a full one.
            if (step.only.length === 0) expect(pullRequest.source.incremental?.tenants.map((entry) => entry.tenant)).toEqual(['tenant-a', 'tenant-b']);
          }
        } finally {
          for (const cleanup of cleanups.splice(0)) await cleanup();
        }
      }),
      { numRuns: 8 },
    );
  }, 600_000);
});
