/**
 * Shared runs: how `contract-sync apply --shard auto` scales with N worker processes sharing one
 * run through one PostgreSQL state store (issue 24), on an even and a skewed fleet, and what
 * happens when a worker is SIGKILLed halfway.
 *
 * - even: TENANTS tenants x CONTRACTS contracts, every contract changed (its Name);
 * - skewed: one tenant holds a quarter of all contracts, the others share the rest equally; the
 *   ideal is max(the largest tenant alone, one worker's time / N), and the largest tenant alone is
 *   measured too (one worker, `--tenant` it);
 * - kill: N workers on the even fleet; worker 1 is SIGKILLed once a quarter of the contracts are
 *   PATCHed; the others must finish its tenants in the same run.
 *
 * The emulator makes every API request wait LATENCY ms (fault injection `latencyMs`), so that a
 * worker is bound by its requests in flight (`rate: { concurrency: IN_FLIGHT/4, maxInFlight:
 * IN_FLIGHT }`: a tenant has 2 in flight, a worker 8, so a worker runs 4 tenants at once). The
 * known state is the store's (a template database with a record of every live contract, copied
 * per round); api.read is configured but the run does not refresh (`--no-refresh`): each contract
 * is one PATCH, and a contract a killed worker left in flight is read (not PATCHed again) by the
 * worker that takes its tenant over. Each worker is a real child process of the built CLI
 * (bin/contract-sync.js) when dist/ exists, else bin/contract-sync-dev.js. Every round: exit codes
 * (all 0, but the killed worker's), PATCHes per contract (each exactly once), history entries (1).
 * Rounds interleave the worker counts; the figures are medians. `API span`: from the first API
 * request to the last answer, i.e. the run without the processes' start (Node, config, git,
 * PostgreSQL connections), which on a small loaded machine costs seconds per round; `start`: from
 * the spawn to the first API request; `end`: from the last answer to the last worker's exit. The JSON line gives the load
 * average before the first round and the CPU seconds the workers used. `--timeline` prints, per
 * round, when each worker said it joined, its first request and last answer, and the API requests
 * that arrived in each second: where a round's time went.
 *   npm run bench:auto-shards -- [--tenants 40] [--contracts 50] [--latency 200] [--in-flight 8] [--rounds 2] [--workers 1,2,4] [--modes even,skewed,kill] [--timeline]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmulator, type Emulator, type RequestLogEntry } from '../emulator/index.ts';
import { createRepo } from '../test/git/helpers.ts';
import { fleetRepoFiles, fleetSeed, requestLog, setFaults, type Fleet } from '../test/helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres-server.ts';
import { createShardFleet, REPORT_CPU, workerCpu } from './shard-fleet.ts';
import { copyDatabase, writeTemplate } from './state-template.ts';

const { values } = parseArgs({
  options: {
    tenants: { type: 'string', default: '40' },
    contracts: { type: 'string', default: '50' },
    latency: { type: 'string', default: '200' },
    'in-flight': { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    workers: { type: 'string', default: '1,2,4' },
    modes: { type: 'string', default: 'even,skewed,kill' },
    timeline: { type: 'boolean', default: false },
  },
});
const TENANTS = Number(values.tenants);
const PER_TENANT = Number(values.contracts);
const LATENCY_MS = Number(values.latency);
const IN_FLIGHT = Number(values['in-flight']);
const ROUNDS = Number(values.rounds);
const WORKER_COUNTS = values.workers.split(',').map(Number);
const MODES = values.modes.split(',');
const TIMELINE = values.timeline;
const RATE = `{ requestsPerSecond: 1000, concurrency: ${Math.max(1, Math.ceil(IN_FLIGHT / 4))}, maxInFlight: ${IN_FLIGHT} }`;

const cliKind = existsSync(fileURLToPath(new URL('../dist/engine/cli/main.js', import.meta.url))) ? 'dist' : 'tsx';
// BENCH_CLI: another build's bin/contract-sync.js (e.g. the one before a change, with a state template
// of its own schema: run that build's bench), for before and after in the same conditions.
const cli = process.env.BENCH_CLI ?? fileURLToPath(new URL(cliKind === 'dist' ? '../bin/contract-sync.js' : '../bin/contract-sync-dev.js', import.meta.url));
// BENCH_NODE_ARGS: flags for each worker's Node, e.g. "--cpu-prof --cpu-prof-dir=DIR" to profile the workers.
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
function evenSizes(): number[] {
  return Array.from({ length: TENANTS }, () => PER_TENANT);
}

/** One tenant with a quarter of all contracts, the others equal. */
function skewedSizes(): number[] {
  const rest = Math.round((TENANTS * PER_TENANT * 0.75) / (TENANTS - 1));
  return [Math.round((rest * (TENANTS - 1)) / 3), ...Array.from({ length: TENANTS - 1 }, () => rest)];
}

interface Worker {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; cpuSeconds: number }>;
}

function startWorker(dir: string, args: readonly string[], env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [...NODE_ARGS, cli, 'apply', '--no-refresh', '--ref', 'HEAD', ...args], {
    cwd: dir,
    env,
    stdio: ['ignore', TIMELINE ? 'pipe' : 'ignore', 'pipe'],
  });
  if (TIMELINE) {
    // When the worker said it joined the run (validated, run begun), for --timeline.
    const spawned = performance.now();
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', function seek(chunk: string) {
      out += chunk;
      const line = /^.*worker \S+ joined.*$/m.exec(out)?.[0];
      if (line === undefined) return;
      process.stderr.write(`  +${((performance.now() - spawned) / 1000).toFixed(2)} s ${line}\n`);
      child.stdout!.off('data', seek).resume();
    });
  }
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; cpuSeconds: number }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      resolve({ code, signal, ...workerCpu(stderr) });
    });
  });
  return { child, done };
}

function median(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Round {
  readonly seconds: number;
  /** From the first API request to the last answer: the run without the processes' start. */
  readonly apiSeconds: number;
  /** From the workers' spawn to the first API request: Node, config, git, reading and validating, PostgreSQL, tokens. */
  readonly startSeconds: number;
  /** From the last answer to the last worker's exit: records, history, closing. */
  readonly endSeconds: number;
  readonly workerCpuSeconds: number;
  readonly doublePatches: number;
  readonly unpatched: number;
  readonly failedExits: number;
  readonly historyEntries: number;
  readonly killed: boolean;
}

interface Bench {
  readonly fleet: Fleet;
  readonly emulator: Emulator;
  readonly dir: string;
  readonly template: string;
}

let databases = 0;

async function setupBench(postgres: PostgresServer, sizes: readonly number[], prefix: string): Promise<Bench & { cleanup(): Promise<void> }> {
  const fleet = createShardFleet(sizes, prefix, 'shared run');
  const emulator = await startEmulator(fleetSeed(fleet, { requestsPerSecond: 10_000, burst: 10_000 }));
  const files = fleetRepoFiles(fleet, emulator, { rate: RATE, read: true });
  files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: CONTRACT_SYNC_DATABASE_URL } }\n';
  const repo = await createRepo(files);
  const template = `bench_auto_${prefix}_template`;
  await writeTemplate(postgres, fleet, template);
  return {
    fleet,
    emulator,
    dir: repo.dir,
    template,
    async cleanup() {
      await repo.cleanup();
      await emulator.close();
    },
  };
}

/** One round: `workers` workers of `args` at once; with `kill`, worker 1 is SIGKILLed once a quarter is PATCHed. */
async function round(postgres: PostgresServer, bench: Bench, workers: number, args: readonly string[], kill: boolean, contracts: number): Promise<Round> {
  const reset = await fetch(`${bench.emulator.urls.adminUrl}/reset`, { method: 'POST' });
  if (!reset.ok) throw new Error(`emulator reset refused: ${reset.status}`);
  await setFaults(bench.emulator, { api: { latencyMs: [LATENCY_MS, LATENCY_MS] } });
  const url = await copyDatabase(postgres, bench.template, `bench_auto_${++databases}`);
  const env = { PATH: process.env.PATH ?? '', ...bench.fleet.env, CONTRACT_SYNC_LOG_LEVEL: 'warn', NODE_OPTIONS: REPORT_CPU, CONTRACT_SYNC_DATABASE_URL: url };
  const started = performance.now();
  const startedAt = Date.now();
  const running = Array.from({ length: workers }, (_, index) => startWorker(bench.dir, args, { ...env, CONTRACT_SYNC_WORKER: `w${index + 1}` }));
  if (kill) {
    for (;;) {
      const patched = (await requestLog(bench.emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').length;
      if (patched >= contracts / 4) break;
      await delay(50);
    }
    running[0]!.child.kill('SIGKILL');
  }
  const results = await Promise.all(running.map((worker) => worker.done));
  const seconds = (performance.now() - started) / 1000;
  const finishedAt = Date.now();
  for (const [index, result] of results.entries()) {
    if (result.code !== 0 && !(kill && index === 0)) process.stderr.write(`worker ${index + 1}/${workers} exited ${result.code}:\n${result.stderr}\n`);
  }
  const api = (await requestLog(bench.emulator)).filter((entry) => entry.kind === 'api');
  const times = api.map((entry) => Date.parse(entry.time)).sort((a, b) => a - b);
  const patches = api.filter((entry) => entry.method === 'PATCH' && entry.status !== null && entry.status < 300);
  const patched = new Set(patches.map((entry) => entry.path));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const history = Number((await client.query('SELECT count(*)::integer AS n FROM contract_sync.run_history')).rows[0].n);
  if (TIMELINE) {
    const workerOf = new Map<string, string>(
      (await client.query<{ tenant: string; worker: string }>('SELECT tenant, worker FROM contract_sync.shared_run_tenants')).rows.map((row) => [
        row.tenant,
        row.worker,
      ]),
    );
    process.stderr.write(timeline(api, workerOf, startedAt));
  }
  await client.end();
  return {
    seconds,
    // Log times are arrivals: the last request's answer came LATENCY_MS later.
    apiSeconds: times.length > 0 ? (times.at(-1)! - times[0]! + LATENCY_MS) / 1000 : Number.NaN,
    startSeconds: times.length > 0 ? (times[0]! - startedAt) / 1000 : Number.NaN,
    endSeconds: times.length > 0 ? (finishedAt - times.at(-1)! - LATENCY_MS) / 1000 : Number.NaN,
    workerCpuSeconds: results.reduce((sum, result) => sum + (Number.isNaN(result.cpuSeconds) ? 0 : result.cpuSeconds), 0),
    doublePatches: patches.length - patched.size,
    unpatched: contracts - patched.size,
    failedExits: results.filter((result, index) => result.code !== 0 && !(kill && index === 0)).length,
    historyEntries: history,
    killed: kill,
  };
}

/**
 * `--timeline`: per worker, when its first request arrived and its last answer left (seconds from
 * the spawn), its tenants and requests, and how many of its in-flight slots were used on average
 * between the two (a request holds one for the latency); then the API requests arriving in each
 * second of the run.
 */
function timeline(api: readonly RequestLogEntry[], workerOf: ReadonlyMap<string, string>, startedAt: number): string {
  function at(entry: RequestLogEntry): number {
    return (Date.parse(entry.time) - startedAt) / 1000;
  }
  const workers = new Map<string, { first: number; last: number; tenants: Set<string>; requests: number; slots: number }>();
  for (const entry of api) {
    const worker = workerOf.get(entry.tenant ?? '') ?? '?';
    const seen = workers.get(worker) ?? { first: Infinity, last: 0, tenants: new Set<string>(), requests: 0, slots: 0 };
    seen.first = Math.min(seen.first, at(entry));
    seen.last = Math.max(seen.last, at(entry) + LATENCY_MS / 1000);
    seen.tenants.add(entry.tenant ?? '?');
    seen.requests++;
    seen.slots += LATENCY_MS / 1000;
    workers.set(worker, seen);
  }
  const perSecond: number[] = [];
  for (const entry of api) perSecond[Math.floor(at(entry))] = (perSecond[Math.floor(at(entry))] ?? 0) + 1;
  const lines = [...workers]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([worker, seen]) =>
        `  ${worker}: first request ${seen.first.toFixed(2)} s, last answer ${seen.last.toFixed(2)} s, ${seen.tenants.size} tenants, ${seen.requests} requests, ` +
        `${(seen.slots / (seen.last - seen.first)).toFixed(2)} of ${IN_FLIGHT} in flight on average`,
    );
  return `${lines.join('\n')}\n  requests per second: ${Array.from(perSecond, (n) => n ?? 0).join(' ')}\n`;
}

interface Row {
  readonly mode: string;
  readonly workers: number;
  readonly seconds: number;
  readonly ratio: number | null;
  readonly apiSeconds: number;
  readonly apiRatio: number | null;
  readonly startSeconds: number;
  readonly endSeconds: number;
  readonly ideal?: number;
  readonly ofIdeal?: number;
  readonly cpuCores: number;
  readonly doublePatches: number;
  readonly unpatched: number;
  readonly failedExits: number;
  readonly historyEntries: number[];
}

function summarise(mode: string, workers: number, results: readonly Round[], base: Round[] | undefined): Omit<Row, 'ideal' | 'ofIdeal'> {
  const seconds = median(results.map((result) => result.seconds));
  const apiSeconds = median(results.map((result) => result.apiSeconds));
  return {
    mode,
    workers,
    seconds: Number(seconds.toFixed(1)),
    ratio: base === undefined ? null : Number((median(base.map((result) => result.seconds)) / seconds).toFixed(2)),
    apiSeconds: Number(apiSeconds.toFixed(1)),
    apiRatio: base === undefined ? null : Number((median(base.map((result) => result.apiSeconds)) / apiSeconds).toFixed(2)),
    startSeconds: Number(median(results.map((result) => result.startSeconds)).toFixed(2)),
    endSeconds: Number(median(results.map((result) => result.endSeconds)).toFixed(2)),
    cpuCores: Number((median(results.map((result) => result.workerCpuSeconds)) / seconds).toFixed(2)),
    doublePatches: results.reduce((sum, result) => sum + result.doublePatches, 0),
    unpatched: results.reduce((sum, result) => sum + result.unpatched, 0),
    failedExits: results.reduce((sum, result) => sum + result.failedExits, 0),
    historyEntries: results.map((result) => result.historyEntries),
  };
}

const loadBefore = loadavg();
const postgres = await startPostgres();
const rows: Row[] = [];
try {
  for (const mode of MODES) {
    const sizes = mode === 'skewed' ? skewedSizes() : evenSizes();
    const contracts = sizes.reduce((sum, size) => sum + size, 0);
    const bench = await setupBench(postgres, sizes, mode);
    try {
      const counts = mode === 'kill' ? WORKER_COUNTS.filter((count) => count > 1) : WORKER_COUNTS;
      const byCount = new Map<number, Round[]>(counts.map((count) => [count, []]));
      const alone: Round[] = [];
      for (let index = 0; index < ROUNDS; index += 1) {
        for (const workers of counts) {
          const result = await round(postgres, bench, workers, ['--shard', 'auto'], mode === 'kill', contracts);
          byCount.get(workers)!.push(result);
          process.stderr.write(`${mode}: round ${index + 1}/${ROUNDS}, ${workers} worker(s): ${result.seconds.toFixed(1)} s\n`);
        }
        if (mode === 'skewed') {
          // The largest tenant alone: the floor of any run of this fleet.
          alone.push(await round(postgres, bench, 1, ['--tenant', bench.fleet.tenants[0]!], false, sizes[0]!));
          process.stderr.write(`${mode}: round ${index + 1}/${ROUNDS}, largest tenant alone: ${alone.at(-1)!.seconds.toFixed(1)} s\n`);
        }
      }
      const one = byCount.get(1) ? median(byCount.get(1)!.map((result) => result.seconds)) : undefined;
      const largestAlone = alone.length > 0 ? median(alone.map((result) => result.seconds)) : undefined;
      for (const workers of counts) {
        const row = summarise(mode, workers, byCount.get(workers)!, byCount.get(1));
        const ideal = one !== undefined && largestAlone !== undefined ? Math.max(largestAlone, one / workers) : undefined;
        rows.push({ ...row, ...(ideal === undefined ? {} : { ideal: Number(ideal.toFixed(1)), ofIdeal: Number((row.seconds / ideal).toFixed(2)) }) });
      }
      if (largestAlone !== undefined)
        rows.push({ ...summarise(`${mode}: largest tenant alone (${sizes[0]} contracts)`, 1, alone, undefined), historyEntries: [] });
    } finally {
      await bench.cleanup();
    }
  }
  console.log(
    JSON.stringify({
      bench: 'auto-shards',
      cli: cliKind,
      tenants: TENANTS,
      contractsPerTenant: PER_TENANT,
      latencyMs: LATENCY_MS,
      rate: RATE,
      rounds: ROUNDS,
      cores: cpus().length,
      loadAverageBefore: loadBefore.map((load) => Number(load.toFixed(2))),
      loadAverageAfter: loadavg().map((load) => Number(load.toFixed(2))),
      rows,
    }),
  );
  const table = [
    [
      'mode',
      'workers',
      'wall s (median)',
      'x one worker',
      'API span s',
      'x one worker',
      'start s',
      'end s',
      'ideal s',
      'x ideal',
      'worker CPU cores',
      'double PATCH',
      'unpatched',
      'failed exits',
      'history entries',
    ],
    ...rows.map((row) => [
      row.mode,
      String(row.workers),
      row.seconds.toFixed(1),
      row.ratio === null ? '-' : row.ratio.toFixed(2),
      row.apiSeconds.toFixed(1),
      row.apiRatio === null ? '-' : row.apiRatio.toFixed(2),
      row.startSeconds.toFixed(2),
      row.endSeconds.toFixed(2),
      row.ideal === undefined ? '-' : row.ideal.toFixed(1),
      row.ofIdeal === undefined ? '-' : row.ofIdeal.toFixed(2),
      row.cpuCores.toFixed(2),
      String(row.doublePatches),
      String(row.unpatched),
      String(row.failedExits),
      row.historyEntries.join(',') || '-',
    ]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  for (const line of table) console.log(line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
  if (rows.some((row) => row.doublePatches > 0 || row.unpatched > 0 || row.failedExits > 0)) process.exitCode = 1;
} finally {
  await postgres.stop();
}
