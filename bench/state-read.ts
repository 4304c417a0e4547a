/**
 * What the file state store costs a plan and an apply: a store of CONTRACTS records spread over
 * TENANTS tenants is written through the StateStore API the way apply records (under the tenant's
 * lock, RECORD_CONCURRENCY writes in flight), then read the way plan reads it (readTenant per
 * tenant, readKnownState for all of them). Times are medians of RUNS reads, warm page cache; CPU is
 * this process's user + system time.
 * Prints one JSON line per size: {"bench":"state-read", contracts, tenants, runs,
 * recordWallMs, recordCpuMs, recordWallUsPerContract, tenantWallMs, tenantCpuMs, allWallMs,
 * allCpuMs, allCpuUsPerContract, maxRssMiB}.
 *   npx tsx bench/state-read.ts      BENCH_SIZES=10000x10,100000x100 BENCH_RUNS=5
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fingerprint } from '../engine/model/index.ts';
import { fileStateStore, readKnownState, type AppliedContract, type StateStore } from '../engine/state/index.ts';

const SIZES = (process.env.BENCH_SIZES ?? '10000x10,100000x100').split(',').map((size) => {
  const [contracts, tenants] = size.split('x').map(Number);
  if (!Number.isSafeInteger(contracts) || !Number.isSafeInteger(tenants) || contracts! < tenants! || tenants! < 1)
    throw new Error(`BENCH_SIZES: expected CONTRACTSxTENANTS, got ${size}`);
  return { contracts: contracts!, tenants: tenants! };
});
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
// As apply records the unchanged contracts it read (engine/pipeline/compose.ts).
const RECORD_CONCURRENCY = 16;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Wall and CPU milliseconds of one call. */
async function timed(run: () => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const wallMs = performance.now() - start;
  const { user, system } = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (user + system) / 1000 };
}

function tenantName(index: number): string {
  return `tenant-${String(index).padStart(3, '0')}`;
}

/** A record of the size a real contract's has (about 600 bytes of JSON). */
function record(tenant: number, index: number): AppliedContract {
  const fields = {
    Name: `Contract ${tenant}-${index}`,
    Description: `Framework agreement ${index} for tenant ${tenant}; renewed yearly unless cancelled.`,
    ValidFrom: '2027-01-01T00:00:00Z',
    ValidTo: '2029-12-31T00:00:00Z',
    Status: 'Active',
    Company: [
      { Id: 1000 + (index % 97), RelationType: 'Supplier' },
      { Id: 2000 + (index % 89), RelationType: 'Client' },
    ],
    Tags: ['framework', `region-${index % 7}`],
  };
  return {
    contractId: `C-${String(index).padStart(6, '0')}`,
    fields,
    fingerprint: fingerprint(fields),
    appliedAt: '2027-01-01T00:00:00.000Z',
    commit: 'a'.repeat(40),
  };
}

/** Writes every tenant's records as apply does: under its lock, RECORD_CONCURRENCY at a time. */
async function populate(store: StateStore, contracts: number, tenants: number): Promise<void> {
  const perTenant = contracts / tenants;
  for (let tenant = 0; tenant < tenants; tenant++) {
    const name = tenantName(tenant);
    const lock = await store.lock(name, { timeoutMs: 0, owner: 'bench' });
    try {
      for (let start = 0; start < perTenant; start += RECORD_CONCURRENCY) {
        const batch: Promise<void>[] = [];
        for (let index = start; index < Math.min(start + RECORD_CONCURRENCY, perTenant); index++) batch.push(store.writeContract(name, record(tenant, index)));
        await Promise.all(batch);
      }
    } finally {
      await lock.release();
    }
  }
}

for (const { contracts, tenants } of SIZES) {
  const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-state-'));
  try {
    const recording = await timed(() => populate(fileStateStore(dir), contracts, tenants));
    const names = Array.from({ length: tenants }, (_, index) => tenantName(index));
    const tenantRuns: { wallMs: number; cpuMs: number }[] = [];
    const allRuns: { wallMs: number; cpuMs: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      // A new instance per read, as a new plan process opens the store.
      let read = 0;
      tenantRuns.push(await timed(async () => (read = (await fileStateStore(dir).readTenant(names[run % tenants]!)).size)));
      if (read !== contracts / tenants) throw new Error(`read ${read} records of one tenant, expected ${contracts / tenants}`);
      let all = 0;
      allRuns.push(
        await timed(async () => (all = [...(await readKnownState(fileStateStore(dir), names)).values()].reduce((sum, known) => sum + known.size, 0))),
      );
      if (all !== contracts) throw new Error(`read ${all} records, expected ${contracts}`);
    }
    const allCpuMs = median(allRuns.map((run) => run.cpuMs));
    console.log(
      JSON.stringify({
        bench: 'state-read',
        contracts,
        tenants,
        runs: RUNS,
        recordWallMs: round(recording.wallMs),
        recordCpuMs: round(recording.cpuMs),
        recordWallUsPerContract: round((recording.wallMs * 1000) / contracts),
        tenantWallMs: round(median(tenantRuns.map((run) => run.wallMs))),
        tenantCpuMs: round(median(tenantRuns.map((run) => run.cpuMs))),
        allWallMs: round(median(allRuns.map((run) => run.wallMs))),
        allCpuMs: round(allCpuMs),
        allCpuUsPerContract: round((allCpuMs * 1000) / contracts),
        maxRssMiB: round(process.resourceUsage().maxRSS / 1024),
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
