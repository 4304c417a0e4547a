/**
 * How long `validate` takes on 10,000 contracts (100 files of 100, 10 tenants): reading, YAML
 * parsing, schema and cross-file checks, as `contract-sync validate` does them in-process.
 * Prints one JSON line: {"bench":"validate", contracts, runs, medianMs, minMs, contractsPerSecond, peakRssMiB}.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readConfig } from '../engine/config/index.ts';
import { loadDesiredState } from '../engine/desired/index.ts';
import { writeContractsRepo } from './generate-contracts.ts';

const CONTRACTS = Number(process.env.BENCH_CONTRACTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-'));
try {
  await writeContractsRepo(dir, { contracts: CONTRACTS, tenants: 10, perFile: 100 });
  const timings: number[] = [];
  let peakRss = 0;
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    const { config } = await readConfig(path.join(dir, 'contract-sync.yaml'));
    const result = await loadDesiredState(dir, config!);
    timings.push(performance.now() - start);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const valid = result.contractSets.reduce((sum, set) => sum + set.contracts.length, 0);
    if (result.errors.length > 0 || valid !== CONTRACTS) throw new Error(`expected ${CONTRACTS} valid contracts, got ${valid}`);
  }
  timings.sort((a, b) => a - b);
  const median = timings[Math.floor(timings.length / 2)]!;
  console.log(
    JSON.stringify({
      bench: 'validate',
      contracts: CONTRACTS,
      runs: RUNS,
      medianMs: Math.round(median),
      minMs: Math.round(timings[0]!),
      contractsPerSecond: Math.round((CONTRACTS / median) * 1000),
      peakRssMiB: Math.round(peakRss / 1024 / 1024),
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
