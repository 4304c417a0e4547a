/**
 * After a successful apply the state store knows every planned contract, changed or not
 * (docs/architecture.md section 7): contracts read live and found unchanged are recorded (only
 * when their record differs), and an uncertain contract that plans as no change is read and
 * settled. Against the emulator over real HTTP, for each state backend in BACKENDS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { runApply, type ApplyRunDeps, type ApplyRunOptions } from '../../engine/pipeline/index.ts';
import { createTenantTokens, type Scope } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import type { Config } from '../../engine/config/types.ts';
import { createLogger, Redactor } from '../../engine/log/logger.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { readKnownState } from '../../engine/state/memory-store.ts';
import type { AppliedContract, StateStore } from '../../engine/state/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';

const SOURCE = { repo: '.', ref: null, commit: null };

/** The state backends these runs are checked against; the PostgreSQL backend is one more row. */
const BACKENDS: readonly { readonly name: string; open(dir: string): StateStore }[] = [{ name: 'file', open: (dir) => fileStateStore(dir) }];

let emulator: Emulator | undefined;
let stateDir: string;

beforeEach(async () => {
  logMark = 0;
  stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-record-'));
});

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  await rm(stateDir, { recursive: true, force: true });
});

/** The store, with every contract record written through it counted. */
function counting(store: StateStore): { store: StateStore; writes: AppliedContract[] } {
  const writes: AppliedContract[] = [];
  return {
    writes,
    store: {
      ...store,
      readTenant: (tenant, only) => store.readTenant(tenant, only),
      writeContract: async (tenant, applied) => {
        writes.push(applied);
        await store.writeContract(tenant, applied);
      },
    },
  };
}

function deps(config: Config, fleet: Fleet, store: StateStore, scopes: Scope[], readScopes?: Scope[]): ApplyRunDeps {
  const redactor = new Redactor();
  for (const secret of Object.values(fleet.env)) redactor.add(secret);
  const logger = createLogger({ redactor, destination: { write: () => true }, level: 'silent' });
  function tokensFor(asked: Scope[]) {
    return createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: asked, env: fleet.env, logger, redactor });
  }
  return {
    store,
    tokens: tokensFor(scopes),
    ...(readScopes ? { readTokens: tokensFor(readScopes) } : {}),
    api: createApiClient({
      baseUrl: config.api.baseUrl,
      ...(config.api.read ? { readPath: config.api.read.path } : {}),
      timeoutMs: 5000,
      userAgent: 'contract-sync/test',
      correlationId: 'run-test',
      redactor,
    }),
    clock: systemClock,
    random: Math.random,
    logger,
  };
}

function runOptions(fleet: Fleet, config: Config, overrides: Partial<ApplyRunOptions>): ApplyRunOptions {
  return { config, contractSets: fleet.desired, source: SOURCE, refresh: false, dryRun: false, lockTimeoutMs: 5000, runId: 'run-test', ...overrides };
}

/** The emulator's request log has no reset: requests are counted from a mark. */
let logMark = 0;

async function markLog(): Promise<void> {
  logMark = (await requestLog(emulator!)).length;
}

async function patches(): Promise<string[]> {
  return (await requestLog(emulator!))
    .slice(logMark)
    .filter((entry) => entry.kind === 'api' && entry.method === 'PATCH')
    .map((entry) => `${entry.path} ${entry.status}`);
}

describe.each(BACKENDS)('apply records unchanged contracts ($name state)', (backend) => {
  it('a refreshed apply leaves a state store that plans 0 changes without a refresh, and a --no-refresh apply then sends nothing (no 409)', async () => {
    const fleet = createFleet(2, 12);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator, { read: true });
    const store = backend.open(stateDir);

    const first = await runApply(runOptions(fleet, config, { refresh: true }), deps(config, fleet, store, ['core:read', 'core:write']));
    const fromStore = createPlan(fleet.desired, await readKnownState(store, fleet.tenants), {
      createdAt: '2027-01-01T00:00:00.000Z',
      source: SOURCE,
      collections: config.collections,
    });
    await markLog();
    const second = await runApply(runOptions(fleet, config, { refresh: false }), deps(config, fleet, store, ['core:write'], ['core:read']));

    expect(first.report.summary).toMatchObject({ applied: 16, failed: 0 });
    expect(first.plan.tenants.flatMap((tenant) => tenant.contracts).filter((contract) => contract.action === 'noop')).toHaveLength(8);
    expect(fromStore.summary).toMatchObject({ contracts: 24, changed: 0, ops: 0 });
    expect(fromStore.tenants.flatMap((tenant) => tenant.contracts).map((contract) => contract.knownFrom)).toEqual(Array(24).fill('state'));
    expect(second.report.summary).toMatchObject({ changed: 0, failed: 0 });
    expect(await patches()).toEqual([]);
  });

  it('a member added in git to a contract that needed no change is sent as one Add from the state store, without a 409', async () => {
    const fleet = createFleet(1, 6);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator, { read: true });
    const store = backend.open(stateDir);
    await runApply(runOptions(fleet, config, { refresh: true }), deps(config, fleet, store, ['core:read', 'core:write']));
    // Contract 0000 needed no change; its members are live but were never PATCHed by contract-sync.
    const id = 'tenant-a-0000';
    const before = fleet.desired[0]!.contracts.find((contract) => contract.id === id)!;
    const added: ContractFields = { ...before.fields, Company: [...(before.fields.Company ?? []), { Id: 9001, RelationType: 'Partner' }] };
    const edited = [
      { ...fleet.desired[0]!, contracts: fleet.desired[0]!.contracts.map((contract) => (contract.id === id ? { ...contract, fields: added } : contract)) },
    ];
    await markLog();

    const { plan, report } = await runApply(
      runOptions(fleet, config, { contractSets: edited, refresh: false }),
      deps(config, fleet, store, ['core:write'], ['core:read']),
    );

    const planned = plan.tenants[0]!.contracts.find((contract) => contract.id === id)!;
    expect(planned).toMatchObject({ action: 'update', knownFrom: 'state' });
    expect(planned.ops).toEqual([{ op: 'Add', path: '/Contract/Company', value: { Id: 9001, RelationType: 'Partner' } }]);
    expect(report.summary).toMatchObject({ changed: 1, applied: 1, failed: 0 });
    expect(await patches()).toEqual([`/contract/${id} 204`]);
    expect(diffContract(await liveContract(emulator, 'tenant-a', id), added)).toEqual([]);
  });

  it('records only contracts whose record differs from what was read, and nothing in a dry run', async () => {
    const fleet = createFleet(1, 9);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator, { read: true });
    const { store, writes } = counting(backend.open(stateDir));
    // One unchanged contract already recorded as it is live, one recorded with a stale state.
    const live = fleet.live.get('tenant-a')!;
    const same = live.get('tenant-a-0000')!;
    const stale = { ...live.get('tenant-a-0003')!, Name: 'renamed since' };
    await store.writeContract('tenant-a', {
      contractId: 'tenant-a-0000',
      fields: same,
      fingerprint: fingerprint(same),
      appliedAt: '2027-01-01T00:00:00.000Z',
      commit: null,
    });
    await store.writeContract('tenant-a', {
      contractId: 'tenant-a-0003',
      fields: stale,
      fingerprint: fingerprint(stale),
      appliedAt: '2027-01-01T00:00:00.000Z',
      commit: null,
    });
    writes.length = 0;

    await runApply(runOptions(fleet, config, { refresh: true, dryRun: true }), deps(config, fleet, store, ['core:read']));
    const afterDryRun = writes.length;
    await runApply(runOptions(fleet, config, { refresh: true }), deps(config, fleet, store, ['core:read', 'core:write']));
    const afterApply = writes.map((write) => write.contractId).sort();
    writes.length = 0;
    await runApply(runOptions(fleet, config, { refresh: true }), deps(config, fleet, store, ['core:read', 'core:write']));

    expect(afterDryRun).toBe(0);
    // The 6 changed contracts (PATCHed), and the unchanged 0003 and 0006; 0000's record was already right.
    expect(afterApply).toEqual([
      'tenant-a-0001',
      'tenant-a-0002',
      'tenant-a-0003',
      'tenant-a-0004',
      'tenant-a-0005',
      'tenant-a-0006',
      'tenant-a-0007',
      'tenant-a-0008',
    ]);
    expect((await store.readTenant('tenant-a')).get('tenant-a-0003')!.fields).toEqual(live.get('tenant-a-0003'));
    // Everything converged and recorded: a second refreshed apply rewrites nothing.
    expect(writes).toEqual([]);
  });
});

describe.each(BACKENDS)('apply settles uncertain contracts that plan as no change ($name state)', (backend) => {
  async function uncertainSetup(liveOverride?: ContractFields) {
    const fleet = createFleet(1, 3);
    const id = 'tenant-a-0000';
    const seed = fleetSeed(fleet);
    const tenant = seed.tenants['tenant-a']!;
    emulator = await startEmulator(
      liveOverride ? { ...seed, tenants: { 'tenant-a': { ...tenant, contracts: { ...tenant.contracts, [id]: liveOverride } } } } : seed,
    );
    const config = fleetConfig(fleet, emulator, { read: true });
    const store = backend.open(stateDir);
    // An earlier run recorded everything as desired, then stopped with 0000 in flight.
    for (const contract of fleet.desired[0]!.contracts) {
      await store.writeContract('tenant-a', {
        contractId: contract.id,
        fields: contract.fields,
        fingerprint: fingerprint(contract.fields),
        appliedAt: '2027-01-01T00:00:00.000Z',
        commit: null,
      });
    }
    await store.writeRun('tenant-a', {
      lastAppliedCommit: null,
      pending: [{ contractId: id, outcome: 'interrupted', reason: 'run earlier', since: '2027-01-01T00:00:00.000Z', file: 'contracts/tenant-a.yaml' }],
      updatedAt: '2027-01-01T00:00:00.000Z',
    });
    return { fleet, config, store, id };
  }

  it('reads it with the read token, records what it read and drops it from pending', async () => {
    const { fleet, config, store, id } = await uncertainSetup();

    const { plan, report } = await runApply(runOptions(fleet, config, { refresh: false }), deps(config, fleet, store, ['core:write'], ['core:read']));

    expect(plan.tenants[0]!.contracts.find((contract) => contract.id === id)).toMatchObject({ action: 'noop', knownFrom: 'state' });
    expect(report.summary).toMatchObject({ failed: 0 });
    const gets = (await requestLog(emulator!)).filter((entry) => entry.kind === 'api').map((entry) => `${entry.method} ${entry.path} ${entry.status}`);
    expect(gets).toEqual([`GET /contract/${id} 200`]);
    expect((await store.readRun('tenant-a'))!.pending).toEqual([]);
  });

  it('sends what the read shows is missing, then drops it from pending', async () => {
    const fleet0 = createFleet(1, 3);
    const desired = fleet0.desired[0]!.contracts[0]!.fields;
    const { fleet, config, store, id } = await uncertainSetup({ ...desired, Name: 'changed on the service' });

    const { report } = await runApply(runOptions(fleet, config, { refresh: false }), deps(config, fleet, store, ['core:write'], ['core:read']));

    expect(report.summary).toMatchObject({ failed: 0 });
    expect(await patches()).toEqual([`/contract/${id} 204`]);
    expect(diffContract(await liveContract(emulator!, 'tenant-a', id), desired)).toEqual([]);
    expect((await store.readRun('tenant-a'))!.pending).toEqual([]);
  });

  it('a dry run reads nothing and leaves it pending', async () => {
    const { fleet, config, store, id } = await uncertainSetup();

    await runApply(runOptions(fleet, config, { refresh: false, dryRun: true }), deps(config, fleet, store, ['core:read']));

    expect((await requestLog(emulator!)).filter((entry) => entry.kind === 'api')).toEqual([]);
    expect((await store.readRun('tenant-a'))!.pending.map((entry) => entry.contractId)).toEqual([id]);
  });
});
