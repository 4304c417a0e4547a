/**
 * What policy rules add to `validate`: the same generated repository (bench/generate-contracts.ts)
 * validated in-process without rules and with the DORA pack of examples/policies/contract-sync.yaml
 * (its on: contract rules run at validate; a fifth of the contracts are DORA, so rules find
 * things). CPU time (process.cpuUsage) as the median of the runs, alternating the two.
 *   BENCH_CONTRACTS=100000 npx tsx bench/policies.ts
 * Prints one JSON line: {"bench":"policies", node, contracts, rules, runs, withoutMs, withMs,
 * overheadPercent, findings}.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../engine/io/clock.ts';
import { runValidate } from '../engine/run/validate.ts';
import { writeContractsRepo } from './generate-contracts.ts';
import { median } from './median.ts';

const CONTRACTS = Number(process.env.BENCH_CONTRACTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PACK = path.join(import.meta.dirname, '../examples/policies/contract-sync.yaml');

async function cpuOfValidate(dir: string, config: string): Promise<{ cpuMs: number; findings: number }> {
  const cpu = process.cpuUsage();
  const outcome = await runValidate({ kind: 'validate', where: { repo: dir, config } }, { cwd: dir, env: {}, clock: systemClock });
  const { user, system } = process.cpuUsage(cpu);
  if (outcome.kind !== 'validated' || outcome.errors.length > 0) throw new Error(`validate failed: ${outcome.kind}`);
  return { cpuMs: (user + system) / 1000, findings: outcome.findings.length };
}

const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-policies-'));
try {
  await writeContractsRepo(dir, { contracts: CONTRACTS, tenants: 10, perFile: 100 });
  const plain = await readFile(path.join(dir, 'contract-sync.yaml'), 'utf8');
  const pack = await readFile(PACK, 'utf8');
  const rules = pack.slice(pack.indexOf('\npolicies:') + 1);
  await writeFile(path.join(dir, 'with-policies.yaml'), `${plain}${rules}`);
  const without: number[] = [];
  const withRules: number[] = [];
  let findings = 0;
  for (let run = 0; run < RUNS; run++) {
    without.push((await cpuOfValidate(dir, 'contract-sync.yaml')).cpuMs);
    const measured = await cpuOfValidate(dir, 'with-policies.yaml');
    withRules.push(measured.cpuMs);
    findings = measured.findings;
  }
  const withoutMs = median(without);
  const withMs = median(withRules);
  const ruleCount = (rules.match(/^ {2}- name: /gm) ?? []).length;
  console.log(
    JSON.stringify({
      bench: 'policies',
      node: process.version,
      contracts: CONTRACTS,
      rules: ruleCount,
      runs: RUNS,
      withoutMs: Math.round(withoutMs),
      withMs: Math.round(withMs),
      overheadPercent: Math.round(((withMs - withoutMs) / withoutMs) * 1000) / 10,
      findings,
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
