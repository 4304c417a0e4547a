/**
 * How `contract-sync validate` and `plan` scale (issues 14 and 25): the compiled CLI (bin/contract-sync.js,
 * run by `npm run bench:plan-scale` after a build) on repositories of 10,000 contracts (10 tenants)
 * and 100,000 (100 tenants), files of 100 contracts, in three styles (bench/generate-contracts.ts):
 * block (as `yaml.stringify` writes), flow (members as one-line flow maps, strings quoted) and
 * import (what `contract-sync import` writes); under each Node binary given (--node, repeatable).
 *
 * Every figure is a child process (`node --import <preload> ...`, the preload writing the child's
 * process.resourceUsage() at exit), measured as CPU seconds (user+sys of the child, plus the git
 * processes it waited for where /proc says so), wall seconds and peak RSS; medians of RUNS runs,
 * the rounds interleaved so that load on the shared machine hits every figure alike:
 * - the yardstick: the fastest way to parse the same files with js-yaml's core schema in one
 *   process, file by file. A baseline child reads every file into memory, then parses each with
 *   js-yaml's ES module build (`import`) or its CommonJS build (`require`): both are measured, and
 *   the one with the lower median CPU on that Node is the yardstick (on Node 20 the ES build is
 *   about 3x slower). Where the CLI sets V8 flags for itself on that Node (bin/v8-flags.js: those
 *   it sets while it runs, and those it starts node again with, such as Node 24's semi-space size),
 *   the CommonJS build is measured under them too, given to node, and counts if it is faster. The
 *   CLI's figures include its second start where it makes one. Start-up and reading
 *   are in it as they are in the CLI's figures; the parse alone (timed inside the child) is in the
 *   JSON line as parseCpuS. `JSON.parse` of the same data (one .json file per .yaml file) for
 *   comparison;
 * - `validate`;
 * - `plan` with an empty file state store, and with a populated one in which one contract in ten
 *   differs from the desired state (records in the file store's format, run records through
 *   StateStore.writeRun);
 * - `plan --format json` and `plan --out FILE`, nothing known; `plan` and `plan --format json`
 *   with stdout a pipe read slowly (`| { sleep 5; cat; }`): peak RSS shows whether the output
 *   respects backpressure (its wall includes the sleep);
 * - a pull request's plan: the repository is a git repository (the files committed on main, then a
 *   branch editing one file), every tenant's run record names main's commit as the last applied;
 *   `plan --ref HEAD --base main`; and the same as a first run, each with an empty
 *   NODE_COMPILE_CACHE (no code cache of an earlier run, as on a fresh CI runner; no target);
 * - the pull request's floor: a baseline child parsing the edited file at the merge base and at the
 *   head, cold, as any plan of that change must; with each build as above (and under the CLI's V8
 *   flags where it sets any), the fastest is the floor; `--version`: start-up.
 * Targets (on CPU ratios to the yardstick, measured in the same run): validate <= 2x, plan <= 2.5x,
 * plan --format json and --out <= 3x, peak RSS <= 512 MiB (every CLI figure), the pull request's
 * plan <= 2x the PR floor.
 * A child that fails is reported with the first line of its error; the bench goes on.
 * Prints, per Node, style and size, one JSON line per figure {"bench":"plan-scale", node, style,
 * contracts, figure, cpuS, wallS, peakRssMiB, ...} and a table for people; at the end a summary of
 * the ratios, and which js-yaml build the yardstick and the CLI (its bundle, dist/cli/main.cjs) used.
 * A ratio is judged on the median of each round's own ratio (the figure's run over the yardstick's
 * in the same round; roundCpuRatios in the JSON, cpuRatioOfMedians beside it), shown with the range
 * of those rounds: on a shared machine it says how far a ratio moves from one run to the next.
 *   npm run bench:plan-scale                     BENCH_SIZES=10000,100000 BENCH_RUNS=3
 *   npx tsx bench/plan-scale.ts --sizes 10000 --runs 5 (after npm run build)
 *   ... --styles block,flow                      only these styles (default block,flow,import)
 *   ... --node /path/to/node24/bin/node          the Node binary of every child (repeatable; BENCH_NODES=a,b; default this one)
 *   ... --bin DIR/bin/contract-sync.js           another build of the CLI (e.g. a copy of main's, for before/after)
 *   ... --only 'PR plan,validate'                only the figures whose names start so (and their yardsticks)
 *   ... --keep DIR                               prepare in DIR/<style>-<size> once, and keep it for the next run
 *   ... --pipe-sleep 5                           seconds the slow pipe waits before it reads
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CORE_SCHEMA, load } from 'js-yaml';
import { stringify } from 'yaml';
import { planningFingerprint } from '../engine/apply/incremental.ts';
import { readConfig } from '../engine/config/index.ts';
import type { ContractFields } from '../engine/model/index.ts';
import { fingerprint } from '../engine/model/index.ts';
import { fileStateStore, stateRecordOf, type AppliedContract } from '../engine/state/index.ts';
import { JOURNAL_FILE_NAME, journalRecordLine } from '../engine/state/journal-format.ts';
import { CHILD_USAGE_PRELOAD, readChildUsage } from './child-usage.ts';
import { differing, REPO_STYLES, writeContractsRepo, type RepoStyle } from './generate-contracts.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const PER_FILE = 100;
/** The file the pull request edits. */
const EDITED = 'contracts/tenant-000/part-1.yaml';
/** Start-up is short and noisy: it is run this many times per round. */
const VERSION_REPEAT = 5;

const { values: flags } = parseArgs({
  options: {
    sizes: { type: 'string', default: process.env.BENCH_SIZES ?? '10000,100000' },
    runs: { type: 'string', default: process.env.BENCH_RUNS ?? '3' },
    styles: { type: 'string', default: process.env.BENCH_STYLES ?? REPO_STYLES.join(',') },
    node: { type: 'string', multiple: true },
    bin: { type: 'string' },
    only: { type: 'string' },
    keep: { type: 'string' },
    'pipe-sleep': { type: 'string', default: '5' },
  },
});
const ONLY = flags.only?.split(',').map((prefix) => prefix.trim());
const SIZES = flags.sizes.split(',').map(Number);
const RUNS = Number(flags.runs);
const PIPE_SLEEP = Number(flags['pipe-sleep']);
const NODES = (flags.node ?? process.env.BENCH_NODES?.split(',') ?? [process.execPath]).map((node) => path.resolve(node));
const BIN = path.resolve(flags.bin ?? path.join(ROOT, 'bin/contract-sync.js'));
const STYLES = flags.styles.split(',').map((name) => {
  const style = REPO_STYLES.find((known) => known === name.trim());
  if (style === undefined) throw new TypeError(`--styles: expected some of ${REPO_STYLES.join(', ')}, got ${flags.styles}`);
  return style;
});
for (const size of SIZES) if (!Number.isInteger(size) || size < 1000) throw new TypeError(`--sizes: expected numbers of contracts >= 1000, got ${flags.sizes}`);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new TypeError(`--runs: expected a positive integer, got ${flags.runs}`);
if (!(PIPE_SLEEP >= 0)) throw new TypeError(`--pipe-sleep: expected seconds, got ${flags['pipe-sleep']}`);

/**
 * The baseline child: reads every file of argv[1] (a directory tree) into memory, then parses them
 * all with argv[2]: json (JSON.parse), esm (js-yaml's ES module build) or cjs (its CommonJS build),
 * both resolved from the working directory (the package).
 */
const BASELINE = `
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
const [, dir, parser] = process.argv;
const yaml = parser === 'esm' ? await import('js-yaml') : parser === 'cjs' ? createRequire(path.join(process.cwd(), 'baseline.js'))('js-yaml') : undefined;
const texts = readdirSync(dir, { recursive: true }).filter((name) => name.endsWith(parser === 'json' ? '.json' : '.yaml')).map((name) => readFileSync(path.join(dir, name), 'utf8'));
const before = process.cpuUsage();
let contracts = 0;
for (const text of texts) contracts += Object.keys((yaml === undefined ? JSON.parse(text) : yaml.load(text, { schema: yaml.CORE_SCHEMA })).contracts).length;
const used = process.cpuUsage(before);
process.stdout.write(JSON.stringify({ files: texts.length, contracts, parseCpuS: (used.user + used.system) / 1e6 }));`;

const YARDSTICKS = { esm: 'js-yaml load (ESM build)', cjs: 'js-yaml load (CJS build)', cjsTuned: "js-yaml load (CJS build, the CLI's V8 flags)" } as const;
type YardstickBuild = keyof typeof YARDSTICKS;
const YARDSTICK_BUILDS = Object.keys(YARDSTICKS) as YardstickBuild[];
const YARDSTICK_WORDS: Record<YardstickBuild, string> = { esm: 'ES module build', cjs: 'CommonJS build', cjsTuned: "CommonJS build under the CLI's V8 flags" };
/** A figure's ratio to this is to whichever of YARDSTICKS is fastest. */
const YARDSTICK = 'yardstick';
const FLOOR_LOAD = 'PR floor: js-yaml load of the file at base and head';
const FLOORS: Record<YardstickBuild, string> = {
  esm: `${FLOOR_LOAD} (ESM build)`,
  cjs: `${FLOOR_LOAD} (CJS build)`,
  cjsTuned: `${FLOOR_LOAD} (CJS build, the CLI's V8 flags)`,
};
/** A pull request's plan's ratio is to whichever of FLOORS is fastest. */
const PR_FLOOR = 'PR floor';
/** The figures that a ratio to YARDSTICK or PR_FLOOR is to the fastest of. */
const FASTEST_OF: Readonly<Record<string, readonly string[]>> = { [YARDSTICK]: Object.values(YARDSTICKS), [PR_FLOOR]: Object.values(FLOORS) };

interface Sample {
  readonly cpuS: number;
  readonly wallS: number;
  readonly peakRssMiB: number;
  /** The first line of the error, when the child failed. */
  readonly error?: string;
  readonly stdoutHead: string;
}

interface Figure {
  readonly name: string;
  readonly args: readonly string[];
  /** The figure it is a ratio to (YARDSTICK: the faster js-yaml build), and the highest acceptable ratio. */
  readonly ratioTo?: { readonly figure: string; readonly target?: number };
  readonly repeat?: number;
  /** The baseline children run in the package, so that they find js-yaml; the CLI in the repository. */
  readonly cwd?: string;
  /** stdout a pipe that waits --pipe-sleep seconds before it reads; else a file. */
  readonly slowPipe?: boolean;
  /** What is wrong with the output of a run that succeeded (its first 4 KiB), if anything. */
  readonly check?: (head: string) => string | undefined;
  /**
   * Each run with an empty NODE_COMPILE_CACHE: no code cache to use (bin/code-cache.js, Node's
   * own), and one to write at exit, as the first run of a command on a fresh machine (a CI runner).
   */
  readonly firstRun?: boolean;
}

/** The line that names the error: node's `RangeError: ...`, the CLI's `internal error: ...`, V8's `FATAL ERROR`. */
function errorLine(stderr: string, status: number | null, signal: string | null): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const line = lines.find((l) => /\b(\w*Error|FATAL ERROR|error)\b/.test(l)) ?? lines.at(-1);
  return `${signal ? `killed by ${signal}` : `exit ${status}`}${line ? `: ${line.slice(0, 200)}` : ''}`;
}

/**
 * The slow pipe: the command's stdout goes to a reader that sleeps, then keeps the first 4 KiB in
 * $BENCH_HEAD and drains the rest. pipefail: the command's exit status, not the reader's.
 */
const SLOW_PIPE = 'set -o pipefail; "$@" | { sleep "$BENCH_PIPE_SLEEP"; head -c 4096 > "$BENCH_HEAD"; cat > /dev/null; }';

function runChild(node: string, figure: Figure, cwd: string, scratch: string): Sample {
  const usageFile = path.join(scratch, 'usage.json');
  const outFile = path.join(scratch, 'stdout');
  const errFile = path.join(scratch, 'stderr');
  rmSync(usageFile, { force: true });
  rmSync(outFile, { force: true });
  const out = openSync(outFile, 'w');
  const err = openSync(errFile, 'w');
  const command = [node, '--import', CHILD_USAGE_PRELOAD, ...figure.args];
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_USAGE_FILE: usageFile, CONTRACT_SYNC_LOG_LEVEL: 'warn', NO_COLOR: '1' };
  if (figure.firstRun) {
    env.NODE_COMPILE_CACHE = path.join(scratch, 'compile-cache');
    rmSync(env.NODE_COMPILE_CACHE, { recursive: true, force: true });
  }
  const start = process.hrtime.bigint();
  let result;
  try {
    result = figure.slowPipe
      ? spawnSync('bash', ['-c', SLOW_PIPE, 'bash', ...command], {
          cwd,
          stdio: ['ignore', 'ignore', err],
          env: { ...env, BENCH_PIPE_SLEEP: String(PIPE_SLEEP), BENCH_HEAD: outFile },
        })
      : spawnSync(command[0]!, command.slice(1), { cwd, stdio: ['ignore', out, err], env });
  } finally {
    closeSync(out);
    closeSync(err);
  }
  const wallS = Number(process.hrtime.bigint() - start) / 1e9;
  const usage = readChildUsage(usageFile);
  const stdoutHead = readHead(outFile);
  const failed = result.status !== 0 || result.error !== undefined;
  return {
    cpuS: usage ? usage.cpuUs / 1e6 : Number.NaN,
    wallS,
    peakRssMiB: usage ? usage.maxRssKiB / 1024 : Number.NaN,
    stdoutHead,
    ...(failed ? { error: result.error ? result.error.message : errorLine(readFileSync(errFile, 'utf8'), result.status, result.signal) } : {}),
  };
}

/** The first 4 KiB of a file: enough for a plan's headline, without reading 100 MB of plan text. */
function readHead(file: string): string {
  if (!existsSync(file)) return '';
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function median(values: readonly number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function git(dir: string, ...args: string[]): string {
  const result = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** The known state of one contract in ten differs from its desired state, one of five ways. */
function knownFor(desired: ContractFields, index: number): ContractFields {
  return differing(desired, (index / 10) % 5);
}

interface Prepared {
  readonly repo: string;
  readonly jsonDir: string;
  readonly emptyConfig: string;
  readonly prFiles: string;
  readonly tenants: number;
  readonly files: number;
  readonly changed: number;
  readonly bytes: number;
}

/**
 * The repository (a git repository: main, then branch `change` editing one contract's Name in one
 * file), the same files as JSON, the populated store under the repository's default
 * .contract-sync/state, a config naming an empty store, and the edited file at base and head.
 */
async function prepare(dir: string, contracts: number, style: RepoStyle): Promise<Prepared> {
  const started = performance.now();
  const tenants = Math.max(1, Math.round(contracts / 1000));
  const repo = path.join(dir, 'repo');
  await writeContractsRepo(repo, { contracts, tenants, perFile: PER_FILE, style });
  await writeFile(path.join(repo, '.gitignore'), '.contract-sync/\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'desired state');
  const applied = git(repo, 'rev-parse', 'HEAD');
  process.stderr.write(`${style} ${contracts}: repository written and committed in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);

  const { config } = await readConfig(path.join(repo, 'contract-sync.yaml'));
  if (!config) throw new Error('the generated contract-sync.yaml is invalid');
  const stateDir = path.join(repo, '.contract-sync/state');
  const store = fileStateStore(stateDir);
  const jsonDir = path.join(dir, 'json');
  let files = 0;
  let changed = 0;
  let bytes = 0;
  for (const tenant of (await readdir(path.join(repo, 'contracts'))).sort()) {
    await mkdir(path.join(jsonDir, tenant), { recursive: true });
    const records: AppliedContract[] = [];
    for (const name of await readdir(path.join(repo, 'contracts', tenant))) {
      const text = await readFile(path.join(repo, 'contracts', tenant, name), 'utf8');
      bytes += Buffer.byteLength(text);
      const data = load(text, { schema: CORE_SCHEMA }) as { tenant: string; contracts: Record<string, ContractFields> };
      await writeFile(path.join(jsonDir, tenant, name.replace(/\.yaml$/, '.json')), JSON.stringify(data));
      files++;
      for (const [contractId, desired] of Object.entries(data.contracts)) {
        const index = Number(contractId.slice(2));
        const fields = index % 10 === 0 ? knownFor(desired, index) : desired;
        if (fields !== desired) changed++;
        records.push({ contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-11-01T00:00:00.000Z', commit: applied });
      }
    }
    // The tenant's journal as StateStore.writeContract appends it (the same stateRecordOf and
    // journalRecordLine), written at once instead of one fsynced append per record.
    await mkdir(path.join(stateDir, tenant), { recursive: true });
    const lines = records.map((record) => journalRecordLine(stateRecordOf(tenant, record)));
    await writeFile(path.join(stateDir, tenant, JOURNAL_FILE_NAME), lines.join(''));
    await store.writeRun(tenant, {
      lastAppliedCommit: applied,
      planningFingerprint: planningFingerprint(config, tenant),
      pending: [],
      updatedAt: '2026-11-01T00:00:00.000Z',
    });
  }

  process.stderr.write(`${style} ${contracts}: state store populated in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  // The pull request edits C-<k*100>, the first contract of a file: one the store already has as
  // differing, so that the populated plan's count of contracts to update is the same on both.
  git(repo, 'checkout', '-q', '-b', 'change');
  const edited = path.join(repo, EDITED);
  await writeFile(edited, (await readFile(edited, 'utf8')).replace(/^( +)Name: .*$/m, '$1Name: Edited in the pull request'));
  git(repo, 'commit', '-q', '-am', 'edit one contract');

  const emptyConfig = path.join(dir, 'empty-store.yaml');
  await mkdir(path.join(dir, 'empty-state'));
  await writeFile(
    emptyConfig,
    stringify({
      ...(load(await readFile(path.join(repo, 'contract-sync.yaml'), 'utf8'), { schema: CORE_SCHEMA }) as object),
      state: { backend: 'file', path: path.join(dir, 'empty-state') },
    }),
  );
  // The pull request's file at its merge base and at its head, for the parse floor of its plan.
  const prFiles = path.join(dir, 'pr-files');
  await mkdir(prFiles);
  await writeFile(path.join(prFiles, 'base.yaml'), git(repo, 'show', `main:${EDITED}`));
  await writeFile(path.join(prFiles, 'head.yaml'), git(repo, 'show', `HEAD:${EDITED}`));
  return { repo, jsonDir, emptyConfig, prFiles, tenants, files, changed, bytes };
}

/** "1000 of 10000 contracts in 10 tenants to update, ..." or "10000 contracts in 10 tenants to update, ...". */
function expectHeadline(toUpdate: number, contracts: number): (head: string) => string | undefined {
  return (head) => {
    const first = head.split('\n')[0] ?? '';
    const match = /^(?:(\d+) of )?(\d+) contracts? in \d+ tenants? to update/.exec(first);
    if (!match) return `unexpected output: ${first.slice(0, 120)}`;
    const planned = Number(match[1] ?? match[2]);
    return planned === toUpdate && Number(match[2]) === contracts ? undefined : `expected ${toUpdate} of ${contracts} to update: ${first.slice(0, 120)}`;
  };
}

/** A JSON plan's start: compact since issue 25 (`{"formatVersion":...`); a pretty one is reported, not failed. */
function expectJsonPlan(head: string): string | undefined {
  if (!head.startsWith('{')) return `not JSON: ${head.slice(0, 120)}`;
  return head.startsWith('{\n') ? 'pretty-printed' : undefined;
}

function figuresFor(prepared: Prepared, contracts: number, scratch: string, cliFlags: readonly string[]): Figure[] {
  const { repo, jsonDir, emptyConfig, changed, prFiles } = prepared;
  const baseline = ['--input-type=module', '--eval', BASELINE];
  function expectParsed(head: string): string | undefined {
    const parsed = JSON.parse(head) as { contracts: number };
    return parsed.contracts === contracts ? undefined : `parsed ${parsed.contracts} contracts`;
  }
  function yardstick(target: number): Figure['ratioTo'] {
    return { figure: YARDSTICK, target };
  }
  /** A baseline child per js-yaml build, loading the files under `dir`: the yardsticks, the floors. */
  function loads(names: Readonly<Record<YardstickBuild, string>>, dir: string, check: Figure['check']): Figure[] {
    return YARDSTICK_BUILDS.filter((build) => build !== 'cjsTuned' || cliFlags.length > 0).map((build) => ({
      name: names[build],
      args: [...(build === 'cjsTuned' ? cliFlags : []), ...baseline, dir, build === 'esm' ? 'esm' : 'cjs'],
      cwd: ROOT,
      check,
    }));
  }
  const emptyPlan = [BIN, 'plan', '--repo', repo, '--config', emptyConfig];
  const prPlan = [BIN, 'plan', '--repo', repo, '--ref', 'HEAD', '--base', 'main'];
  return [
    { name: 'JSON.parse (same data)', args: [...baseline, jsonDir, 'json'], cwd: ROOT, check: expectParsed },
    ...loads(YARDSTICKS, path.join(repo, 'contracts'), expectParsed),
    {
      name: 'validate',
      args: [BIN, 'validate', '--repo', repo],
      ratioTo: yardstick(2),
      check: (head) => (head.includes(`${contracts} valid contracts`) ? undefined : `unexpected output: ${head.split('\n')[0]}`),
    },
    { name: 'plan, empty store', args: emptyPlan, ratioTo: yardstick(2.5), check: expectHeadline(contracts, contracts) },
    { name: 'plan, empty store | slow pipe', args: emptyPlan, slowPipe: true, ratioTo: yardstick(2.5), check: expectHeadline(contracts, contracts) },
    // --full: the store holds main's commit as last applied, so a plain plan would be incremental.
    { name: 'plan --full, 10% differ', args: [BIN, 'plan', '--repo', repo, '--full'], ratioTo: yardstick(2.5), check: expectHeadline(changed, contracts) },
    { name: 'plan --format json', args: [...emptyPlan, '--format', 'json'], ratioTo: yardstick(3), check: expectJsonPlan },
    { name: 'plan --format json | slow pipe', args: [...emptyPlan, '--format', 'json'], slowPipe: true, ratioTo: yardstick(3), check: expectJsonPlan },
    {
      name: 'plan --out FILE',
      args: [...emptyPlan, '--out', path.join(scratch, 'plan.json')],
      ratioTo: yardstick(3),
      check: expectHeadline(contracts, contracts),
    },
    // What no PR plan can do without: node, js-yaml, and a parse of the changed file at both commits.
    ...loads(FLOORS, prFiles, (head) => ((JSON.parse(head) as { files: number }).files === 2 ? undefined : 'expected the two versions of the file')),
    { name: 'PR plan --ref HEAD --base main', args: prPlan, ratioTo: { figure: PR_FLOOR, target: 2 } },
    // Without a target: what a CI runner's first run pays, without the code caches of earlier runs.
    { name: 'PR plan, first run (empty compile caches)', args: prPlan, ratioTo: { figure: PR_FLOOR }, firstRun: true },
    { name: '--version', args: [BIN, '--version'], repeat: VERSION_REPEAT },
  ];
}

interface Result {
  readonly name: string;
  readonly cpuS: number;
  readonly wallS: number;
  readonly peakRssMiB: number;
  readonly runs: number;
  readonly failures: number;
  readonly error?: string;
  readonly note?: string;
  readonly parseCpuS?: number;
}

function round(value: number, digits: number): number | null {
  return Number.isNaN(value) ? null : Number(value.toFixed(digits));
}

/** A prepared directory kept by --keep: the same setup, read back instead of written again. */
async function preparedIn(dir: string, contracts: number, style: RepoStyle): Promise<Prepared> {
  const file = path.join(dir, 'prepared.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as Prepared;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const prepared = await prepare(dir, contracts, style);
  await writeFile(file, JSON.stringify(prepared));
  return prepared;
}

/** Which js-yaml build the CLI's bundle holds: esbuild names each bundled file in a comment. */
function cliYamlBuild(): string {
  const dir = path.resolve(path.dirname(BIN), '../dist/cli');
  if (!existsSync(dir)) return 'unknown (no dist/cli)';
  const builds = new Set<string>();
  for (const name of readdirSync(dir).filter((file) => /\.c?js$/.test(file))) {
    const text = readFileSync(path.join(dir, name), 'utf8');
    if (text.includes('// node_modules/js-yaml/dist/js-yaml.cjs.js')) builds.add('cjs');
    if (text.includes('// node_modules/js-yaml/dist/js-yaml.mjs')) builds.add('esm');
    if (/^import [^;]* from ["']js-yaml["'];/m.test(text)) builds.add('esm (from node_modules)');
  }
  return builds.size === 0 ? 'unknown' : [...builds].join('+');
}

interface Summary {
  readonly node: string;
  readonly style: RepoStyle;
  readonly contracts: number;
  readonly yardstick: string;
  readonly yardstickCpuS: number;
  readonly results: ReadonlyMap<string, Result>;
  readonly ratios: ReadonlyMap<string, number>;
  readonly missed: readonly string[];
}

const summaries: Summary[] = [];
const CLI_BUILD = cliYamlBuild();

function nodeVersion(node: string): string {
  const result = spawnSync(node, ['--version'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`--node ${node}: cannot run it (${result.error?.message ?? result.stderr})`);
  return result.stdout.trim();
}

/**
 * The V8 flags the CLI under test runs under with `node`: those it sets while it runs, and those it
 * starts node again with (cliStartFlags; absent from older builds); none for a build from before
 * bin/v8-flags.js. A baseline child is given them all on its command line.
 */
function cliV8FlagsUnder(node: string): string[] {
  const module = path.join(path.dirname(BIN), 'v8-flags.js');
  if (!existsSync(module)) return [];
  const script = `const flags = await import(${JSON.stringify(pathToFileURL(module).href)}); const v8 = process.versions.v8; process.stdout.write(JSON.stringify([...flags.cliV8Flags(v8), ...(flags.cliStartFlags?.(v8) ?? [])]));`;
  const result = spawnSync(node, ['--input-type=module', '--eval', script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cannot read the CLI's V8 flags under ${node}: ${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}

function benchCase(node: string, version: string, style: RepoStyle, contracts: number, prepared: Prepared, scratch: string, setupS: number): void {
  const cliFlags = cliV8FlagsUnder(node);
  const every = figuresFor(prepared, contracts, scratch, cliFlags);
  // A figure named by --only comes with the figure it is a ratio to (the yardstick: every build).
  const wanted = new Set(
    every
      .filter(({ name }) => !ONLY || ONLY.some((prefix) => name.startsWith(prefix)))
      .flatMap(({ name, ratioTo }) => (ratioTo ? [name, ...(FASTEST_OF[ratioTo.figure] ?? [ratioTo.figure])] : [name])),
  );
  const figures = every.filter(({ name }) => wanted.has(name));
  const samples = new Map<string, Sample[]>(figures.map(({ name }) => [name, []]));
  const notes = new Map<string, string>();
  const parseCpu = new Map<string, number[]>();
  const label = `${version} ${style} ${contracts}`;
  for (let round = 0; round < RUNS; round++) {
    for (const figure of figures) {
      for (let repeat = 0; repeat < (figure.repeat ?? 1); repeat++) {
        const sample = runChild(node, figure, figure.cwd ?? prepared.repo, scratch);
        samples.get(figure.name)!.push(sample);
        if (sample.error === undefined && figure.check && !notes.has(figure.name)) {
          let problem: string | undefined;
          try {
            problem = figure.check(sample.stdoutHead);
          } catch (error) {
            problem = `unreadable output: ${(error as Error).message}`;
          }
          if (problem) notes.set(figure.name, problem);
        }
        if (sample.error === undefined && figure.args[0] === '--input-type=module') {
          parseCpu.set(figure.name, [...(parseCpu.get(figure.name) ?? []), (JSON.parse(sample.stdoutHead) as { parseCpuS: number }).parseCpuS]);
        }
        process.stderr.write(
          `${label} ${figure.name} #${round + 1}: ${sample.error ?? `${sample.cpuS.toFixed(2)} s CPU, ${sample.wallS.toFixed(2)} s wall, ${Math.round(sample.peakRssMiB)} MiB`}\n`,
        );
      }
    }
  }

  const results = new Map<string, Result>();
  for (const figure of figures) {
    const all = samples.get(figure.name)!;
    const failed = all.filter((sample) => sample.error !== undefined);
    // A figure that failed once is a failure: its medians are of the runs that finished, if any.
    const ok = all.filter((sample) => sample.error === undefined);
    const of = ok.length > 0 ? ok : all;
    results.set(figure.name, {
      name: figure.name,
      cpuS: median(of.map((s) => s.cpuS)),
      wallS: median(of.map((s) => s.wallS)),
      peakRssMiB: median(of.map((s) => s.peakRssMiB)),
      runs: all.length,
      failures: failed.length,
      ...(failed.length > 0 ? { error: failed[0]!.error } : {}),
      ...(notes.has(figure.name) ? { note: notes.get(figure.name) } : {}),
      ...(parseCpu.has(figure.name) ? { parseCpuS: median(parseCpu.get(figure.name)!) } : {}),
    });
  }
  /** The build of the fastest of `names` on this Node (a failed one does not count). */
  function fastestOf(names: Readonly<Record<YardstickBuild, string>>): YardstickBuild | undefined {
    const builds = YARDSTICK_BUILDS.filter((build) => results.has(names[build]) && results.get(names[build])!.failures === 0);
    return builds.sort((a, b) => results.get(names[a])!.cpuS - results.get(names[b])!.cpuS)[0];
  }
  const fastest = fastestOf(YARDSTICKS);
  const yardstick = fastest === undefined ? undefined : results.get(YARDSTICKS[fastest])!;
  const fastestFloor = fastestOf(FLOORS);
  const floor = fastestFloor === undefined ? undefined : results.get(FLOORS[fastestFloor])!;
  function baseOf(figure: string): Result | undefined {
    return figure === YARDSTICK ? yardstick : figure === PR_FLOOR ? floor : results.get(figure);
  }

  /**
   * Each round's own CPU ratio, the figure's run over its base's run in the same round: their
   * median is what the targets are judged on, their range how far a ratio moves from round to round
   * on this machine.
   */
  function roundRatios(figure: Figure, base: Result | undefined): number[] {
    const mine = samples.get(figure.name)!;
    const theirs = base === undefined ? undefined : samples.get(base.name);
    if (theirs === undefined || (figure.repeat ?? 1) !== 1 || theirs.length !== mine.length) return [];
    return mine.flatMap((sample, round) => (sample.error === undefined && theirs[round]!.error === undefined ? [sample.cpuS / theirs[round]!.cpuS] : []));
  }

  const rows: string[][] = [];
  const ratios = new Map<string, number>();
  const caseMissed: string[] = [];
  for (const figure of figures) {
    const result = results.get(figure.name)!;
    const base = figure.ratioTo ? baseOf(figure.ratioTo.figure) : undefined;
    const ratioOfMedians = base ? result.cpuS / base.cpuS : Number.NaN;
    const wallRatio = base ? result.wallS / base.wallS : Number.NaN;
    const byRound = roundRatios(figure, base);
    // The verdict (issue 40): the median of each round's own ratio, which load that comes and goes
    // moves less than a ratio of medians taken from different rounds; that where rounds have none.
    const cpuRatio = byRound.length > 0 ? median(byRound) : ratioOfMedians;
    if (figure.ratioTo) ratios.set(figure.name, cpuRatio);
    const isCli = figure.args[0] === BIN;
    const targets: string[] = [];
    const missed: string[] = [];
    if (figure.ratioTo?.target !== undefined) {
      targets.push(`<=${figure.ratioTo.target}x`);
      if (!(cpuRatio <= figure.ratioTo.target) || result.failures > 0) missed.push('ratio');
    }
    const rssMet = result.peakRssMiB <= 512;
    if (isCli && figure.name !== '--version') {
      targets.push('<=512MiB');
      if (!rssMet) missed.push('rss');
    }
    if (figure.name.startsWith('plan --format json')) {
      targets.push('works');
      if (result.failures > 0) missed.push('works');
    }
    if (missed.length > 0) caseMissed.push(`${figure.name}: ${missed.join(',')}`);
    const status = result.failures > 0 ? `FAILED ${result.failures}/${result.runs}: ${result.error}` : (result.note ?? '');
    const ratioName = figure.ratioTo ? (baseOf(figure.ratioTo.figure)?.name ?? figure.ratioTo.figure) : undefined;
    console.log(
      JSON.stringify({
        bench: 'plan-scale',
        node: version,
        style,
        contracts,
        tenants: prepared.tenants,
        files: prepared.files,
        figure: figure.name,
        runs: result.runs,
        cpuS: round(result.cpuS, 3),
        wallS: round(result.wallS, 3),
        peakRssMiB: round(result.peakRssMiB, 0),
        ...(result.parseCpuS === undefined ? {} : { parseCpuS: round(result.parseCpuS, 3) }),
        ...(ratioName
          ? {
              ratioTo: ratioName,
              cpuRatio: round(cpuRatio, 2),
              cpuRatioOfMedians: round(ratioOfMedians, 2),
              wallRatio: round(wallRatio, 2),
              roundCpuRatios: byRound.map((ratio) => round(ratio, 2)),
            }
          : {}),
        ...(targets.length > 0 ? { targets, met: missed.length === 0 } : {}),
        ...(isCli ? { cliYamlBuild: CLI_BUILD } : {}),
        ok: result.failures === 0 && result.note === undefined,
        ...(result.error === undefined ? {} : { error: result.error }),
        ...(result.note === undefined ? {} : { problem: result.note }),
      }),
    );
    rows.push([
      figure.name === yardstick?.name ? `${figure.name} = yardstick` : figure.name,
      Number.isNaN(result.cpuS) ? '-' : result.cpuS.toFixed(2),
      Number.isNaN(result.wallS) ? '-' : result.wallS.toFixed(2),
      Number.isNaN(result.peakRssMiB) ? '-' : String(Math.round(result.peakRssMiB)),
      Number.isNaN(cpuRatio) ? '' : `${cpuRatio.toFixed(2)}x`,
      Number.isNaN(wallRatio) ? '' : `${wallRatio.toFixed(2)}x`,
      byRound.length < 2 ? '' : `${Math.min(...byRound).toFixed(2)}-${Math.max(...byRound).toFixed(2)}x`,
      targets.join(' '),
      targets.length === 0 ? '' : missed.length === 0 ? 'met' : `MISSED ${missed.join(',')}`,
      status,
    ]);
  }

  console.log(
    `\n${version}, ${style} style, ${contracts} contracts, ${prepared.tenants} tenant${prepared.tenants === 1 ? '' : 's'}, ${prepared.files} files ` +
      `(${(prepared.bytes / 2 ** 20).toFixed(0)} MiB), ${prepared.changed} differing in the populated store; ` +
      `medians of ${RUNS} run${RUNS === 1 ? '' : 's'} (--version: ${RUNS * VERSION_REPEAT}); setup ${setupS.toFixed(0)} s; load average now ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}`,
  );
  console.log(
    `yardstick: ${yardstick ? `js-yaml's ${YARDSTICK_WORDS[fastest!]}, ${yardstick.cpuS.toFixed(2)} s CPU` : figures.some(({ name }) => FASTEST_OF[YARDSTICK]!.includes(name)) ? 'none (every build failed)' : 'not measured (--only)'}; ` +
      `the CLI bundles js-yaml's ${CLI_BUILD} build${cliFlags.length > 0 ? ` and sets ${cliFlags.join(' ')}` : ''}; cpu x: the median of each round's own cpu ratio (its run over the yardstick's run in that round) to the yardstick (validate, plan) or to the PR floor (PR plan); ` +
      `wall x: the ratio of the medians; rounds x: the lowest and highest of the rounds' own cpu ratios; targets are on cpu x`,
  );
  printTable(['figure', 'cpu s', 'wall s', 'rss MiB', 'cpu x', 'wall x', 'rounds x', 'target', 'met', 'notes'], rows, 7);
  console.log('');
  summaries.push({
    node: version,
    style,
    contracts,
    yardstick: fastest ?? 'none',
    yardstickCpuS: yardstick?.cpuS ?? Number.NaN,
    results,
    ratios,
    missed: caseMissed,
  });
}

function printTable(header: readonly string[], rows: readonly (readonly string[])[], leftFrom: number): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const lines = [header, ...rows].map((row) =>
    row
      .map((cell, column) => (column === 0 || column >= leftFrom ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
  console.log(lines.join('\n'));
}

/** `plan --format json | slow pipe: ratio,rss` as the summary's column titles say it: `json|pipe (ratio,rss)`. */
function shortMiss(missed: string): string {
  const [name = '', what = ''] = missed.split(': ');
  const title = SUMMARY_COLUMNS.find(([, figure]) => figure === name)?.[0] ?? name;
  return `${title} (${what})`;
}

const SUMMARY_COLUMNS: readonly (readonly [string, string])[] = [
  ['validate', 'validate'],
  ['plan', 'plan, empty store'],
  ['plan|pipe', 'plan, empty store | slow pipe'],
  ['plan --full', 'plan --full, 10% differ'],
  ['json', 'plan --format json'],
  ['json|pipe', 'plan --format json | slow pipe'],
  ['--out', 'plan --out FILE'],
  ['PR/floor', 'PR plan --ref HEAD --base main'],
];

/** One line per Node, style and size: the yardstick, the CLI figures' ratios, the highest peak RSS. */
function printSummary(): void {
  const columns = SUMMARY_COLUMNS;
  const rows = summaries.map((summary) => {
    const cli = [...summary.results.values()].filter(
      (result) => !result.name.startsWith('js-yaml') && !result.name.startsWith('JSON') && !result.name.startsWith('PR floor') && result.name !== '--version',
    );
    const peak = Math.max(...cli.map((result) => result.peakRssMiB).filter((value) => !Number.isNaN(value)));
    return [
      summary.node,
      summary.style,
      String(summary.contracts),
      `${summary.yardstick} ${Number.isNaN(summary.yardstickCpuS) ? '-' : summary.yardstickCpuS.toFixed(2)}`,
      ...columns.map(([, name]) => {
        const ratio = summary.ratios.get(name);
        return ratio === undefined || Number.isNaN(ratio) ? '-' : `${ratio.toFixed(2)}x`;
      }),
      Number.isFinite(peak) ? String(Math.round(peak)) : '-',
      summary.missed.length === 0 ? 'all met' : `MISSED ${summary.missed.map(shortMiss).join(', ')}`,
    ];
  });
  console.log(`Summary: cpu ratios to the yardstick (PR plan: to the PR floor); the CLI bundles js-yaml's ${CLI_BUILD} build (${BIN})`);
  printTable(['node', 'style', 'contracts', 'yardstick s', ...columns.map(([title]) => title), 'max rss MiB', 'targets'], rows, 12);
}

async function benchSize(style: RepoStyle, contracts: number, nodes: readonly { readonly node: string; readonly version: string }[]): Promise<void> {
  const dir = flags.keep ? path.resolve(flags.keep, `${style}-${contracts}`) : await mkdtemp(path.join(tmpdir(), 'contract-sync-plan-scale-'));
  try {
    const setupStart = performance.now();
    const prepared = flags.keep ? await preparedIn(dir, contracts, style) : await prepare(dir, contracts, style);
    const setupS = (performance.now() - setupStart) / 1000;
    const scratch = path.join(dir, 'scratch');
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch);
    for (const { node, version } of nodes) benchCase(node, version, style, contracts, prepared, scratch, setupS);
  } finally {
    if (!flags.keep) await rm(dir, { recursive: true, force: true });
  }
}

if (!existsSync(BIN)) throw new Error(`no CLI at ${BIN}`);
if (!existsSync(path.resolve(path.dirname(BIN), '../dist/cli/main.cjs'))) {
  throw new Error('no build in dist/: run `npm run build` first (`npm run bench:plan-scale` does)');
}
const nodes = NODES.map((node) => ({ node, version: nodeVersion(node) }));
process.stderr.write(
  `plan-scale: ${nodes.map(({ node, version }) => `${version} (${node})`).join(', ')}; load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}\n`,
);
for (const contracts of SIZES) for (const style of STYLES) await benchSize(style, contracts, nodes);
printSummary();
console.log(
  `load average at the end: ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
);
