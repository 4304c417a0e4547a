/**
 * What bench/shards.ts and bench/auto-shards.ts share: a fleet of generated tenants whose every
 * contract differs from live, and the CPU each worker process used, which it prints as it exits.
 */
import type { ContractSet } from '../engine/desired/types.ts';
import type { ContractFields } from '../engine/model/types.ts';
import { secretEnvOf, secretOf, type Fleet } from '../test/helpers/fleet.ts';
import { createRandom, generateContract } from './generate-contracts.ts';

/** Tenants `PREFIX-000`, … of the given sizes, every contract's desired Name differing from live (by `label`). */
export function createShardFleet(sizes: readonly number[], prefix: string, label: string): Fleet {
  const random = createRandom(12);
  const tenants = sizes.map((_, index) => `${prefix}-${String(index).padStart(3, '0')}`);
  const live = new Map<string, Map<string, ContractFields>>();
  const changed = new Map<string, Set<string>>();
  const desired: ContractSet[] = [];
  for (const [position, tenant] of tenants.entries()) {
    const contracts = new Map<string, ContractFields>();
    for (let index = 0; index < sizes[position]!; index += 1) contracts.set(`${tenant}-${String(index).padStart(4, '0')}`, generateContract(random, index));
    live.set(tenant, contracts);
    changed.set(tenant, new Set(contracts.keys()));
    desired.push({
      tenant,
      file: `contracts/${tenant}.yaml`,
      contracts: [...contracts].map(([id, fields], index) => ({
        id,
        line: index + 3,
        column: 3,
        fields: { ...fields, Name: `${String(fields.Name)} (${label})` },
      })),
    });
  }
  return { tenants, live, desired, changed, env: Object.fromEntries(tenants.map((tenant) => [secretEnvOf(tenant), secretOf(tenant)])) };
}

const CPU_MARK = 'contract-sync-bench-cpu-us=';

/** NODE_OPTIONS that make a worker print the CPU it used as it exits (no spaces or double quotes: NODE_OPTIONS syntax). */
export const REPORT_CPU = `--import=data:text/javascript,process.on(\`exit\`,()=>{const{user:u,system:s}=process.cpuUsage();process.stderr.write(\`\\n${CPU_MARK}\${u+s}\\n\`)})`;

/** The CPU seconds a worker printed (NaN when it did not: killed), and its stderr without that line. */
export function workerCpu(stderr: string): { readonly cpuSeconds: number; readonly stderr: string } {
  const cpu = new RegExp(`\\n${CPU_MARK}(\\d+)\\n`).exec(stderr);
  return { stderr: stderr.replace(cpu?.[0] ?? '', ''), cpuSeconds: Number(cpu?.[1] ?? Number.NaN) / 1e6 };
}
