/**
 * Worker threads for parsing, measured (issue 25's third way): the desired state of a repository
 * read and validated tenant by tenant (validateDesiredState on each tenant's files, as a run does),
 * in one process, three ways:
 * - main thread: every tenant in turn, as the CLI does;
 * - N workers, counts back: the tenants spread over N worker threads, each answering with its counts
 *   and diagnostics (all that `validate` needs);
 * - N workers, contracts back: the same, each also sending its valid contracts back to the main
 *   thread (a structured clone), which is what `plan` would need to go on from there.
 *
 * Each way runs in a fresh child process that reads the files into memory first; the child reports
 * the CPU of the whole process (every thread, start-up and reading included), its wall time from
 * start to end, and its peak RSS. The ways take turns, round by round; medians of --runs. The code
 * is the CLI's own, bundled with the CLI's options (scripts/bundle-options.ts: js-yaml's CommonJS
 * build, which is about 3x faster on Node 20), under the V8 flags the CLI sets for itself on that
 * Node (bin/v8-flags.js). Needs the build (`npm run build`, which `npm install` runs).
 *
 *   npx tsx bench/parse-workers.ts [--contracts 100000] [--styles block,flow,import] [--runs 3]
 *                                  [--threads N] [--node PATH ...]
 *
 * Prints a table per Node and style (stdout): each way's CPU, wall and peak RSS, its CPU and wall
 * also as ratios to the main thread's; and one JSON line per way (stderr).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { CLI_BUNDLE_OPTIONS } from '../scripts/bundle-options.ts';
import { REPO_STYLES, writeContractsRepo } from './generate-contracts.ts';
import { median } from './median.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The V8 flags the CLI sets for itself on a V8 version (bin/v8-flags.js, plain JavaScript). */
const { cliV8Flags } = (await import(pathToFileURL(path.join(ROOT, 'bin/v8-flags.js')).href)) as { cliV8Flags: (v8Version: string) => string[] };

const { values: flags } = parseArgs({
  options: {
    contracts: { type: 'string', default: '100000' },
    styles: { type: 'string', default: REPO_STYLES.join(',') },
    runs: { type: 'string', default: '3' },
    threads: { type: 'string', default: String(availableParallelism()) },
    node: { type: 'string', multiple: true },
  },
});
const CONTRACTS = Number(flags.contracts);
const RUNS = Number(flags.runs);
const THREADS = Number(flags.threads);
const NODES = (flags.node ?? [process.execPath]).map((node) => path.resolve(node));
const STYLES = flags.styles.split(',').map((name) => {
  const style = REPO_STYLES.find((known) => known === name.trim());
  if (style === undefined) throw new TypeError(`--styles: expected some of ${REPO_STYLES.join(', ')}, got ${flags.styles}`);
  return style;
});
if (!Number.isInteger(CONTRACTS) || CONTRACTS < 1000) throw new TypeError(`--contracts: expected a number >= 1000, got ${flags.contracts}`);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new TypeError(`--runs: expected a positive integer, got ${flags.runs}`);
if (!Number.isInteger(THREADS) || THREADS < 1) throw new TypeError(`--threads: expected a positive integer, got ${flags.threads}`);

/**
 * The child, bundled: `child.cjs REPO WAY [THREADS]` with WAY main | counts | contracts. The same
 * file is each worker's code. Prints {contracts, errors, cpuS, wallS, peakRssMiB}.
 */
const CHILD = `
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { validateDesiredState } from './dist/engine/desired/validate.js';

function validate({ files, tenants, back }) {
  const result = validateDesiredState(files, { tenants });
  const contracts = result.contractSets.reduce((sum, set) => sum + set.contracts.length, 0);
  return { contracts, errors: result.errors.length, sets: back ? result.contractSets : undefined };
}

function inWorkers(groups, threads, back) {
  let next = 0;
  const totals = { contracts: 0, errors: 0 };
  return Promise.all(Array.from({ length: threads }, () => new Promise((resolve, reject) => {
    const worker = new Worker(__filename);
    const sendNext = () => {
      if (next === groups.length) return void worker.terminate().then(resolve, reject);
      worker.postMessage({ ...groups[next++], back });
    };
    worker.on('error', reject);
    worker.on('message', ({ contracts, errors }) => {
      totals.contracts += contracts;
      totals.errors += errors;
      sendNext();
    });
    sendNext();
  }))).then(() => totals);
}

if (!isMainThread) {
  parentPort.on('message', (group) => parentPort.postMessage(validate(group)));
} else {
  const [repo, way, threads] = process.argv.slice(2);
  const root = path.join(repo, 'contracts');
  const names = readdirSync(root).sort();
  const tenants = Object.fromEntries(names.map((tenant) => [tenant, {}]));
  const groups = names.map((tenant) => ({
    tenants,
    files: readdirSync(path.join(root, tenant)).sort().map((name) => ({ path: 'contracts/' + tenant + '/' + name, content: readFileSync(path.join(root, tenant, name)) })),
  }));
  const done =
    way === 'main'
      ? Promise.resolve(groups.map((group) => validate(group)).reduce((sum, one) => ({ contracts: sum.contracts + one.contracts, errors: sum.errors + one.errors }), { contracts: 0, errors: 0 }))
      : inWorkers(groups, Number(threads), way === 'contracts');
  done.then(({ contracts, errors }) => {
    const usage = process.resourceUsage();
    const figures = { contracts, errors, cpuS: (usage.userCPUTime + usage.systemCPUTime) / 1e6, wallS: performance.now() / 1000, peakRssMiB: usage.maxRSS / 1024 };
    process.stdout.write(JSON.stringify(figures));
  });
}`;

const WAYS = [
  { way: 'main', name: 'main thread' },
  { way: 'counts', name: `${THREADS} workers, counts back` },
  { way: 'contracts', name: `${THREADS} workers, contracts back` },
] as const;

interface Sample {
  readonly contracts: number;
  readonly errors: number;
  readonly cpuS: number;
  readonly wallS: number;
  readonly peakRssMiB: number;
}

/**
 * The child, bundled under node_modules/.cache (its `require`s of ajv's runtime resolve from the
 * package); its modules find their files (package.json, the precompiled schemas) as the CLI's
 * bundle does, from dist/cli/.
 */
async function bundleChild(): Promise<string> {
  const outfile = path.join(ROOT, 'node_modules/.cache/contract-sync-bench/parse-workers-child.cjs');
  await build({
    ...CLI_BUNDLE_OPTIONS,
    stdin: { contents: CHILD, resolveDir: ROOT, sourcefile: 'parse-workers-child.js', loader: 'js' },
    outfile,
    banner: { js: `const __bundleUrl = ${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/cli/main.cjs')).href)};` },
  });
  return outfile;
}

function runChild(node: string, v8Flags: readonly string[], child: string, repo: string, way: string): Sample {
  const result = spawnSync(node, [...v8Flags, child, repo, way, String(THREADS)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (result.status !== 0) throw new Error(`${node} ${way}: exit ${result.status}: ${result.stderr}`);
  const sample = JSON.parse(result.stdout) as Sample;
  if (sample.contracts !== CONTRACTS || sample.errors !== 0)
    throw new Error(`${way}: expected ${CONTRACTS} valid contracts, got ${sample.contracts} and ${sample.errors} errors`);
  return sample;
}

function fixed(value: number, digits = 2): string {
  return value.toFixed(digits);
}

const child = await bundleChild();
const scratch = await mkdtemp(path.join(tmpdir(), 'contract-sync-parse-workers-'));
try {
  for (const style of STYLES) {
    const repo = path.join(scratch, style);
    await writeContractsRepo(repo, { contracts: CONTRACTS, tenants: Math.max(1, Math.round(CONTRACTS / 1000)), perFile: 100, style });
    for (const node of NODES) {
      const [version, v8] = spawnSync(node, ['-p', 'process.version + " " + process.versions.v8'], { encoding: 'utf8' }).stdout.trim().split(' ');
      const v8Flags = cliV8Flags(v8!);
      const samples = new Map<string, Sample[]>(WAYS.map(({ way }) => [way, []]));
      for (let round = 0; round < RUNS; round++) for (const { way } of WAYS) samples.get(way)!.push(runChild(node, v8Flags, child, repo, way));
      const medians = WAYS.map(({ way, name }) => {
        const all = samples.get(way)!;
        return { name, cpuS: median(all.map((s) => s.cpuS)), wallS: median(all.map((s) => s.wallS)), peakRssMiB: median(all.map((s) => s.peakRssMiB)) };
      });
      const [main] = medians;
      console.log(`\n${version}, ${style}, ${CONTRACTS} contracts, ${availableParallelism()} cores (medians of ${RUNS})`);
      console.log('| way | CPU s | wall s | CPU / main thread | wall / main thread | peak RSS MiB |');
      console.log('|---|---|---|---|---|---|');
      for (const figure of medians) {
        const row = [
          figure.name,
          fixed(figure.cpuS),
          fixed(figure.wallS),
          `${fixed(figure.cpuS / main!.cpuS)}x`,
          `${fixed(figure.wallS / main!.wallS)}x`,
          String(Math.round(figure.peakRssMiB)),
        ];
        console.log(`| ${row.join(' | ')} |`);
        console.error(JSON.stringify({ bench: 'parse-workers', node: version, style, contracts: CONTRACTS, runs: RUNS, ...figure }));
      }
    }
    await rm(repo, { recursive: true, force: true });
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
