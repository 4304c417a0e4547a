/**
 * Sharded apply: how the throughput of `contract-sync apply --shard I/N` grows with N worker
 * processes sharing one PostgreSQL state store (docs/architecture.md section 7).
 *
 * 40 tenants x 50 contracts, every one of them changed (its Name), against the emulator, which
 * makes every API request wait LATENCY ms first (fault injection `latencyMs`), so that a worker is
 * bound by how many requests it may have in flight, not by CPU. Each worker is a real child
 * process, `apply --shard i/N`, run by the built CLI (bin/contract-sync.js) when dist/ exists, else
 * by bin/contract-sync-dev.js (tsx: a slower start); the JSON line says which (`cli`).
 *
 * The known state comes from the shared PostgreSQL store, as in a team's steady state: a database
 * holding the records of the live contracts (what an earlier apply left) is written once, and each
 * round gets a fresh copy of it (CREATE DATABASE ... TEMPLATE). No api.read: each contract is
 * exactly one PATCH, then one record written to PostgreSQL.
 *
 * The numbers, chosen so that the in-flight limit binds and nothing else does:
 * - config `rate: { requestsPerSecond: 1000, concurrency: 2, maxInFlight: 8 }` (--in-flight sets
 *   maxInFlight; concurrency is a quarter of it): a worker has at most 8 requests in flight, each
 *   answered after 50 ms, so it sends at most 8 / 50 ms = 160 PATCHes/s, 160 contracts/s. A tenant
 *   may have 2 in flight (at most 40 requests/s, far below its 1000/s), so a shard of 4 or more
 *   tenants (a quarter of 40 holds about 10) fills the worker's 8.
 * - the emulator's per-tenant rate limit is 10,000 requests/s with a burst of 10,000: never met,
 *   no 429 (counted, expected 0).
 * So N workers should apply N times as fast, less each process's start (Node, config, tokens, the
 * schema check of the database, one lock connection per tenant), the uneven split of 40 tenants
 * by the shard hash (a run lasts as long as its largest shard; the JSON line lists the tenants per
 * shard) and the machine's CPU: the JSON line gives the CPU seconds the workers and the emulator
 * used (PostgreSQL's not counted) and the load average before the first round. On a small shared
 * machine the CPU, not the in-flight limit, ends the scaling: compare `cpuCores` with the cores.
 *
 * Per round and worker count: emulator reset (contracts back to the seed, request log cleared),
 * the latency set again, a fresh database; N workers started at once; wall time from the first
 * start to the last exit (`apiSeconds`: from the first PATCH to the last answer, without the
 * processes' start). Every exit code must be 0, every contract PATCHed exactly once (PATCHes sent
 * twice counted, must be 0). Rounds interleave the worker counts (1, 2, 4, 1, 2, 4, ...) so that a
 * change of the machine's load falls on all of them alike; the figures are medians.
 * Prints one JSON line, then a table; exits 1 if a PATCH was sent twice or missing, or a worker failed.
 *   npm run bench:shards -- [--tenants 40] [--contracts 50] [--latency 50] [--in-flight 8] [--rounds 3] [--workers 1,2,4]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { shardOf } from '../engine/desired/shard.ts';
import { startEmulator, type Emulator } from '../emulator/index.ts';
import { writeTree } from '../test/helpers/files.ts';
import { fleetRepoFiles, fleetSeed, requestLog, setFaults } from '../test/helpers/fleet.ts';
import { startPostgres } from '../test/helpers/postgres-server.ts';
import { createShardFleet, REPORT_CPU, workerCpu } from './shard-fleet.ts';
import { copyDatabase, writeTemplate } from './state-template.ts';

const { values } = parseArgs({
  options: {
    tenants: { type: 'string', default: '40' },
    contracts: { type: 'string', default: '50' },
    latency: { type: 'string', default: '50' },
    'in-flight': { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    workers: { type: 'string', default: '1,2,4' },
  },
});
const TENANTS = Number(values.tenants);
const PER_TENANT = Number(values.contracts);
const CONTRACTS = TENANTS * PER_TENANT;
const LATENCY_MS = Number(values.latency);
const IN_FLIGHT = Number(values['in-flight']);
const ROUNDS = Number(values.rounds);
const WORKER_COUNTS = values.workers.split(',').map(Number);
const RATE = `{ requestsPerSecond: 1000, concurrency: ${Math.max(1, Math.ceil(IN_FLIGHT / 4))}, maxInFlight: ${IN_FLIGHT} }`;

const cliKind = existsSync(fileURLToPath(new URL('../dist/engine/cli/main.js', import.meta.url))) ? 'dist' : 'tsx';
const cli = fileURLToPath(new URL(cliKind === 'dist' ? '../bin/contract-sync.js' : '../bin/contract-sync-dev.js', import.meta.url));

interface Worker {
  readonly code: number | null;
  readonly stderr: string;
  readonly cpuSeconds: number;
}

function runWorker(dir: string, shard: string, env: Record<string, string>): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'apply', '--shard', shard], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code, ...workerCpu(stderr) });
    });
  });
}

function median(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

interface Round {
  readonly seconds: number;
  readonly apiSeconds: number;
  readonly workerCpuSeconds: number;
  readonly emulatorCpuSeconds: number;
  readonly doublePatches: number;
  readonly unpatched: number;
  readonly status429: number;
  readonly failedExits: number;
}

async function round(emulator: Emulator, dir: string, env: Record<string, string>, workers: number, databaseUrl: string): Promise<Round> {
  const reset = await fetch(`${emulator.urls.adminUrl}/reset`, { method: 'POST' });
  if (!reset.ok) throw new Error(`emulator reset refused: ${reset.status}`);
  await setFaults(emulator, { api: { latencyMs: [LATENCY_MS, LATENCY_MS] } });
  const workerEnv = { ...env, CONTRACT_SYNC_DATABASE_URL: databaseUrl };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: workers }, (_, index) => runWorker(dir, `${index + 1}/${workers}`, workerEnv)));
  const seconds = (performance.now() - started) / 1000;
  const emulatorCpu = process.cpuUsage(cpuBefore);
  for (const [index, result] of results.entries()) {
    if (result.code !== 0) process.stderr.write(`worker ${index + 1}/${workers} exited ${result.code}:\n${result.stderr}\n`);
  }
  const api = (await requestLog(emulator)).filter((entry) => entry.kind === 'api');
  const times = api.map((entry) => Date.parse(entry.time)).sort((a, b) => a - b);
  const patches = api.filter((entry) => entry.method === 'PATCH');
  const patched = new Set(patches.map((entry) => entry.path));
  return {
    seconds,
    // Log times are arrivals: the last request's answer came LATENCY_MS later.
    apiSeconds: times.length > 0 ? (times.at(-1)! - times[0]! + LATENCY_MS) / 1000 : Number.NaN,
    workerCpuSeconds: results.reduce((sum, result) => sum + result.cpuSeconds, 0),
    emulatorCpuSeconds: (emulatorCpu.user + emulatorCpu.system) / 1e6,
    doublePatches: patches.length - patched.size,
    unpatched: CONTRACTS - patched.size,
    status429: api.filter((entry) => entry.status === 429).length,
    failedExits: results.filter((result) => result.code !== 0).length,
  };
}

const fleet = createShardFleet(
  Array.from({ length: TENANTS }, () => PER_TENANT),
  'tenant',
  'sharded',
);
const loadBefore = loadavg()[0]!;
const emulator = await startEmulator(fleetSeed(fleet, { requestsPerSecond: 10_000, burst: 10_000 }));
const postgres = await startPostgres();
const files = fleetRepoFiles(fleet, emulator, { rate: RATE });
files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: CONTRACT_SYNC_DATABASE_URL } }\n';
const repo = await writeTree(files);
try {
  const template = await writeTemplate(postgres, fleet, 'bench_shards_template');
  const env = { PATH: process.env.PATH ?? '', ...fleet.env, CONTRACT_SYNC_LOG_LEVEL: 'warn', NODE_OPTIONS: REPORT_CPU };
  const rounds = new Map<number, Round[]>(WORKER_COUNTS.map((count) => [count, []]));
  let database = 0;
  for (let index = 0; index < ROUNDS; index += 1) {
    for (const workers of WORKER_COUNTS) {
      const result = await round(emulator, repo.dir, env, workers, await copyDatabase(postgres, template, `bench_shards_${++database}`));
      rounds.get(workers)!.push(result);
      process.stderr.write(`round ${index + 1}/${ROUNDS}, ${workers} worker(s): ${result.seconds.toFixed(1)} s\n`);
    }
  }
  const byCount = WORKER_COUNTS.map((workers) => {
    const results = rounds.get(workers)!;
    const seconds = median(results.map((result) => result.seconds));
    const apiSeconds = median(results.map((result) => result.apiSeconds));
    const cpuSeconds = median(results.map((result) => result.workerCpuSeconds + result.emulatorCpuSeconds));
    return {
      workers,
      tenantsPerShard: Array.from({ length: workers }, (_, shard) => fleet.tenants.filter((tenant) => shardOf(tenant, workers) === shard + 1).length),
      seconds: round1(seconds),
      contractsPerSecond: round1(CONTRACTS / seconds),
      apiSeconds: round1(apiSeconds),
      apiContractsPerSecond: round1(CONTRACTS / apiSeconds),
      workerCpuSeconds: round1(median(results.map((result) => result.workerCpuSeconds))),
      emulatorCpuSeconds: round1(median(results.map((result) => result.emulatorCpuSeconds))),
      cpuCores: Number((cpuSeconds / seconds).toFixed(2)),
      doublePatches: results.reduce((sum, result) => sum + result.doublePatches, 0),
      unpatched: results.reduce((sum, result) => sum + result.unpatched, 0),
      status429: results.reduce((sum, result) => sum + result.status429, 0),
      failedExits: results.reduce((sum, result) => sum + result.failedExits, 0),
    };
  });
  const base = byCount[0]!;
  const rows = byCount.map((row) => ({
    ...row,
    ratio: Number((row.contractsPerSecond / base.contractsPerSecond).toFixed(2)),
    apiRatio: Number((row.apiContractsPerSecond / base.apiContractsPerSecond).toFixed(2)),
  }));
  console.log(
    JSON.stringify({
      bench: 'shards',
      cli: cliKind,
      tenants: TENANTS,
      contracts: CONTRACTS,
      latencyMs: LATENCY_MS,
      rate: RATE,
      rounds: ROUNDS,
      cores: cpus().length,
      loadAverage: round1(loadBefore),
      doublePatches: rows.reduce((sum, row) => sum + row.doublePatches, 0),
      failedExits: rows.reduce((sum, row) => sum + row.failedExits, 0),
      workers: rows,
    }),
  );
  const table = [
    [
      'workers',
      'tenants/shard',
      'wall s',
      'contracts/s',
      'ratio',
      'PATCH span s',
      'contracts/s',
      'ratio',
      'CPU cores',
      'double PATCH',
      'unpatched',
      '429',
      'failed exits',
    ],
    ...rows.map((row) => [
      String(row.workers),
      row.tenantsPerShard.join('+'),
      row.seconds.toFixed(1),
      row.contractsPerSecond.toFixed(1),
      row.ratio.toFixed(2),
      row.apiSeconds.toFixed(1),
      row.apiContractsPerSecond.toFixed(1),
      row.apiRatio.toFixed(2),
      row.cpuCores.toFixed(2),
      String(row.doublePatches),
      String(row.unpatched),
      String(row.status429),
      String(row.failedExits),
    ]),
  ];
  for (const line of table) console.log(line.map((cell, column) => cell.padStart(table[0]![column]!.length)).join('  '));
  if (rows.some((row) => row.doublePatches > 0 || row.unpatched > 0 || row.failedExits > 0)) process.exitCode = 1;
} finally {
  await repo.cleanup();
  await postgres.stop();
  await emulator.close();
}
