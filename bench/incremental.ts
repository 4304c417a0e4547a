/**
 * Two measures of incremental runs, in one script (BENCH_PART=apply or plan runs one of them).
 *
 * 1. What incremental apply saves: `contract-sync apply --dry-run --no-refresh` on a repository of
 * 20,000 contracts (10 tenants, files of 100), every one of them applied at the previous commit,
 * after a commit that edits one contract in one file; once as it runs by default (incremental),
 * once with --full. In-process, no network (a dry run from the state store sends nothing), so the
 * figures are reading git, YAML, validation, the state store and planning.
 * Prints one JSON line: {"bench":"incremental", contracts, files, runs, fullMs, incrementalMs,
 * ratio, plannedFull, plannedIncremental}; the times are medians of RUNS runs.
 *
 * 2. A pull request's plan against start-up: the built CLI (`npm run build` first), as CI runs it,
 * `node bin/contract-sync.js --version` and `plan --ref HEAD --base main` on a branch that edits
 * one contract of one file, on a repository of BENCH_PLAN_CONTRACTS contracts (10 tenants, files
 * of 100) whose file state store holds every contract and each tenant's last applied commit,
 * written through the StateStore API. Rounds interleave the two commands. Target: the plan at
 * most 3x --version. Prints {"bench":"incremental-plan", contracts, files, runs, versionMs,
 * planMs, ratio, target, met}.
 *   npx tsx bench/incremental.ts      BENCH_CONTRACTS=20000 BENCH_RUNS=5
 *   BENCH_PART=plan BENCH_PLAN_CONTRACTS=100000 npx tsx bench/incremental.ts
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { planningFingerprint } from '../engine/apply/incremental.ts';
import { main } from '../engine/cli/main.ts';
import { readConfig } from '../engine/config/index.ts';
import { loadDesiredState, type DesiredStateResult } from '../engine/desired/index.ts';
import { fingerprint } from '../engine/model/index.ts';
import { fileStateStore } from '../engine/state/index.ts';
import { writeContractsRepo } from './generate-contracts.ts';

const CONTRACTS = Number(process.env.BENCH_CONTRACTS ?? 20_000);
const PLAN_CONTRACTS = Number(process.env.BENCH_PLAN_CONTRACTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PART = process.env.BENCH_PART ?? 'all';
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/contract-sync.js');
const TENANTS = 10;
const exec = promisify(execFile);

async function git(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * A repository of `contracts` contracts committed on main, and the file state store a finished
 * apply of that commit leaves: every contract and each tenant's last applied commit, written
 * through the StateStore API (setup, not the subject).
 */
async function seedAppliedRepo(dir: string, contracts: number): Promise<{ desired: DesiredStateResult }> {
  await writeContractsRepo(dir, { contracts, tenants: TENANTS, perFile: 100 });
  await writeFile(path.join(dir, '.gitignore'), '.contract-sync/\n');
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'desired state');
  const applied = await git(dir, 'rev-parse', 'HEAD');
  const { config } = await readConfig(path.join(dir, 'contract-sync.yaml'));
  const desired = await loadDesiredState(dir, config!);
  const store = fileStateStore(path.join(dir, '.contract-sync/state'));
  for (const set of desired.contractSets) {
    await Promise.all(
      set.contracts.map((contract) =>
        store.writeContract(set.tenant, {
          contractId: contract.id,
          fields: contract.fields,
          fingerprint: fingerprint(contract.fields),
          appliedAt: '2026-11-01T00:00:00.000Z',
          commit: applied,
        }),
      ),
    );
  }
  for (const tenant of Object.keys(config!.tenants)) {
    await store.writeRun(tenant, {
      lastAppliedCommit: applied,
      planningFingerprint: planningFingerprint(config!, tenant),
      pending: [],
      updatedAt: '2026-11-01T00:00:00.000Z',
    });
  }
  await store.close();
  return { desired };
}

/** Runs `contract-sync ...args` in-process; returns how many contracts its plan listed and the wall time. */
async function timedApply(dir: string, args: readonly string[]): Promise<{ ms: number; planned: number }> {
  let stdout = '';
  const start = performance.now();
  const code = await main(['apply', '--dry-run', '--no-refresh', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    env: { PATH: process.env.PATH ?? '', CONTRACT_SYNC_LOG_LEVEL: 'silent' },
    cwd: dir,
  });
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`apply exited ${code}:\n${stdout}`);
  // The plan's headline: "1 of 20000 contracts in 10 tenants to update, ...", or with only changed
  // contracts planned (incremental), "1 contract in 1 tenant to update, ...".
  const planned = Number(/^(?:\d+ of )?(\d+) contracts? in/m.exec(stdout)?.[1] ?? Number.NaN);
  return { ms, planned };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function benchApply(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-'));
  try {
    const { desired } = await seedAppliedRepo(dir, CONTRACTS);

    const edited = path.join(dir, 'contracts/tenant-003/part-4.yaml');
    await writeFile(edited, (await readFile(edited, 'utf8')).replace(/Name: .*/, 'Name: Edited in the second commit'));
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-q', '-m', 'edit one contract');

    const full: number[] = [];
    const incremental: number[] = [];
    let plannedFull = 0;
    let plannedIncremental = 0;
    for (let run = 0; run < RUNS; run++) {
      const a = await timedApply(dir, ['--full']);
      const b = await timedApply(dir, []);
      full.push(a.ms);
      incremental.push(b.ms);
      plannedFull = a.planned;
      plannedIncremental = b.planned;
    }
    const fullMs = median(full);
    const incrementalMs = median(incremental);
    console.log(
      JSON.stringify({
        bench: 'incremental',
        contracts: CONTRACTS,
        files: desired.contractSets.length,
        runs: RUNS,
        fullMs: Math.round(fullMs),
        incrementalMs: Math.round(incrementalMs),
        ratio: Number((fullMs / incrementalMs).toFixed(1)),
        plannedFull,
        plannedIncremental,
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One run of the built CLI in `dir`; its wall time and stdout. */
function timeCli(dir: string, args: readonly string[]): { ms: number; stdout: string } {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', CONTRACT_SYNC_LOG_LEVEL: 'silent' },
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`contract-sync ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return { ms, stdout: result.stdout.toString() };
}

async function benchPlan(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist/engine/cli/main.js'))) throw new Error('no build in dist/: run `npm run build` first');
  const dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-bench-'));
  try {
    const { desired } = await seedAppliedRepo(dir, PLAN_CONTRACTS);

    await git(dir, 'checkout', '-q', '-b', 'pull-request');
    const edited = path.join(dir, 'contracts/tenant-003/part-0.yaml');
    await writeFile(edited, (await readFile(edited, 'utf8')).replace(/Name: .*/, 'Name: Edited in the pull request'));
    await git(dir, 'commit', '-q', '-am', 'edit one contract');

    const planArgs = ['plan', '--ref', 'HEAD', '--base', 'main'];
    const check = timeCli(dir, planArgs).stdout;
    if (!check.includes('Planned the contracts changed since the last applied commit') || !check.includes('1 contract in 1 tenant to update')) {
      throw new Error(`the plan is not the incremental one expected:\n${check.slice(0, 2000)}`);
    }
    timeCli(dir, ['--version']);
    const version: number[] = [];
    const plan: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      version.push(timeCli(dir, ['--version']).ms);
      plan.push(timeCli(dir, planArgs).ms);
    }
    const versionMs = median(version);
    const planMs = median(plan);
    const ratio = planMs / versionMs;
    console.log(
      JSON.stringify({
        bench: 'incremental-plan',
        contracts: PLAN_CONTRACTS,
        files: desired.contractSets.length,
        runs: RUNS,
        versionMs: Math.round(versionMs),
        planMs: Math.round(planMs),
        ratio: Number(ratio.toFixed(2)),
        target: 3,
        met: ratio <= 3,
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (PART === 'all' || PART === 'apply') await benchApply();
if (PART === 'all' || PART === 'plan') await benchPlan();
