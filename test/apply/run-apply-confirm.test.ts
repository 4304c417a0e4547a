/**
 * runApply's confirmation hook and removal guard, against the emulator with the file state store:
 * the plan is shown before the first PATCH, a declined run sends and writes nothing and releases
 * its locks, and a tenant tripping the guard is refused while the others go on.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { runApply, type ApplyRunDeps, type ApplyRunOptions, type SendPreview } from '../../engine/pipeline/index.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import type { Config } from '../../engine/config/types.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import { createLogger, Redactor } from '../../engine/log/logger.ts';
import type { StateStore } from '../../engine/state/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, requestLog, storeMatchingLive, type Fleet } from '../helpers/fleet.ts';

let emulator: Emulator;
let stateDir: string;

beforeEach(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-confirm-'));
});

afterEach(async () => {
  await emulator?.close();
  await rm(stateDir, { recursive: true, force: true });
});

function deps(config: Config, fleet: Fleet, store: StateStore, confirm?: ApplyRunDeps['confirm']): ApplyRunDeps {
  const redactor = new Redactor();
  const logger = createLogger({ redactor, destination: { write: () => undefined }, level: 'silent' });
  return {
    store,
    tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: ['core:write'], env: fleet.env, logger, redactor }),
    api: createApiClient({ baseUrl: config.api.baseUrl, timeoutMs: 5000, userAgent: 'contract-sync/test', correlationId: 'run-test', redactor }),
    clock: systemClock,
    random: Math.random,
    logger,
    ...(confirm ? { confirm } : {}),
  };
}

async function patchCount(): Promise<number> {
  return (await requestLog(emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').length;
}

/** Every file under the state directory with its content: what "state untouched" compares. */
async function stateFiles(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(stateDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files[path.relative(stateDir, path.join(entry.parentPath, entry.name))] = await readFile(path.join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

async function setup(): Promise<{ fleet: Fleet; config: Config; store: StateStore; options: ApplyRunOptions }> {
  const fleet = createFleet(2, 6);
  emulator = await startEmulator(fleetSeed(fleet));
  const config = fleetConfig(fleet, emulator);
  const store = await storeMatchingLive(stateDir, fleet);
  const options: ApplyRunOptions = {
    config,
    contractSets: fleet.desired,
    source: { repo: '.', ref: null, commit: null },
    refresh: false,
    dryRun: false,
    lockTimeoutMs: 1000,
    runId: 'run-1',
  };
  return { fleet, config, store, options };
}

function opsOf(fleet: Fleet, tenants: readonly string[]) {
  return { tenants: tenants.length, contracts: tenants.reduce((sum, tenant) => sum + fleet.changed.get(tenant)!.size, 0) };
}

describe('runApply with a confirmation', () => {
  it('shows the plan and what will be sent before the first PATCH, then sends on yes', async () => {
    const { fleet, config, store, options } = await setup();
    const seen: { preview: SendPreview; patches: number }[] = [];

    const result = await runApply(
      options,
      deps(config, fleet, store, async (preview) => {
        seen.push({ preview, patches: await patchCount() });
        return true;
      }),
    );

    expect(seen).toHaveLength(1);
    expect(seen[0]!.patches).toBe(0);
    expect(seen[0]!.preview.plan).toBe(result.plan);
    expect(seen[0]!.preview.sending).toEqual({ ...opsOf(fleet, fleet.tenants), ops: result.plan.summary.ops });
    expect(seen[0]!.preview.refused).toEqual([]);
    expect(result.cancelled).toBeUndefined();
    expect(result.report.summary.applied).toBe(opsOf(fleet, fleet.tenants).contracts);
    expect(await patchCount()).toBe(opsOf(fleet, fleet.tenants).contracts);
  });

  it('sends nothing, writes nothing and releases every lock when the answer is no', async () => {
    const { fleet, config, store, options } = await setup();
    const before = await stateFiles();

    const result = await runApply(
      options,
      deps(config, fleet, store, async () => false),
    );

    expect(result.cancelled).toBe(true);
    expect(await patchCount()).toBe(0);
    expect(await stateFiles()).toEqual(before);
    // Free again: another run takes every lock at once.
    for (const tenant of fleet.tenants) await (await store.lock(tenant, { timeoutMs: 0, owner: 'next-run' })).release();
  });

  it('releases every lock and rethrows when the confirmation fails', async () => {
    const { fleet, config, store, options } = await setup();

    const run = runApply(
      options,
      deps(config, fleet, store, async () => {
        throw new Error('terminal gone');
      }),
    );

    await expect(run).rejects.toThrow('terminal gone');
    expect(await patchCount()).toBe(0);
    for (const tenant of fleet.tenants) await (await store.lock(tenant, { timeoutMs: 0, owner: 'next-run' })).release();
  });
});

describe('runApply with the removal guard', () => {
  /** The fleet's desired state, with tenant-a's first changed contract's companies all removed (2 more removals). */
  function emptyingOneContract(fleet: Fleet): ContractSet[] {
    return fleet.desired.map((set) =>
      set.tenant !== 'tenant-a'
        ? set
        : {
            ...set,
            contracts: set.contracts.map((contract) =>
              contract.id === 'tenant-a-0001' ? { ...contract, fields: { ...contract.fields, Company: [] } } : contract,
            ),
          },
    );
  }

  it('refuses the tenant above the limit, naming count, tenant and flag, and applies the one at the limit', async () => {
    const { fleet, config, store, options } = await setup();
    const previews: SendPreview[] = [];

    const { report } = await runApply(
      { ...options, contractSets: emptyingOneContract(fleet), removals: { maxRemovals: 2, allow: false } },
      deps(config, fleet, store, async (preview) => {
        previews.push(preview);
        return true;
      }),
    );

    const byTenant = new Map(report.tenants.map((tenant) => [tenant.tenant, tenant]));
    expect(byTenant.get('tenant-a')?.error).toBe(
      'removal guard: the plan of tenant tenant-a removes 4 collection members, more than the limit of 2 (--max-removals, safety.maxRemovals); ' +
        'nothing sent for tenant-a. Check the desired state, or pass --allow-removals to send it anyway.',
    );
    expect(byTenant.get('tenant-a')?.failures.map((failure) => failure.reason)).toEqual(
      Array.from({ length: 4 }, () => 'not sent: refused by the removal guard'),
    );
    expect(byTenant.get('tenant-b')).toMatchObject({ applied: 4, failures: [] });
    expect(previews[0]!.refused.map((refusal) => refusal.tenant)).toEqual(['tenant-a']);
    expect(previews[0]!.sending).toMatchObject(opsOf(fleet, ['tenant-b']));
    const patched = (await requestLog(emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH');
    expect(patched.map((entry) => entry.tenant)).toEqual(Array.from({ length: 4 }, () => 'tenant-b'));
    expect(await store.readRun('tenant-a')).toBeUndefined();
  });

  it('sends everything when the run allows removals', async () => {
    const { fleet, config, store, options } = await setup();

    const { report } = await runApply(
      { ...options, contractSets: emptyingOneContract(fleet), removals: { maxRemovals: 0, allow: true } },
      deps(config, fleet, store),
    );

    expect(report.tenants.map((tenant) => tenant.error)).toEqual([undefined, undefined]);
    expect(report.summary.applied).toBe(8);
  });

  it('refuses a collection of 3 or more members emptied, under any limit', async () => {
    const { fleet, config, store, options } = await setup();
    const three = [1, 2, 3].map((Id) => ({ Id, RelationType: 'Supplier' }));
    await store.writeContract('tenant-b', {
      contractId: 'tenant-b-0000',
      fields: { ...fleet.live.get('tenant-b')!.get('tenant-b-0000')!, Company: three },
      fingerprint: 'sha256:x',
      appliedAt: '2026-01-01T00:00:00.000Z',
      commit: null,
    });
    const contractSets = fleet.desired.map((set) =>
      set.tenant !== 'tenant-b'
        ? set
        : {
            ...set,
            contracts: set.contracts.map((contract) =>
              contract.id === 'tenant-b-0000' ? { ...contract, fields: { ...contract.fields, Company: [] } } : contract,
            ),
          },
    );

    const { report } = await runApply({ ...options, contractSets, dryRun: true, removals: { maxRemovals: 100, allow: false } }, deps(config, fleet, store));

    expect(report.tenants[1]?.error).toContain('removes every member of Company of contract tenant-b-0000 (3 members)');
    expect(report.tenants[0]?.error).toBeUndefined();
  });
});
