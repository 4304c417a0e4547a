/**
 * Issue 21, item 1, the state store's half: a run never records its commit over one recorded after
 * it read its own. Against the emulator with the file state store, a newer run's record lands
 * between this run's planning and its first PATCH (as when its check was made before the lock):
 * the older run sends nothing, records nothing, and says why.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { runApply } from '../../engine/pipeline/index.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import { createLogger, Redactor } from '../../engine/log/logger.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, requestLog, storeMatchingLive } from '../helpers/fleet.ts';

let emulator: Emulator;
let stateDir: string;

beforeEach(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-cas-'));
});

afterEach(async () => {
  await emulator?.close();
  await rm(stateDir, { recursive: true, force: true });
});

it('sends and records nothing when the last applied commit changed between its read and its first record, and says so', async () => {
  const fleet = createFleet(1, 6);
  const tenant = fleet.tenants[0]!;
  emulator = await startEmulator(fleetSeed(fleet));
  const config = fleetConfig(fleet, emulator);
  const store = await storeMatchingLive(stateDir, fleet);
  const c0 = '0'.repeat(40);
  const c1 = '1'.repeat(40);
  const c2 = '2'.repeat(40);
  await store.writeRun(tenant, { lastAppliedCommit: c0, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' });
  const newer = { lastAppliedCommit: c2, pending: [], updatedAt: '2027-01-01T00:05:00.000Z' };
  const redactor = new Redactor();
  const logger = createLogger({ redactor, destination: { write: () => undefined }, level: 'silent' });

  const { report } = await runApply(
    { config, contractSets: fleet.desired, source: { repo: '.', ref: null, commit: c1 }, refresh: false, dryRun: false, lockTimeoutMs: 1000, runId: 'run-c1' },
    {
      store,
      tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: ['core:write'], env: fleet.env, logger, redactor }),
      api: createApiClient({ baseUrl: config.api.baseUrl, timeoutMs: 5000, userAgent: 'contract-sync/test', correlationId: 'run-c1', redactor }),
      clock: systemClock,
      random: Math.random,
      logger,
      // Planned, nothing sent yet: another writer records c2 (a second state store instance, no lock).
      async confirm() {
        await fileStateStore(stateDir).writeRun(tenant, newer);
        return true;
      },
    },
  );

  const [only] = report.tenants;
  expect(only!.error).toBe(
    `skipped: the last applied commit of tenant ${tenant} changed to ${c2} while this run held its lock (it read ${c0}); this run's commit is not recorded over it`,
  );
  expect(only!.applied).toBe(0);
  expect(only!.failures.length).toBe(fleet.changed.get(tenant)!.size);
  for (const failure of only!.failures) expect(failure).toMatchObject({ outcome: 'skipped', reason: `not sent: ${only!.error}` });
  expect(report.summary.failed).toBe(fleet.changed.get(tenant)!.size);
  expect((await requestLog(emulator)).filter((entry) => entry.kind === 'api')).toEqual([]);
  expect(await store.readRun(tenant)).toStrictEqual(newer);
});
