/**
 * `contract-sync apply` against the emulator: the scopes each run asks for, and contracts settled by
 * reading when the known state may be behind the service (an earlier run's uncertain contract, a 409).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileStateStore } from '../../engine/state/file-store.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog, setFaults, type Fleet } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

type Scopes = readonly ('core:read' | 'core:write')[];

interface Setup {
  readonly read: boolean;
  /** The scopes each tenant's client may be granted (default: both). */
  readonly scopes?: Readonly<Record<string, Scopes>>;
  /** Live contracts that differ from the fleet's (someone changed them outside contract-sync). */
  readonly live?: Readonly<Record<string, ContractFields>>;
  /** The config's `rate`. */
  readonly rate?: string;
}

async function setup(options: Setup) {
  const fleet: Fleet = createFleet(2, 6);
  const seed = fleetSeed(fleet);
  const tenants: Record<string, Seed['tenants'][string]> = {};
  for (const [tenant, entry] of Object.entries(seed.tenants)) {
    const scopes = options.scopes?.[tenant];
    const contracts = { ...entry.contracts };
    for (const [id, fields] of Object.entries(options.live ?? {})) if (id.startsWith(`${tenant}-`)) contracts[id] = fields;
    tenants[tenant] = { ...entry, contracts, ...(scopes ? { clients: entry.clients!.map((client) => ({ ...client, scopes: [...scopes] })) } : {}) };
  }
  emulator = await startEmulator({ ...seed, tenants });
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: options.read, ...(options.rate ? { rate: options.rate } : {}) }));
  cleanups.push(cleanup);
  const store = fileStateStore(path.join(dir, '.contract-sync/state'));
  return { fleet, dir, emulator, store };
}

/** The state store knows what the fleet seeded: what a previous run applied. */
async function recordFleet(fleet: Fleet, store: ReturnType<typeof fileStateStore>): Promise<void> {
  for (const [tenant, contracts] of fleet.live) {
    for (const [contractId, fields] of contracts) {
      await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2027-01-01T00:00:00.000Z', commit: null });
    }
  }
}

function desiredOf(fleet: Fleet, id: string): ContractFields {
  return fleet.desired.flatMap((set) => set.contracts).find((contract) => contract.id === id)!.fields;
}

async function apiRequests(on: Emulator, method: string): Promise<string[]> {
  return (await requestLog(on)).filter((entry) => entry.kind === 'api' && entry.method === method).map((entry) => `${entry.path} ${entry.status}`);
}

describe('apply: the scopes asked for', () => {
  // A client granted only core:read: asking for core:write too is refused by the identity provider.
  it('a dry run asks for core:read only, and reads', async () => {
    const { fleet, dir } = await setup({ read: true, scopes: { 'tenant-a': ['core:read'], 'tenant-b': ['core:read'] } });

    const run = await runCli(['apply', '--dry-run'], dir, fleet.env);

    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('Dry run: 8 contracts would change');
    expect(await apiRequests(emulator!, 'GET')).toHaveLength(12);
    expect(await apiRequests(emulator!, 'PATCH')).toEqual([]);
  });

  it('a run without refresh and nothing to settle asks for core:write only, even with reads configured', async () => {
    const { fleet, dir, store } = await setup({ read: true, scopes: { 'tenant-a': ['core:write'], 'tenant-b': ['core:write'] } });
    await recordFleet(fleet, store);

    const run = await runCli(['apply', '--no-refresh'], dir, fleet.env);

    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(await apiRequests(emulator!, 'GET')).toEqual([]);
    expect(await apiRequests(emulator!, 'PATCH')).toHaveLength(8);
  });
});

describe('apply --no-refresh: contracts an earlier run left uncertain', () => {
  const SINCE = '2027-01-01T00:00:00.000Z';

  it('reads them with a core:read token and settles them; a tenant with none asks for core:write only', async () => {
    // The earlier run's PATCH of tenant-a-0001 landed before it died: the service already holds the desired state.
    const fleetForIds = createFleet(2, 6);
    const landed = desiredOf(fleetForIds, 'tenant-a-0001');
    const { fleet, dir, store } = await setup({ read: true, scopes: { 'tenant-b': ['core:write'] }, live: { 'tenant-a-0001': landed } });
    await recordFleet(fleet, store);
    await store.writeRun('tenant-a', {
      lastAppliedCommit: null,
      pending: [{ contractId: 'tenant-a-0001', outcome: 'interrupted', reason: 'run r-0', since: SINCE, file: 'contracts/tenant-a.yaml' }],
      updatedAt: SINCE,
    });

    const run = await runCli(['apply', '--no-refresh', '--report', 'report.json'], dir, fleet.env);

    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(await apiRequests(emulator!, 'GET')).toEqual(['/contract/tenant-a-0001 200']);
    expect(await apiRequests(emulator!, 'PATCH')).not.toContain('/contract/tenant-a-0001 204');
    expect(await apiRequests(emulator!, 'PATCH')).toHaveLength(7);
    expect((await store.readRun('tenant-a'))?.pending).toEqual([]);
    expect((await store.readTenant('tenant-a', new Set(['tenant-a-0001']))).get('tenant-a-0001')?.fields).toEqual(landed);
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(report.summary).toMatchObject({ failed: 0 });
  });
});

describe('apply --no-refresh: a 409 because the known state was behind the service', () => {
  // Someone applied tenant-a-0002's desired state in the UI: the state store still has the old one,
  // so the planned Add of a Company member is answered 409 (the member is there already).
  async function behindSetup(read: boolean) {
    const fleetForIds = createFleet(2, 6);
    const changedInUi = desiredOf(fleetForIds, 'tenant-a-0002');
    const context = await setup({ read, live: { 'tenant-a-0002': changedInUi } });
    await recordFleet(context.fleet, context.store);
    return { ...context, changedInUi };
  }

  it('with api.read: read once, re-planned, nothing left to send, recorded', async () => {
    const { fleet, dir, store, changedInUi } = await behindSetup(true);

    const run = await runCli(['apply', '--no-refresh'], dir, fleet.env);

    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(await apiRequests(emulator!, 'GET')).toEqual(['/contract/tenant-a-0002 200']);
    expect((await apiRequests(emulator!, 'PATCH')).filter((entry) => entry.startsWith('/contract/tenant-a-0002 '))).toEqual(['/contract/tenant-a-0002 409']);
    expect((await store.readTenant('tenant-a', new Set(['tenant-a-0002']))).get('tenant-a-0002')?.fields).toEqual(changedInUi);
    expect(await liveContract(emulator!, 'tenant-a', 'tenant-a-0002')).toEqual(changedInUi);
  });

  it('without api.read: reported as a conflict that names the member', async () => {
    const { fleet, dir } = await behindSetup(false);

    const run = await runCli(['apply', '--no-refresh'], dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /tenant-a tenant-a-0002 \(contracts\/tenant-a\.yaml:\d+\) 409: .*conflict: .*Add \/Contract\/Company \{"Id":5002,"RelationType":"Partner"\}.*configure api\.read/,
    );
    expect(await apiRequests(emulator!, 'GET')).toEqual([]);
  });
});

describe('apply: PATCHes answered 500 (the service may have applied them)', () => {
  async function faultySetup(read: boolean) {
    // One request at a time, so that the seeded faults fall on the same requests every time.
    const context = await setup({ read, rate: '{ requestsPerSecond: 2000, concurrency: 1, maxInFlight: 1 }' });
    await recordFleet(context.fleet, context.store);
    // Answered instead of handled: nothing of a 500'd request is applied by the emulator.
    await setFaults(context.emulator, { seed: 3, api: { status: { '500': 0.5 } } });
    return context;
  }

  /** Statuses of the PATCHes of each contract, in order. */
  async function patchAnswers(on: Emulator): Promise<Map<string, (number | null)[]>> {
    const answers = new Map<string, (number | null)[]>();
    for (const entry of await requestLog(on)) {
      if (entry.kind !== 'api' || entry.method !== 'PATCH') continue;
      const id = entry.path.replace('/contract/', '');
      answers.set(id, [...(answers.get(id) ?? []), entry.status]);
    }
    return answers;
  }

  /** The fleet's edits change Company members (Add/Remove) or only values (Replace). */
  function addsOrRemoves(fleet: Fleet, id: string): boolean {
    const tenant = id.replace(/-\d+$/, '');
    return JSON.stringify(fleet.live.get(tenant)!.get(id)!.Company) !== JSON.stringify(desiredOf(fleet, id).Company);
  }

  it('with api.read: each 500 to an Add/Remove PATCH is settled by a read, and everything is applied', async () => {
    const { fleet, dir } = await faultySetup(true);

    const run = await runCli(['apply', '--no-refresh', '--tenant', 'tenant-a', '--report', 'report.json'], dir, fleet.env);
    const reads = await apiRequests(emulator!, 'GET');
    const answers = await patchAnswers(emulator!);
    await setFaults(emulator!, {});
    const check = await runCli(['apply', '--refresh', '--full', '--tenant', 'tenant-a'], dir, fleet.env);

    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(report.summary).toMatchObject({ changed: 4, applied: 4, failed: 0 });
    const hit = [...answers].filter(([id, statuses]) => statuses[0] === 500 && addsOrRemoves(fleet, id));
    expect(hit.length).toBeGreaterThan(0);
    for (const [id] of hit) expect(reads).toContain(`/contract/${id} 200`);
    expect((await requestLog(emulator!)).filter((entry) => entry.status === 409)).toEqual([]);
    expect(check.stdout).toContain('nothing to do');
  });

  it('without api.read: a Replace-only patch is resent, an Add/Remove one is sent once and ends unknown', async () => {
    const { fleet, dir } = await faultySetup(false);

    const run = await runCli(['apply', '--no-refresh', '--tenant', 'tenant-a', '--report', 'report.json'], dir, fleet.env);

    expect(run.code).toBe(1);
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    const unknown = new Set<string>(
      report.tenants.flatMap((tenant: { failures: { contractId: string; outcome: string }[] }) =>
        tenant.failures.filter((failure) => failure.outcome === 'unknown').map((failure) => failure.contractId),
      ),
    );
    const hit = [...(await patchAnswers(emulator!))].filter(([, statuses]) => statuses[0] === 500);
    const hitAddsOrRemoves = hit.filter(([id]) => addsOrRemoves(fleet, id));
    const hitReplaceOnly = hit.filter(([id]) => !addsOrRemoves(fleet, id));
    expect(hitAddsOrRemoves.length).toBeGreaterThan(0);
    expect(hitReplaceOnly.length).toBeGreaterThan(0);
    for (const [id, statuses] of hitAddsOrRemoves) expect([id, statuses, unknown.has(id)]).toEqual([id, [500], true]);
    for (const [id, statuses] of hitReplaceOnly) expect([id, statuses.at(-1), unknown.has(id)]).toEqual([id, 204, false]);
    expect(run.stdout).toMatch(/500 Internal Server Error.*the patch adds or removes members, so it was not resent \(configure api\.read to settle it\)/);
  });
});
