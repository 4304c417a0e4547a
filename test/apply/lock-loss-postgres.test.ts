/**
 * Fencing end to end (issue 21, item 2): a real PostgreSQL server is stopped at once
 * (`pg_ctl stop -m immediate`) under a running apply and started again, and a second apply starts
 * after the restart. The emulator answers over real HTTP, slowly enough that the first run is
 * mid-way when the server goes. Each run's requests are timed at its fetch: the run that lost its
 * lock starts no request after it lost it, the two runs never send at once, the old holder's late
 * records are refused, and its report says what it sent and what was answered.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { runApply, type ApplyRunResult } from '../../engine/pipeline/index.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import type { Config } from '../../engine/config/types.ts';
import { createLogger, Redactor } from '../../engine/log/logger.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { openPostgresStateStore, type PostgresStateStore } from '../../engine/state/postgres/index.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, requestLog, setFaults, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

let server: PostgresServer;
let url: string;
let emulator: Emulator;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  // The helper's server trades durability for speed (synchronous_commit=off): a commit it
  // acknowledged could be lost to the immediate stop, which is not what this test is about.
  await server.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET synchronous_commit = on`);
}, 60_000);

afterAll(async () => {
  await emulator?.close();
  await server?.stop();
});

interface Sent {
  readonly run: string;
  readonly method: string;
  readonly contractId: string;
  readonly startedAt: number;
  answeredAt?: number;
  status?: number;
}

/** The real fetch, timed: what each run sent, when, and when it was answered. */
function timedFetch(run: string, sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const entry: Sent = {
      run,
      method: request.method,
      contractId: decodeURIComponent(new URL(request.url).pathname.split('/').pop() ?? ''),
      startedAt: performance.now(),
    };
    sent.push(entry);
    try {
      const response = await fetch(request);
      entry.status = response.status;
      return response;
    } finally {
      entry.answeredAt = performance.now();
    }
  };
}

function apply(
  config: Config,
  fleet: Fleet,
  store: PostgresStateStore,
  run: string,
  commit: string,
  sent: Sent[],
  onProgress?: (done: number) => void,
): Promise<ApplyRunResult> {
  const redactor = new Redactor();
  for (const secret of Object.values(fleet.env)) redactor.add(secret);
  const logger = createLogger({ redactor, destination: { write: () => undefined }, level: 'debug' });
  return runApply(
    { config, contractSets: fleet.desired, source: { repo: '.', ref: null, commit }, refresh: false, dryRun: false, lockTimeoutMs: 30_000, runId: run },
    {
      store,
      tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: ['core:read', 'core:write'], env: fleet.env, logger, redactor }),
      api: createApiClient({
        baseUrl: config.api.baseUrl,
        readPath: config.api.read!.path,
        timeoutMs: 5000,
        userAgent: 'contract-sync/test',
        correlationId: run,
        redactor,
        fetch: timedFetch(run, sent),
      }),
      clock: systemClock,
      random: Math.random,
      logger,
      ...(onProgress ? { onProgress: ({ done }) => onProgress(done) } : {}),
    },
  );
}

it(
  'stops sending at once when its PostgreSQL lock session ends; a second run after the restart never sends alongside it, and the old run records nothing more',
  { timeout: 120_000 },
  async () => {
    const fleet = createFleet(1, 240, 21);
    const tenant = fleet.tenants[0]!;
    emulator = await startEmulator(fleetSeed(fleet));
    await setFaults(emulator, { seed: 1, api: { latencyMs: [15, 30] } });
    const config = fleetConfig(fleet, emulator, { read: true, rate: '{ requestsPerSecond: 2000, concurrency: 4, maxInFlight: 4 }' });
    const commitA = 'a'.repeat(40);
    const commitB = 'b'.repeat(40);
    // The state a previous run left: every contract recorded as it is live.
    const seed = await openPostgresStateStore({ url });
    for (const [contractId, fields] of fleet.live.get(tenant)!) {
      await seed.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-01-01T00:00:00.000Z', commit: null });
    }
    await seed.close();

    const sent: Sent[] = [];
    const opened = await openPostgresStateStore({ url, connectTimeoutMs: 2000 });
    // The old run's records of answers that come after the outage began are held back until the new
    // run is sending, so that they reach the restarted server as the writes of a superseded holder.
    let outageBegan = false;
    let newRunSending: (() => void) | undefined;
    const newRunSent = new Promise<void>((resolve) => {
      newRunSending = resolve;
    });
    const lateWrites: string[] = [];
    const storeA: PostgresStateStore = {
      ...opened,
      async writeContract(tenantName, applied, guard) {
        if (outageBegan) {
          lateWrites.push(applied.contractId);
          await newRunSent;
        }
        return opened.writeContract(tenantName, applied, guard);
      },
      async writeRun(tenantName, record, guard) {
        if (outageBegan) await newRunSent;
        return opened.writeRun(tenantName, record, guard);
      },
    };
    let outage: Promise<{ haltedAt: number; result: ApplyRunResult }> | undefined;
    const runA = apply(config, fleet, storeA, 'run-a', commitA, sent, (done) => {
      if (done !== 40 || outage !== undefined) return;
      outageBegan = true;
      outage = (async () => {
        await server.halt();
        const haltedAt = performance.now();
        await server.restart();
        const storeB = await openPostgresStateStore({ url });
        try {
          return { haltedAt, result: await apply(config, fleet, storeB, 'run-b', commitB, sent, () => newRunSending?.()) };
        } finally {
          await storeB.close();
        }
      })();
    });
    const { report: reportA } = await runA;
    await storeA.close();
    expect(outage).toBeDefined();
    const { haltedAt, result } = await outage!;
    const reportB = result.report;

    const sentA = sent.filter((entry) => entry.run === 'run-a');
    const sentB = sent.filter((entry) => entry.run === 'run-b');
    // The old run: nothing started once the server was gone, and everything answered before the new run sent.
    const lateA = sentA.filter((entry) => entry.startedAt > haltedAt);
    expect(lateA).toEqual([]);
    expect(sentB.length).toBeGreaterThan(0);
    const firstB = Math.min(...sentB.map((entry) => entry.startedAt));
    expect(Math.max(...sentA.map((entry) => entry.answeredAt!))).toBeLessThan(firstB);
    expect(sentA.length).toBeLessThan(fleet.changed.get(tenant)!.size);

    // Its report says what was sent and answered: every PATCH it sent is a contract applied (recorded
    // or not), the rest were not sent; the tenant's error names the lost lock.
    const tenantA = reportA.tenants[0]!;
    expect(tenantA.error).toMatch(/lost the lock of tenant tenant-a|the PostgreSQL state store/);
    expect(tenantA.requests).toBe(sentA.length);
    const patchedA = new Set(
      sentA.filter((entry) => entry.method === 'PATCH' && entry.status !== undefined && entry.status < 300).map((entry) => entry.contractId),
    );
    const appliedA =
      tenantA.applied +
      tenantA.failures.filter((failure) => failure.outcome === 'unknown' && /^applied, but the state store could not record it/.test(failure.reason ?? ''))
        .length;
    expect(appliedA).toBe(patchedA.size);
    const notSent = tenantA.failures.filter(
      (failure) => failure.outcome === 'failed' && failure.reason?.startsWith('not sent: lost the lock of tenant tenant-a'),
    );
    expect(notSent.length + patchedA.size).toBe(tenantA.changed);
    for (const failure of notSent) expect(patchedA.has(failure.contractId)).toBe(false);

    // The new run finished the work: everything converged, nothing was refused as a conflict.
    expect(reportB.tenants[0]!.error).toBeUndefined();
    expect(reportB.summary.failed).toBe(0);
    const log = await requestLog(emulator);
    expect(log.filter((entry) => entry.kind === 'api' && entry.status === 409)).toEqual([]);
    const store = await openPostgresStateStore({ url });
    try {
      expect((await store.readRun(tenant))?.lastAppliedCommit).toBe(commitB);
      // The old holder's late records were refused by the fence, and said so in its report; the new
      // run's records of those contracts stand.
      expect(lateWrites.length).toBeGreaterThan(0);
      for (const contractId of lateWrites) {
        const failure = tenantA.failures.find((entry) => entry.contractId === contractId);
        expect(failure?.reason).toMatch(
          /^applied, but the state store could not record it: lost the lock of tenant tenant-a: another run took it \(lock generation \d+, this run's \d+\)/,
        );
        expect((await store.readRecord(tenant, contractId))?.commit).toBe(commitB);
      }
    } finally {
      await store.close();
    }
  },
);
