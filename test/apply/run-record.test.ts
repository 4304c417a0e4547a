/**
 * The run record runApply leaves for each tenant: against the emulator over real HTTP, with the
 * file state store in a temporary directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { planningFingerprint } from '../../engine/apply/incremental.ts';
import { runApply, type ApplyRunDeps } from '../../engine/pipeline/index.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import type { Config } from '../../engine/config/types.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import type { PendingContract, StateStore } from '../../engine/state/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';

const EARLIER_COMMIT = 'a'.repeat(40);
const COMMIT = 'b'.repeat(40);
const EARLIER = '2027-01-01T00:00:00.000Z';

let emulator: Emulator | undefined;
let stateDir: string;

beforeEach(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-run-record-'));
});

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  await rm(stateDir, { recursive: true, force: true });
});

function deps(config: Config, fleet: Fleet, store: StateStore): ApplyRunDeps {
  return {
    store,
    tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: ['core:read', 'core:write'], env: fleet.env, logger: silentLogger() }),
    api: createApiClient({
      baseUrl: config.api.baseUrl,
      ...(config.api.read ? { readPath: config.api.read.path } : {}),
      timeoutMs: 5000,
      userAgent: 'contract-sync/test',
      correlationId: 'run-test',
    }),
    clock: systemClock,
    random: Math.random,
    logger: silentLogger(),
  };
}

async function record(store: StateStore, tenant: string, contracts: ReadonlyMap<string, ContractFields>): Promise<void> {
  for (const [contractId, fields] of contracts) {
    await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: EARLIER, commit: EARLIER_COMMIT });
  }
}

function earlier(contractId: string, outcome: PendingContract['outcome']): PendingContract {
  return { contractId, outcome, reason: 'an earlier run', since: EARLIER };
}

describe('the run record runApply writes', () => {
  it.each([
    // Without a read nothing can settle the unknown entry; with one, the run reads it (see test/apply/record-unchanged.test.ts).
    ['from the state store, no reads', false, false, ['tenant-a-0001']],
    ['from the state store, reads', false, true, []],
    ['from live reads', true, true, []],
  ])('advances the commit with nothing to change (known state %s), and keeps only the entries left unsettled', async (_name, refresh, read, kept) => {
    // The service already holds the desired state, and so does the state store.
    const base = createFleet(1, 3);
    const desired = new Map(base.desired[0]!.contracts.map((contract) => [contract.id, contract.fields]));
    const fleet: Fleet = { ...base, live: new Map([['tenant-a', desired]]) };
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator, { read });
    const store = fileStateStore(stateDir);
    await record(store, 'tenant-a', desired);
    await store.writeRun('tenant-a', {
      lastAppliedCommit: EARLIER_COMMIT,
      pending: [earlier('tenant-a-0000', 'failed'), earlier('tenant-a-0001', 'unknown'), earlier('tenant-a-9999', 'failed')],
      updatedAt: EARLIER,
    });

    const { report } = await runApply(
      {
        config,
        contractSets: fleet.desired,
        source: { repo: '.', ref: 'HEAD', commit: COMMIT },
        refresh,
        dryRun: false,
        lockTimeoutMs: 1000,
        runId: 'run-test',
      },
      deps(config, fleet, store),
    );

    expect(report.summary).toMatchObject({ changed: 0, failed: 0 });
    const run = await store.readRun('tenant-a');
    expect(run).toMatchObject({ lastAppliedCommit: COMMIT, planningFingerprint: planningFingerprint(config, 'tenant-a') });
    expect(run?.pending).toEqual(kept.map((id) => ({ ...earlier(id, 'unknown'), file: 'contracts/tenant-a.yaml' })));
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH')).toEqual([]);
  });

  it('records the file of each contract it could not apply, and still advances the commit', async () => {
    const fleet = createFleet(1, 3);
    const seed = fleetSeed(fleet);
    const contracts = { ...seed.tenants['tenant-a']!.contracts };
    delete contracts['tenant-a-0001'];
    emulator = await startEmulator({ ...seed, tenants: { 'tenant-a': { ...seed.tenants['tenant-a']!, contracts } } });
    const config = fleetConfig(fleet, emulator);
    const store = fileStateStore(stateDir);
    await record(store, 'tenant-a', fleet.live.get('tenant-a')!);

    const { report } = await runApply(
      {
        config,
        contractSets: fleet.desired,
        source: { repo: '.', ref: null, commit: COMMIT },
        refresh: false,
        dryRun: false,
        lockTimeoutMs: 1000,
        runId: 'run-test',
      },
      deps(config, fleet, store),
    );

    expect(report.summary).toMatchObject({ changed: 2, applied: 1, failed: 1 });
    expect(await store.readRun('tenant-a')).toMatchObject({
      lastAppliedCommit: COMMIT,
      pending: [{ contractId: 'tenant-a-0001', outcome: 'failed', file: 'contracts/tenant-a.yaml', reason: expect.stringContaining('404') }],
    });
  });

  it('keeps the earlier commit for a working tree outside git', async () => {
    const fleet = createFleet(1, 3);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator);
    const store = fileStateStore(stateDir);
    const desired = new Map(fleet.desired[0]!.contracts.map((contract) => [contract.id, contract.fields]));
    await record(store, 'tenant-a', desired);
    await store.writeRun('tenant-a', { lastAppliedCommit: EARLIER_COMMIT, planningFingerprint: 'sha256:earlier', pending: [], updatedAt: EARLIER });

    await runApply(
      {
        config,
        contractSets: fleet.desired,
        source: { repo: '.', ref: null, commit: null },
        refresh: false,
        dryRun: false,
        lockTimeoutMs: 1000,
        runId: 'run-test',
      },
      deps(config, fleet, store),
    );

    expect(await store.readRun('tenant-a')).toMatchObject({ lastAppliedCommit: EARLIER_COMMIT, planningFingerprint: 'sha256:earlier', pending: [] });
  });
});
