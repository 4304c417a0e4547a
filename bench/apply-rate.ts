// Applied requests/second against the emulator, which limits each tenant to --rps requests/second
// (a token bucket of --rps, publishing RateLimit-Policy and RateLimit on every answer): 5 tenants x
// 200 changed contracts, no reads (known state from the state store). Two cases, run --runs times
// each, medians printed beside each other:
//   - configured right: the config asks for --rps and concurrency 2, what the service allows;
//   - over-configured: the config asks for --factor times the rate and the concurrency.
// Throughput counts accepted requests (not 429s), over the whole run and, with the run's start-up
// (tokens, locks) left out, per tenant from its first request to its last. Prints one JSON line per
// run on stderr and one summary JSON line on stdout.
//   npx tsx bench/apply-rate.ts [--tenants 5] [--contracts 200] [--rps 20] [--factor 5] [--runs 3]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApiClient } from '../engine/api/client.ts';
import { runApply } from '../engine/pipeline/index.ts';
import { createTenantTokens } from '../engine/auth/index.ts';
import { systemClock } from '../engine/io/clock.ts';
import { silentLogger } from '../engine/log/logger.ts';
import { fingerprint } from '../engine/model/fingerprint.ts';
import { fileStateStore } from '../engine/state/file-store.ts';
import { startEmulator } from '../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, requestLog } from '../test/helpers/fleet.ts';
import { median } from './median.ts';

const { values } = parseArgs({
  options: {
    tenants: { type: 'string', default: '5' },
    contracts: { type: 'string', default: '200' },
    rps: { type: 'string', default: '20' },
    factor: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
  },
});
const tenants = Number(values.tenants);
const rps = Number(values.rps);
const factor = Number(values.factor);
const runs = Number(values.runs);
const CONCURRENCY = 2;

// Every contract changed, so that every contract is one PATCH.
const fleet = createFleet(tenants, Number(values.contracts));
const desired = fleet.desired.map((set) => ({
  ...set,
  contracts: set.contracts.map((contract) => ({ ...contract, fields: { ...contract.fields, Comment: 'bench' } })),
}));

interface RunFigures {
  readonly requests: number;
  readonly applied: number;
  readonly failed: number;
  readonly status429: number;
  readonly requestsPerSecond: number;
  readonly percentOfAllowed: number;
  /** The median over tenants of each tenant's accepted rate, from its first request to its last, as % of its limit: pacing without the run's start-up. */
  readonly tenantPercentOfAllowed: number;
  readonly wallSeconds: number;
}

/** Accepted requests per second over the span from the first request to the last; n requests cover n - 1 gaps. */
function acceptedRate(entries: readonly { time: string; status: number | null }[]): number {
  const times = entries.map((entry) => Date.parse(entry.time)).sort((a, b) => a - b);
  const accepted = entries.filter((entry) => entry.status !== 429).length;
  return (accepted - 1) / ((times.at(-1)! - times[0]!) / 1000);
}

async function runOnce(configuredRps: number, concurrency: number): Promise<RunFigures> {
  const emulator = await startEmulator(fleetSeed(fleet, { requestsPerSecond: rps, burst: rps }));
  const stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-'));
  try {
    const config = fleetConfig(fleet, emulator, { rate: `{ requestsPerSecond: ${configuredRps}, concurrency: ${concurrency}, maxInFlight: 16 }` });
    const store = fileStateStore(stateDir);
    for (const [tenant, contracts] of fleet.live) {
      for (const [contractId, fields] of contracts)
        await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: new Date().toISOString(), commit: null });
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
    // Throughput is what the service accepted, not the 429s.
    const appliedRate = acceptedRate(api);
    const tenantRates = [...new Set(api.map((entry) => entry.tenant))].map((tenant) => acceptedRate(api.filter((entry) => entry.tenant === tenant)));
    return {
      requests: api.length,
      applied: report.summary.applied,
      failed: report.summary.failed,
      status429: api.filter((entry) => entry.status === 429).length,
      requestsPerSecond: Math.round(appliedRate * 10) / 10,
      percentOfAllowed: Math.round((appliedRate / (tenants * rps)) * 1000) / 10,
      tenantPercentOfAllowed: Math.round((median(tenantRates) / rps) * 1000) / 10,
      wallSeconds: Math.round(wallSeconds * 10) / 10,
    };
  } finally {
    await emulator.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

const cases = {
  configuredRight: { requestsPerSecond: rps, concurrency: CONCURRENCY },
  overConfigured: { requestsPerSecond: rps * factor, concurrency: CONCURRENCY * factor },
};
const figures: Record<keyof typeof cases, RunFigures[]> = { configuredRight: [], overConfigured: [] };
// Interleaved, so that a noisy moment of the machine falls on both cases alike.
for (let run = 0; run < runs; run += 1) {
  for (const name of Object.keys(cases) as (keyof typeof cases)[]) {
    const { requestsPerSecond, concurrency } = cases[name];
    const result = await runOnce(requestsPerSecond, concurrency);
    figures[name].push(result);
    console.error(JSON.stringify({ case: name, run: run + 1, ...result }));
  }
}
console.log(
  JSON.stringify({
    tenants,
    serverLimitPerTenant: rps,
    allowedRequestsPerSecond: tenants * rps,
    runs,
    ...Object.fromEntries(
      (Object.keys(cases) as (keyof typeof cases)[]).map((name) => [
        name,
        {
          configured: cases[name],
          medianPercentOfAllowed: median(figures[name].map((run) => run.percentOfAllowed)),
          medianTenantPercentOfAllowed: median(figures[name].map((run) => run.tenantPercentOfAllowed)),
          median429: median(figures[name].map((run) => run.status429)),
          medianRequestsPerSecond: median(figures[name].map((run) => run.requestsPerSecond)),
          failed: figures[name].map((run) => run.failed),
        },
      ]),
    ),
  }),
);
