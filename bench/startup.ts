/**
 * Start-up time of the compiled CLI (bin/contract-sync.js, run by `npm run bench:startup` after a
 * build): `--version`, `--help` and `validate` of examples/demo-repo, each as a ratio to
 * `node -e 0` measured in the same run, rounds interleaved so that load on the machine hits all
 * alike. Targets: --version and --help at most 2x, validate at most 4x.
 * Prints one JSON line {"bench":"startup", runs, nodeMs, commands: {name: {medianMs, ratio, target, met}}},
 * then a table for people.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { median } from './median.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/contract-sync.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 15);

interface Case {
  readonly name: string;
  readonly args: readonly string[];
  /** The highest acceptable ratio to `node -e 0`; null for the baseline itself. */
  readonly target: number | null;
}

const CASES: readonly Case[] = [
  { name: 'node -e 0', args: ['-e', '0'], target: null },
  { name: '--version', args: [BIN, '--version'], target: 2 },
  { name: '--help', args: [BIN, '--help'], target: 2 },
  { name: 'validate', args: [BIN, 'validate', '--repo', path.join(ROOT, 'examples/demo-repo')], target: 4 },
];

function timeOnce(args: readonly string[]): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${result.status}: ${result.stderr.toString()}`);
  return elapsed;
}

if (!existsSync(path.join(ROOT, 'dist/engine/cli/main.js'))) {
  throw new Error('no build in dist/: run `npm run build` first (`npm run bench:startup` does)');
}

const timings = new Map<string, number[]>(CASES.map(({ name }) => [name, []]));
for (const { args } of CASES) timeOnce(args); // warm the file system cache
for (let run = 0; run < RUNS; run++) {
  for (const { name, args } of CASES) timings.get(name)!.push(timeOnce(args));
}

const nodeMs = median(timings.get('node -e 0')!);
const commands = Object.fromEntries(
  CASES.filter((c) => c.target !== null).map(({ name, target }) => {
    const medianMs = median(timings.get(name)!);
    const ratio = medianMs / nodeMs;
    return [name, { medianMs: Math.round(medianMs * 10) / 10, ratio: Math.round(ratio * 100) / 100, target, met: ratio <= target! }];
  }),
);

console.log(JSON.stringify({ bench: 'startup', node: process.version, runs: RUNS, nodeMs: Math.round(nodeMs * 10) / 10, commands }));
console.log(`\n${'command'.padEnd(12)} ${'median'.padStart(9)} ${'ratio'.padStart(7)} ${'target'.padStart(7)}`);
console.log(`${'node -e 0'.padEnd(12)} ${`${nodeMs.toFixed(1)} ms`.padStart(9)} ${'1.00x'.padStart(7)}`);
for (const [name, { medianMs, ratio, target, met }] of Object.entries(commands)) {
  console.log(
    `${name.padEnd(12)} ${`${medianMs.toFixed(1)} ms`.padStart(9)} ${`${ratio.toFixed(2)}x`.padStart(7)} ${`<=${target}x`.padStart(7)}${met ? '' : '  MISSED'}`,
  );
}
