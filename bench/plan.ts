/**
 * How fast planning is: 100,000 contracts across 100 tenants, about 10% of them changed against
 * their known state, planned in-process (createPlan: diff, fingerprints, changes). For scale, the
 * same desired state is parsed from YAML: plain `yaml.parse` and the validating loader `plan` uses.
 * Prints one JSON line: {"bench":"plan", contracts, tenants, changed, ops, runs, planMs, diffMs,
 * yamlParseMs, loadMs, contractsPerSecond, diffToYamlParse, planToYamlParse, peakRssMiB}; planMs and
 * diffMs are medians of RUNS runs, the YAML figures one run each (they take minutes at 100,000).
 *   npx tsx bench/plan.ts            BENCH_CONTRACTS=100000 BENCH_TENANTS=100 BENCH_RUNS=5
 */
import { parse, stringify } from 'yaml';
import type { ContractSet, DesiredFile } from '../engine/desired/index.ts';
import { validateDesiredState } from '../engine/desired/index.ts';
import type { ContractFields } from '../engine/model/index.ts';
import { createPlan, diffContract } from '../engine/plan/index.ts';
import type { KnownContract, KnownContracts } from '../engine/state/index.ts';
import { createRandom, differing, generateContract } from './generate-contracts.ts';

const CONTRACTS = Number(process.env.BENCH_CONTRACTS ?? 100_000);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PER_FILE = 100;

const random = createRandom(7);

/** The same instant with a +01:00 offset: known state read back in another notation (no change). */
function withOffset(timestamp: string): string {
  const shifted = new Date(Date.parse(timestamp) + 3_600_000).toISOString();
  return `${shifted.slice(0, 19)}+01:00`;
}

/** Known state for a desired contract: equal (often in other notations), or one change in ten. */
function knownFor(desired: ContractFields): { known: ContractFields; changed: boolean } {
  const known = structuredClone(desired);
  if (random() < 0.3) {
    known.ValidFrom = withOffset(known.ValidFrom!);
    known.SupplierNoticePeriod = { ...known.SupplierNoticePeriod, Hours: null };
  }
  if (random() >= 0.1) return { known, changed: false };
  return { known: differing(known, Math.floor(random() * 5)), changed: true };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time<T>(run: () => T): [T, number] {
  const start = performance.now();
  const result = run();
  return [result, performance.now() - start];
}

// Desired state as YAML files (100 contracts each), and the known state derived from it.
const files: DesiredFile[] = [];
const known = new Map<string, Map<string, KnownContract>>();
let expectedChanged = 0;
const perTenant = Math.ceil(CONTRACTS / TENANTS);
for (let t = 0, n = 0; t < TENANTS; t++) {
  const tenant = `tenant-${String(t).padStart(3, '0')}`;
  const tenantKnown = new Map<string, KnownContract>();
  known.set(tenant, tenantKnown);
  for (let part = 0; part * PER_FILE < perTenant && n < CONTRACTS; part++) {
    const contracts: Record<string, ContractFields> = {};
    for (let i = 0; i < PER_FILE && part * PER_FILE + i < perTenant && n < CONTRACTS; i++, n++) {
      const desired = generateContract(random, n);
      contracts[`C-${n}`] = desired;
      const { known: fields, changed } = knownFor(desired);
      tenantKnown.set(`C-${n}`, { fields, from: 'state' });
      if (changed) expectedChanged++;
    }
    files.push({ path: `contracts/${tenant}/part-${part}.yaml`, content: stringify({ tenant, contracts }) });
  }
}
const config = { tenants: Object.fromEntries([...known.keys()].map((tenant) => [tenant, { clientId: tenant, clientSecret: { env: 'X' } }])) };

// YAML parsing is by far the slowest step: it is timed once (plain parse, then the validating
// loader), planning is timed RUNS times after one warm-up run.
const [, yamlParseMs] = time(() => files.map((file) => parse(file.content as string)));
const [loaded, loadMs] = time(() => validateDesiredState(files, config));
if (loaded.errors.length > 0) throw new Error(`generated desired state is invalid: ${loaded.errors[0]!.message}`);
const sets: ContractSet[] = loaded.contractSets;

const samples = { plan: [] as number[], diff: [] as number[] };
let summary = { tenants: 0, contracts: 0, changed: 0, ops: 0 };
for (let run = 0; run < RUNS + 1; run++) {
  const [, diffMs] = time(() => {
    let ops = 0;
    for (const set of sets) {
      const tenantKnown: KnownContracts | undefined = known.get(set.tenant);
      for (const contract of set.contracts) ops += diffContract(tenantKnown?.get(contract.id)?.fields, contract.fields).length;
    }
    return ops;
  });
  const [plan, planMs] = time(() => createPlan(sets, known, { createdAt: '2026-11-22T00:00:00Z', source: { repo: '.', ref: null, commit: null } }));
  summary = plan.summary;
  if (summary.contracts !== CONTRACTS || summary.changed !== expectedChanged) {
    throw new Error(`expected ${CONTRACTS} contracts with ${expectedChanged} changed, got ${JSON.stringify(summary)}`);
  }
  // The first run warms up the JIT and is not counted.
  if (run === 0) continue;
  samples.diff.push(diffMs);
  samples.plan.push(planMs);
}

const planMs = median(samples.plan);
const diffMs = median(samples.diff);
console.log(
  JSON.stringify({
    bench: 'plan',
    contracts: summary.contracts,
    tenants: summary.tenants,
    changed: summary.changed,
    ops: summary.ops,
    runs: RUNS,
    planMs: Math.round(planMs),
    diffMs: Math.round(diffMs),
    yamlParseMs: Math.round(yamlParseMs),
    loadMs: Math.round(loadMs),
    contractsPerSecond: Math.round((summary.contracts / planMs) * 1000),
    diffToYamlParse: Number((diffMs / yamlParseMs).toFixed(3)),
    planToYamlParse: Number((planMs / yamlParseMs).toFixed(3)),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
