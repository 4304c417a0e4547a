/**
 * What policy rules add to `validate`: the same generated repository (bench/generate-contracts.ts)
 * validated by the built CLI (bin/contract-sync.js, as users run it: `npm run build` first) without
 * rules and with ten rules: the DORA pack of examples/policies/contract-sync.yaml, repeated under
 * other names until there are ten (its on: contract rules run at validate; a fifth of the contracts
 * are DORA, so rules find things, and validate prints them: 39,910 lines at 100,000 contracts).
 * Each figure is a child process under the Node that runs this script, its CPU (user+sys) from
 * process.resourceUsage() at its exit (bench/child-usage.ts); the two alternate, and each round's
 * ratio (with / without) is one sample, so that a machine loaded by others weighs on both halves of
 * a round alike. (In-process, on Node 20, the figure without rules was twice the CLI's: js-yaml's
 * ES module build, which the bundle does not use, parsed 3x slower; the ratio looked better than
 * what users get.)
 * Rules that read only fields are answered from what the same values gave before (engine/policy/
 * memo.ts); the generated contracts repeat their dates (the first and last day of a few years), as
 * many repositories do. BENCH_DATES=days gives every contract a random day of its years (midnight
 * UTC: the dates repeat, their pairs seldom, as in a repository of real contracts); BENCH_DATES=distinct
 * a random day and minute, so that no date repeats: the memo's and timestamp()'s worst case.
 *   npm run build && BENCH_CONTRACTS=100000 BENCH_RUNS=7 [BENCH_DATES=days|distinct] npx tsx bench/policies.ts
 * Prints one JSON line: {"bench":"policies", node, contracts, rules, onContract, runs, dates, withoutMs,
 * withMs (medians of CPU), overheadPercent (median of the rounds' ratios), spreadPercent ([min, max] of
 * them), findings (validate's own count), loadAverage}.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { CHILD_USAGE_PRELOAD, readChildUsage } from './child-usage.ts';
import { createRandom, writeContractsRepo } from './generate-contracts.ts';
import { median } from './median.ts';

const CONTRACTS = Number(process.env.BENCH_CONTRACTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const RULES = Number(process.env.BENCH_RULES ?? 10);
const PACK = path.join(import.meta.dirname, '../examples/policies/contract-sync.yaml');
/** `generated`: as bench/generate-contracts.ts writes them; `days`: a random day of the year each (midnight UTC); `distinct`: a random day and minute each. */
const DATES = process.env.BENCH_DATES ?? 'generated';
if (DATES !== 'generated' && DATES !== 'days' && DATES !== 'distinct') throw new TypeError(`BENCH_DATES: expected generated, days or distinct, got ${DATES}`);

const BIN = path.join(import.meta.dirname, '../bin/contract-sync.js');
if (!existsSync(path.join(import.meta.dirname, '../dist/cli/main.cjs'))) throw new Error('no build in dist/: run `npm run build` first');

/** One `contract-sync validate` of `dir` with `config`: its CPU, and its summary's count of findings ("policies: N denied, ..."). */
function cpuOfValidate(dir: string, config: string): { cpuMs: number; findings: string } {
  const usageFile = `${dir}.usage.json`;
  rmSync(usageFile, { force: true });
  const result = spawnSync(process.execPath, ['--import', CHILD_USAGE_PRELOAD, BIN, 'validate', '--config', config], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    env: { ...process.env, BENCH_USAGE_FILE: usageFile, NO_COLOR: '1' },
  });
  const usage = readChildUsage(usageFile);
  const summary = `${result.stdout}${result.stderr}`.trimEnd().split('\n').at(-1) ?? '';
  // Exit 1 with rules: the pack denies some of the contracts; anything else is a failure.
  if (usage === undefined || !/ valid contracts in /.test(summary) || (result.status !== 0 && !/policies: /.test(summary))) {
    throw new Error(`validate --config ${config} failed (exit ${result.status}): ${summary || result.error?.message}`);
  }
  return { cpuMs: usage.cpuUs / 1000, findings: /policies: ([^)]*)\)/.exec(summary)?.[1] ?? 'none' };
}

/** The pack's rules (the text of its `policies:` list, without its exceptions), repeated under new names until there are `count`. */
function tenRules(pack: string, count: number): { text: string; onContract: number } {
  const start = pack.indexOf('\npolicies:\n') + '\npolicies:\n'.length;
  const end = pack.indexOf('\npolicyExceptions:');
  const rules = pack
    .slice(start, end === -1 ? undefined : end)
    .split(/\n(?= {2}- name: )/)
    .map((rule) => rule.replace(/^(?:\s*#.*\n)+/, '').trimEnd())
    .filter((rule) => rule.startsWith('  - name: '));
  const chosen: string[] = [];
  for (let index = 0; chosen.length < count; index++) {
    const rule = rules[index % rules.length]!;
    const round = Math.floor(index / rules.length);
    chosen.push(round === 0 ? rule : rule.replace(/^( {2}- name: \S+)/, `$1-${round + 1}`));
  }
  return { text: `policies:\n${chosen.join('\n')}\n`, onContract: chosen.filter((rule) => /\n {4}on: contract\n/.test(rule)).length };
}

function percent(ratio: number): number {
  return Math.round(ratio * 1000) / 10;
}

/**
 * Every ValidFrom and ValidTo of the repository's contract files made a random date of the same
 * year (deterministic): a day at midnight UTC (`days`: the texts repeat, some 336 a year, their
 * pairs seldom), or a day and minute (`distinct`: no text repeats).
 */
async function randomDates(root: string, minutes: boolean): Promise<void> {
  const random = createRandom(37);
  function two(max: number): string {
    return String(1 + Math.floor(random() * max)).padStart(2, '0');
  }
  for (const entry of await readdir(path.join(root, 'contracts'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.yaml')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text.replace(
        /(Valid(?:From|To): ["']?)(\d{4})-\d\d-\d\dT\d\d:\d\d:\d\dZ/g,
        (_, key: string, year: string) => `${key}${year}-${two(12)}-${two(28)}T${minutes ? `${two(23)}:${two(59)}` : '00:00'}:00Z`,
      ),
    );
  }
}

const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-policies-'));
try {
  await writeContractsRepo(dir, { contracts: CONTRACTS, tenants: 10, perFile: 100 });
  if (DATES !== 'generated') await randomDates(dir, DATES === 'distinct');
  const plain = await readFile(path.join(dir, 'contract-sync.yaml'), 'utf8');
  const rules = tenRules(await readFile(PACK, 'utf8'), RULES);
  await writeFile(path.join(dir, 'with-policies.yaml'), `${plain}${rules.text}`);
  const without: number[] = [];
  const withRules: number[] = [];
  const ratios: number[] = [];
  let findings = '';
  for (let run = 0; run < RUNS; run++) {
    const plainMs = cpuOfValidate(dir, 'contract-sync.yaml').cpuMs;
    const measured = cpuOfValidate(dir, 'with-policies.yaml');
    without.push(plainMs);
    withRules.push(measured.cpuMs);
    ratios.push(measured.cpuMs / plainMs - 1);
    findings = measured.findings;
  }
  console.log(
    JSON.stringify({
      bench: 'policies',
      node: process.version,
      contracts: CONTRACTS,
      rules: RULES,
      onContract: rules.onContract,
      runs: RUNS,
      dates: DATES,
      withoutMs: Math.round(median(without)),
      withMs: Math.round(median(withRules)),
      overheadPercent: percent(median(ratios)),
      spreadPercent: [percent(Math.min(...ratios)), percent(Math.max(...ratios))],
      findings,
      loadAverage: Math.round(loadavg()[0]! * 10) / 10,
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  rmSync(`${dir}.usage.json`, { force: true });
}
