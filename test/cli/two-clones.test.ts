/**
 * Two machines, simulated by two clones of one git repository whose configs name one shared state
 * store: after an apply from clone A (with live reads), clone B, with no local state of its own,
 * plans from the shared state exactly what a live read shows, and an edit planned in clone B
 * without a refresh is exactly what apply then sends from B, member removals included
 * (docs/architecture.md section 7). Real git, the CLI in-process, the emulator over HTTP.
 */
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../engine/apply/run-report.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import { applyAcceptedOps } from '../../engine/model/apply-ops.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import type { PlanContract, PlanDocument } from '../../engine/plan/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, shallowClone, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { createFleet, fleetConfigYaml, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

/** A state store both clones' configs point to. */
interface SharedState {
  /** The config's `state:` line. */
  readonly yaml: string;
  /** Environment the runs need for it (e.g. the database URL). */
  readonly env: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** A throwaway PostgreSQL server, started by the first test that needs it. */
let postgres: Promise<PostgresServer> | undefined;

afterAll(async () => {
  await (await postgres)?.stop();
});

/** The state backends shared by the two clones. */
const BACKENDS: readonly { readonly name: string; start(): Promise<SharedState> }[] = [
  {
    name: 'file',
    async start() {
      // One absolute directory, outside both clones: what a shared volume would be.
      const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-shared-state-'));
      return { yaml: `state: { backend: file, path: ${JSON.stringify(dir)} }\n`, env: {}, stop: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    async start() {
      // One database both machines reach, as a team's CI runners would.
      postgres ??= startPostgres();
      const url = await (await postgres).createDatabase();
      return {
        yaml: 'state: { backend: postgres, url: { env: CONTRACT_SYNC_DATABASE_URL } }\n',
        env: { CONTRACT_SYNC_DATABASE_URL: url },
        stop: async () => {},
      };
    },
  },
];

let emulator: Emulator | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function desiredFile(set: ContractSet): string {
  return stringify({ tenant: set.tenant, contracts: Object.fromEntries(set.contracts.map((contract) => [contract.id, contract.fields])) });
}

function contractsOf(plan: PlanDocument): PlanContract[] {
  return plan.tenants.flatMap((tenant) => tenant.contracts);
}

function opsById(plan: PlanDocument): Record<string, PlanContract['ops']> {
  return Object.fromEntries(
    contractsOf(plan)
      .filter((contract) => contract.ops.length > 0)
      .map((contract) => [contract.id, contract.ops]),
  );
}

async function clone(origin: TestRepo): Promise<TestRepo> {
  const repo = await shallowClone(origin.dir, []);
  cleanups.push(() => repo.cleanup());
  return repo;
}

async function isMissing(file: string): Promise<boolean> {
  return access(file).then(
    () => false,
    () => true,
  );
}

describe.each(BACKENDS)('two clones sharing one state store ($name)', (backend) => {
  it('clone B plans from the shared state what a live read shows, and apply from B sends exactly what B planned', { timeout: 60_000 }, async () => {
    const shared = await backend.start();
    cleanups.push(() => shared.stop());
    const fleet: Fleet = createFleet(2, 9);
    emulator = await startEmulator(fleetSeed(fleet));
    const env = { ...fleet.env, ...shared.env };
    const files: Record<string, string> = { 'contract-sync.yaml': `${fleetConfigYaml(fleet, emulator, { read: true })}${shared.yaml}` };
    for (const set of fleet.desired) files[set.file] = desiredFile(set);
    const origin = await createRepo(files);
    cleanups.push(() => origin.cleanup());
    const a = await clone(origin);
    const b = await clone(origin);

    // Machine A applies with live reads: 12 contracts change, 6 need nothing.
    const applyA = await runCli(['apply'], a.dir, env);
    expect(applyA.code, applyA.stdout + applyA.stderr).toBe(0);
    expect(applyA.stdout).toContain('Apply: 12 contracts changed');

    // Machine B, with no local state, plans every contract (--full: an incremental plan would plan
    // none, nothing having changed since A's commit) from the shared state: nothing to do, nothing unknown.
    const planB = await runCli(['plan', '--full', '--format', 'json'], b.dir, env);
    expect(planB.code, planB.stderr).toBe(0);
    const fromState = JSON.parse(planB.stdout) as PlanDocument;
    expect(fromState.summary).toMatchObject({ tenants: 2, contracts: 18, changed: 0, ops: 0 });
    expect(new Set(contractsOf(fromState).map((contract) => contract.knownFrom))).toEqual(new Set(['state']));
    expect(await isMissing(path.join(b.dir, '.contract-sync'))).toBe(true);

    // An edit in B, to contracts A's run did not change: a member removed, a member added; and a rename of one it did.
    const tenantA = fleet.desired[0]!;
    const edits: Record<string, (fields: ContractFields) => ContractFields> = {
      'tenant-a-0000': (fields) => ({ ...fields, Company: fields.Company!.slice(1) }),
      'tenant-a-0003': (fields) => ({ ...fields, Company: [...fields.Company!, { Id: 7001, RelationType: 'Partner' }] }),
      'tenant-a-0001': (fields) => ({ ...fields, Name: 'Renamed in clone B' }),
    };
    const edited: ContractSet = {
      ...tenantA,
      contracts: tenantA.contracts.map((contract) => (edits[contract.id] ? { ...contract, fields: edits[contract.id]!(contract.fields) } : contract)),
    };
    await b.write({ [tenantA.file]: desiredFile(edited) });
    await b.git('commit', '-q', '-am', 'edit in clone B');
    const liveBefore = new Map<string, ContractFields>();
    for (const id of Object.keys(edits)) liveBefore.set(id, await liveContract(emulator, 'tenant-a', id));

    const planned = await runCli(['plan', '--format', 'json'], b.dir, env);
    const refreshed = await runCli(['plan', '--refresh', '--format', 'json'], b.dir, env);
    const logMark = (await requestLog(emulator)).length;
    const applyB = await runCli(['apply', '--report', 'report.json'], b.dir, env);

    expect(planned.code, planned.stderr).toBe(0);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(applyB.code, applyB.stdout + applyB.stderr).toBe(0);
    const ops = opsById(JSON.parse(planned.stdout) as PlanDocument);
    // Planned from the shared state: exactly what the live read plans, the removal included.
    expect(ops).toEqual(opsById(JSON.parse(refreshed.stdout) as PlanDocument));
    expect(Object.keys(ops).sort()).toEqual(Object.keys(edits).sort());
    expect(ops['tenant-a-0000']).toEqual([{ op: 'Remove', path: '/Contract/Company', value: liveBefore.get('tenant-a-0000')!.Company![0] }]);
    expect(ops['tenant-a-0003']).toEqual([{ op: 'Add', path: '/Contract/Company', value: { Id: 7001, RelationType: 'Partner' } }]);
    expect(ops['tenant-a-0001']).toEqual([{ op: 'Replace', path: '/Contract/Name', value: 'Renamed in clone B' }]);
    // What B's apply sent: one PATCH per planned contract, as many ops, and each live contract is
    // what B's planned ops make of what was live before.
    const sent = (await requestLog(emulator)).slice(logMark).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH');
    expect(sent.map((entry) => `${entry.path} ${entry.status}`).sort()).toEqual(
      Object.keys(ops)
        .map((id) => `/contract/${id} 204`)
        .sort(),
    );
    const report = JSON.parse(await readFile(path.join(b.dir, 'report.json'), 'utf8')) as RunReport;
    expect(report.summary).toMatchObject({ changed: 3, applied: 3, failed: 0, ops: Object.values(ops).flat().length });
    for (const [id, contractOps] of Object.entries(ops)) {
      const live = await liveContract(emulator, 'tenant-a', id);
      expect(live).toEqual(applyAcceptedOps(liveBefore.get(id), contractOps));
      expect(diffContract(live, edited.contracts.find((contract) => contract.id === id)!.fields)).toEqual([]);
    }
  });
});
