/**
 * End-to-end: runApply against the emulator over real HTTP, with the real identity provider,
 * the file state store in a temporary directory, and no fake standing in between.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { runApply, type ApplyRunDeps } from '../../engine/pipeline/index.ts';
import { createTenantTokens, type Scope } from '../../engine/auth/index.ts';
import { systemClock, type Clock } from '../../engine/io/clock.ts';
import type { Config } from '../../engine/config/types.ts';
import { createLogger, Redactor } from '../../engine/log/logger.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { parseLockFile } from '../../engine/state/file-format.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import type { StateStore } from '../../engine/state/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fastClock, fleetConfig, fleetSeed, liveContract, requestLog, setFaults, storeMatchingLive, type Fleet } from '../helpers/fleet.ts';

const SOURCE = { repo: '.', ref: null, commit: null };

let emulator: Emulator;
let stateDir: string;

beforeEach(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-apply-'));
});

afterEach(async () => {
  await emulator?.close();
  await rm(stateDir, { recursive: true, force: true });
});

function engineDeps(config: Config, fleet: Fleet, store: StateStore, options: { scopes: Scope[]; clock?: Clock; logLines?: string[] }): ApplyRunDeps {
  const redactor = new Redactor();
  for (const secret of Object.values(fleet.env)) redactor.add(secret);
  const logger = createLogger({ redactor, destination: { write: (line: string) => options.logLines?.push(line) }, level: 'debug' });
  const clock = options.clock ?? systemClock;
  return {
    store,
    tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: options.scopes, env: fleet.env, logger, redactor }),
    api: createApiClient({
      baseUrl: config.api.baseUrl,
      ...(config.api.read ? { readPath: config.api.read.path } : {}),
      timeoutMs: 5000,
      userAgent: 'contract-sync/test',
      correlationId: 'run-test',
      redactor,
    }),
    clock,
    random: Math.random,
    logger,
  };
}

async function expectConverged(fleet: Fleet): Promise<void> {
  for (const set of fleet.desired) {
    for (const contract of set.contracts) {
      const live = await liveContract(emulator, set.tenant, contract.id);
      expect(diffContract(live, contract.fields), `${set.tenant} ${contract.id}`).toEqual([]);
    }
  }
}

describe('runApply against the emulator', () => {
  it('applies 3 tenants x 200 contracts with one token per tenant and one PATCH per changed contract', { timeout: 60_000 }, async () => {
    const fleet = createFleet(3, 200);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator);
    const store = await storeMatchingLive(stateDir, fleet);

    const { plan, report } = await runApply(
      { config, contractSets: fleet.desired, source: SOURCE, refresh: false, dryRun: false, lockTimeoutMs: 5000, runId: 'run-test' },
      engineDeps(config, fleet, store, { scopes: ['core:write'] }),
    );

    const changedCount = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
    expect(plan.summary.changed).toBe(changedCount);
    expect(report.summary).toMatchObject({ changed: changedCount, applied: changedCount, failed: 0 });
    await expectConverged(fleet);
    const log = await requestLog(emulator);
    for (const tenant of fleet.tenants) {
      expect(log.filter((entry) => entry.kind === 'token' && entry.tenant === tenant)).toHaveLength(1);
      const patched = log.filter((entry) => entry.kind === 'api' && entry.tenant === tenant).map((entry) => `${entry.method} ${entry.path}`);
      expect(patched.sort()).toEqual([...fleet.changed.get(tenant)!].map((id) => `PATCH /contract/${id}`).sort());
    }
    const after = await store.readTenant('tenant-a');
    const anyChanged = [...fleet.changed.get('tenant-a')!][0]!;
    expect(diffContract(after.get(anyChanged)!.fields, fleet.desired[0]!.contracts.find((c) => c.id === anyChanged)!.fields)).toEqual([]);
  });

  it('converges in one run under injected faults when a read is configured, never resending blindly or mixing tenants', { timeout: 60_000 }, async () => {
    const fleet = createFleet(3, 200, 11);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator, { read: true });
    await setFaults(emulator, {
      seed: 42,
      api: { status: { '503': 0.2, '429': 0.1 }, retryAfterSeconds: 1, resetAfter: 0.05 },
      token: { status: { '503': 0.05 } },
    });
    const logLines: string[] = [];
    const deps = engineDeps(config, fleet, fileStateStore(stateDir), { scopes: ['core:read', 'core:write'], clock: fastClock(50), logLines });
    let revoked = false;

    const { report } = await runApply(
      { config, contractSets: fleet.desired, source: SOURCE, refresh: true, dryRun: false, lockTimeoutMs: 5000, runId: 'run-faults' },
      {
        ...deps,
        onProgress: ({ done }) => {
          // Tokens revoked mid-run: every request in flight and after gets a 401 until a new token.
          if (done === 150 && !revoked) {
            revoked = true;
            void fetch(`${emulator.urls.adminUrl}/revoke-tokens`, { method: 'POST' });
          }
        },
      },
    );

    expect(report.tenants.flatMap((tenant) => tenant.failures)).toEqual([]);
    expect(revoked).toBe(true);
    await setFaults(emulator, {});
    await expectConverged(fleet);
    const log = await requestLog(emulator);
    expect(log.filter((entry) => entry.status === 409)).toEqual([]);
    expect(log.filter((entry) => entry.status === 404)).toEqual([]);
    expect(log.filter((entry) => entry.status === 401).length).toBeGreaterThan(0);
    expect(log.filter((entry) => entry.fault?.type === 'resetAfter').length).toBeGreaterThan(0);
    for (const entry of log.filter((e) => e.kind === 'api' && e.tenant !== null)) {
      expect(entry.path.startsWith(`/contract/${entry.tenant}-`), `${entry.tenant} ${entry.path}`).toBe(true);
    }
    const secrets = Object.values(fleet.env);
    const text = [logLines.join(''), JSON.stringify(report)].join('\n');
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\./);
  });
});

describe('runApply with other runs on the same state', () => {
  function changedCount(fleet: Fleet): number {
    return [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
  }

  /** The runId holding `tenant`'s lock in `stateDir`, or undefined when it is free. */
  async function lockOwner(tenant: string): Promise<string | undefined> {
    const text = await readFile(path.join(stateDir, tenant, '.lock'), 'utf8').catch(() => undefined);
    return text === undefined ? undefined : parseLockFile(text)?.owner;
  }

  /** PATCHes that the service answered 204, by path: each must be there once. */
  async function appliedPatches(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const entry of await requestLog(emulator)) {
      if (entry.kind === 'api' && entry.method === 'PATCH' && entry.status === 204) counts.set(entry.path, (counts.get(entry.path) ?? 0) + 1);
    }
    return counts;
  }

  it('finishes two runs whose lock waits would cross if each took every lock at once', { timeout: 30_000 }, async () => {
    const fleet = createFleet(3, 6);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator);
    const store = await storeMatchingLive(stateDir, fleet);
    // The schedule that deadlocks runs taking every lock at once: run-1 holds tenant-a and tenant-b
    // when run-2 starts, and asks for tenant-c only once run-2 holds it (or, if run-2 never takes
    // it before tenant-a, after a second).
    let gateReached!: () => void;
    const atGate = new Promise<void>((resolve) => (gateReached = resolve));
    const gatedStore: StateStore = {
      ...store,
      async lock(tenant, lockOptions) {
        if (tenant === 'tenant-c') {
          gateReached();
          for (let waited = 0; waited < 1000 && (await lockOwner('tenant-c')) !== 'run-2'; waited += 10) await delay(10);
        }
        return store.lock(tenant, lockOptions);
      },
    };
    const options = { config, contractSets: fleet.desired, source: SOURCE, refresh: false, dryRun: false, lockTimeoutMs: 3000 };

    const first = runApply({ ...options, runId: 'run-1' }, engineDeps(config, fleet, gatedStore, { scopes: ['core:write'] }));
    await atGate;
    await vi.waitFor(async () => expect([await lockOwner('tenant-a'), await lockOwner('tenant-b')]).toEqual(['run-1', 'run-1']));
    const second = runApply({ ...options, runId: 'run-2' }, engineDeps(config, fleet, store, { scopes: ['core:write'] }));
    const reports = (await Promise.all([first, second])).map(({ report }) => report);

    expect(reports.flatMap((report) => report.tenants.flatMap((tenant) => tenant.error ?? []))).toEqual([]);
    expect(reports.map((report) => report.summary.applied)).toEqual([changedCount(fleet), 0]);
    expect([...(await appliedPatches()).values()]).toEqual(Array.from({ length: changedCount(fleet) }, () => 1));
    await expectConverged(fleet);
  });

  it("applies the other tenants when one tenant's lock times out", async () => {
    const fleet = createFleet(3, 6);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator);
    const store = await storeMatchingLive(stateDir, fleet);
    const held = await store.lock('tenant-b', { timeoutMs: 0, owner: 'another-run' });

    const { report } = await runApply(
      { config, contractSets: fleet.desired, source: SOURCE, refresh: false, dryRun: false, lockTimeoutMs: 300, runId: 'run-1' },
      engineDeps(config, fleet, store, { scopes: ['core:write'] }),
    );
    await held.release();

    const byTenant = new Map(report.tenants.map((tenant) => [tenant.tenant, tenant]));
    expect(byTenant.get('tenant-b')?.error).toMatch(/^tenant "tenant-b" is locked by another run \(owner "another-run"/);
    expect(byTenant.get('tenant-b')?.applied).toBe(0);
    expect(byTenant.get('tenant-a')).toMatchObject({ applied: fleet.changed.get('tenant-a')!.size, failures: [] });
    expect(byTenant.get('tenant-c')).toMatchObject({ applied: fleet.changed.get('tenant-c')!.size, failures: [] });
    expect([...(await appliedPatches()).keys()].filter((key) => key.includes('tenant-b'))).toEqual([]);
    expect(await Promise.all(fleet.tenants.map(lockOwner))).toEqual([undefined, undefined, undefined]);
  });

  it('releases the lock of a tenant that failed before sending at once, not after the locks it still waits for', { timeout: 30_000 }, async () => {
    const fleet = createFleet(3, 6);
    emulator = await startEmulator(fleetSeed(fleet));
    const config = fleetConfig(fleet, emulator, { read: true });
    const store = await storeMatchingLive(stateDir, fleet);
    const held = await store.lock('tenant-b', { timeoutMs: 0, owner: 'another-run' });
    // tenant-a's token is refused: the run fails that tenant while it waits for tenant-b.
    const wrongSecret = { ...fleet, env: { ...fleet.env, SECRET_TENANT_A: 'not-the-secret-0123456789' } };

    const running = runApply(
      { config, contractSets: fleet.desired, source: SOURCE, refresh: true, dryRun: false, lockTimeoutMs: 20_000, runId: 'run-1' },
      engineDeps(config, wrongSecret, store, { scopes: ['core:read', 'core:write'] }),
    );
    await vi.waitFor(
      async () => {
        const refused = (await requestLog(emulator)).some((entry) => entry.kind === 'token' && entry.tenant === 'tenant-a' && entry.status === 401);
        expect({ refused, owner: await lockOwner('tenant-a') }).toEqual({ refused: true, owner: undefined });
      },
      { timeout: 10_000, interval: 20 },
    );
    const stillWaiting = await Promise.race([running.then(() => false), delay(50, true)]);
    await held.release();
    const { report } = await running;

    expect(stillWaiting).toBe(true);
    const byTenant = new Map(report.tenants.map((tenant) => [tenant.tenant, tenant]));
    expect(byTenant.get('tenant-a')?.error).toBeDefined();
    expect(byTenant.get('tenant-b')).toMatchObject({ applied: fleet.changed.get('tenant-b')!.size, failures: [] });
    expect(byTenant.get('tenant-c')).toMatchObject({ applied: fleet.changed.get('tenant-c')!.size, failures: [] });
  });
});
