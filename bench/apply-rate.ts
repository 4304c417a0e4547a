// Applied requests/second against the emulator when the service limits each tenant to 20 req/s and
// the config asks for the same: 5 tenants x 200 changed contracts, no reads (known state from the
// state store), RateLimit headers on every answer. Prints one JSON line.
//   npx tsx bench/apply-rate.ts [--tenants 5] [--contracts 200] [--rps 20]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApiClient } from '../engine/api/client.ts';
import { runApply } from '../engine/apply/run-apply.ts';
import { createTenantTokens } from '../engine/auth/index.ts';
import { systemClock } from '../engine/clock.ts';
import { silentLogger } from '../engine/log/logger.ts';
import { fingerprint } from '../engine/plan/fingerprint.ts';
import { fileStateStore } from '../engine/state/file-store.ts';
import { startEmulator } from '../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, requestLog } from '../test/helpers/fleet.ts';

const { values } = parseArgs({ options: { tenants: { type: 'string', default: '5' }, contracts: { type: 'string', default: '200' }, rps: { type: 'string', default: '20' } } });
const tenants = Number(values.tenants);
const rps = Number(values.rps);

// Every contract changed, so that every contract is one PATCH.
const fleet = createFleet(tenants, Number(values.contracts));
const desired = fleet.desired.map((set) => ({ ...set, contracts: set.contracts.map((contract) => ({ ...contract, fields: { ...contract.fields, Comment: 'bench' } })) }));
const emulator = await startEmulator(fleetSeed(fleet, { requestsPerSecond: rps, burst: rps }));
const stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-'));
try {
  const config = fleetConfig(fleet, emulator, { rate: `{ requestsPerSecond: ${rps}, concurrency: 2, maxInFlight: 16 }` });
  const store = fileStateStore(stateDir);
  for (const [tenant, contracts] of fleet.live) {
    for (const [contractId, fields] of contracts) await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: new Date().toISOString(), commit: null });
  }
  const logger = silentLogger();
  const started = performance.now();
  const { report } = await runApply(
    { config, contractSets: desired, source: { repo: '.', ref: null, commit: null }, refresh: false, dryRun: false, lockTimeoutMs: 5000, runId: 'bench' },
    {
      store,
      tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: ['core:write'], env: fleet.env, logger }),
      api: createApiClient({ baseUrl: config.api.baseUrl, timeoutMs: 10_000, userAgent: 'contract-sync/bench', correlationId: 'bench' }),
      clock: systemClock,
      random: Math.random,
      logger,
    },
  );
  const wallSeconds = (performance.now() - started) / 1000;
  const api = (await requestLog(emulator)).filter((entry) => entry.kind === 'api');
  const times = api.map((entry) => Date.parse(entry.time)).sort((a, b) => a - b);
  const spanSeconds = (times.at(-1)! - times[0]!) / 1000;
  // n requests spread over a span cover n - 1 gaps.
  const appliedRate = (api.length - 1) / spanSeconds;
  const allowed = tenants * rps;
  console.log(
    JSON.stringify({
      tenants,
      allowedRequestsPerSecond: allowed,
      requests: api.length,
      applied: report.summary.applied,
      failed: report.summary.failed,
      status429: api.filter((entry) => entry.status === 429).length,
      requestsPerSecond: Math.round(appliedRate * 10) / 10,
      ratioOfAllowed: Math.round((appliedRate / allowed) * 1000) / 1000,
      wallSeconds: Math.round(wallSeconds * 10) / 10,
    }),
  );
} finally {
  await emulator.close();
  await rm(stateDir, { recursive: true, force: true });
}
