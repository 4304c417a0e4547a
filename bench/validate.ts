/**
 * How long `validate` takes on 10,000 contracts (100 files of 100, 10 tenants): reading, YAML
 * parsing, schema and cross-file checks, as `contract-sync validate` does them in-process.
 *
 * In the same run, for scale, the same file contents (already read into memory) are parsed by a
 * bare js-yaml core-schema `load` and, converted to JSON beforehand, by a bare `JSON.parse`; and
 * `validateDesiredState` is timed on them too, without the reading. Every step is timed as wall
 * time and as CPU time (process.cpuUsage: user + system, which counts other threads too).
 * Prints one JSON line: {"bench":"validate", contracts, runs, medianMs, minMs, contractsPerSecond,
 * peakRssMiB, steps: {<step>: {wallMs, cpuMs}} as medians, ratios: validate / js-yaml}.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';
import { readConfig } from '../engine/config/index.ts';
import { loadDesiredState, validateDesiredState, workingTreeSource, type DesiredStateResult } from '../engine/desired/index.ts';
import { writeContractsRepo } from './generate-contracts.ts';

const CONTRACTS = Number(process.env.BENCH_CONTRACTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 10);
const PER_FILE = Number(process.env.BENCH_PER_FILE ?? 100);

interface Timing {
  readonly wallMs: number;
  readonly cpuMs: number;
}

async function timed<T>(act: () => T | Promise<T>): Promise<{ result: T; timing: Timing }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await act();
  const wallMs = performance.now() - start;
  const { user, system } = process.cpuUsage(cpu);
  return { result, timing: { wallMs, cpuMs: (user + system) / 1000 } };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function checkValid(result: DesiredStateResult): void {
  const valid = result.contractSets.reduce((sum, set) => sum + set.contracts.length, 0);
  if (result.errors.length > 0 || valid !== CONTRACTS) throw new Error(`expected ${CONTRACTS} valid contracts, got ${valid}`);
}

const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-'));
try {
  await writeContractsRepo(dir, { contracts: CONTRACTS, tenants: TENANTS, perFile: PER_FILE });
  const { config } = await readConfig(path.join(dir, 'contract-sync.yaml'));
  const files = await workingTreeSource(dir).readFiles(config!.desired.paths);
  const texts = files.map((file) => (typeof file.content === 'string' ? file.content : new TextDecoder().decode(file.content)));
  const jsons = texts.map((text) => JSON.stringify(load(text, { schema: CORE_SCHEMA })));

  const steps: Record<string, Timing[]> = { validate: [], validateInMemory: [], jsYamlLoad: [], jsonParse: [] };
  let peakRss = 0;
  for (let run = 0; run < RUNS; run++) {
    const full = await timed(async () => {
      const { config: fresh } = await readConfig(path.join(dir, 'contract-sync.yaml'));
      return loadDesiredState(dir, fresh!);
    });
    checkValid(full.result);
    steps.validate!.push(full.timing);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);

    const inMemory = await timed(() => validateDesiredState(files, config!));
    checkValid(inMemory.result);
    steps.validateInMemory!.push(inMemory.timing);

    const yaml = await timed(() => texts.map((text) => load(text, { schema: CORE_SCHEMA })));
    steps.jsYamlLoad!.push(yaml.timing);

    const json = await timed(() => jsons.map((text) => JSON.parse(text) as unknown));
    steps.jsonParse!.push(json.timing);
  }

  const medians = Object.fromEntries(
    Object.entries(steps).map(([step, timings]) => [
      step,
      { wallMs: Math.round(median(timings.map((t) => t.wallMs))), cpuMs: Math.round(median(timings.map((t) => t.cpuMs))) },
    ]),
  ) as Record<string, Timing>;
  function ratio(step: string, of: keyof Timing): number {
    return Math.round((medians[step]![of] / Math.max(1, medians.jsYamlLoad![of])) * 100) / 100;
  }
  const wall = steps.validate!.map((t) => t.wallMs).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      bench: 'validate',
      contracts: CONTRACTS,
      runs: RUNS,
      medianMs: Math.round(median(wall)),
      minMs: Math.round(wall[0]!),
      contractsPerSecond: Math.round((CONTRACTS / median(wall)) * 1000),
      peakRssMiB: Math.round(peakRss / 1024 / 1024),
      steps: medians,
      ratios: {
        validateToJsYamlCpu: ratio('validate', 'cpuMs'),
        validateToJsYamlWall: ratio('validate', 'wallMs'),
        inMemoryToJsYamlCpu: ratio('validateInMemory', 'cpuMs'),
        inMemoryToJsYamlWall: ratio('validateInMemory', 'wallMs'),
      },
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
