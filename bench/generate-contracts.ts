/**
 * Writes a desired-state repository of many contracts (and its contract-sync.yaml), for
 * benchmarks and manual runs:
 *   npx tsx bench/generate-contracts.ts --out DIR [--contracts 10000] [--tenants 10] [--per-file 100] [--style block|flow|import]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { renderDesiredFile } from '../engine/desired/render-file.ts';
import type { ContractFields } from '../engine/model/index.ts';

/** A small deterministic PRNG (mulberry32), so that every run writes the same repository. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A realistic contract using most fields. */
export function generateContract(random: () => number, index: number): ContractFields {
  function int(max: number): number {
    return Math.floor(random() * max);
  }
  const year = 2026 + int(3);
  return {
    Name: `Contract ${index}: ${['cleaning', 'security', 'hosting', 'lease', 'catering'][int(5)]}`,
    Description: `Generated contract number ${index} for benchmarks.`,
    AnnualExpensesAmount: Math.round(random() * 1e7) / 100,
    AnnualExpensesCurrencyId: 978,
    Category: int(10),
    ValidFrom: `${year}-01-01T00:00:00Z`,
    ValidTo: `${year + 1 + int(3)}-12-31T23:59:59Z`,
    SupplierNoticePeriod: { Days: 30 + int(60) },
    Company: [
      { Id: 1 + int(1000), RelationType: 'Supplier' },
      { Id: 1, RelationType: 'Client' },
    ],
    OrganizationalUnit: [{ Id: 1 + int(50), Name: `Unit ${int(50)}` }],
    Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 100 + int(900), Email: `user${int(900)}@example.com` } }],
    Type: [{ Lookup: ['Service', 'ICT', 'Lease'][int(3)]!, EbaCode: null, IsDora: random() < 0.2 }],
  };
}

/** A copy of `contract` with one change, one of five kinds (`variant` 0-4): a known state that differs from it. */
export function differing(contract: ContractFields, variant: number): ContractFields {
  const known = structuredClone(contract);
  switch (variant) {
    case 0:
      known.Name = `${known.Name} (old)`;
      break;
    case 1:
      known.OrganizationalUnit = [{ Id: known.OrganizationalUnit![0]!.Id, Name: 'Renamed unit' }];
      break;
    case 2:
      known.Company = [...known.Company!, { Id: 5000, RelationType: 'Broker' }];
      break;
    case 3:
      delete known.Owner;
      break;
    default:
      known.ValidTo = '2020-12-31T23:59:59Z';
  }
  return known;
}

export interface RepoShape {
  readonly contracts: number;
  readonly tenants: number;
  readonly perFile: number;
  /** How the files are written (default block); the same contracts in every style. */
  readonly style?: RepoStyle;
}

/**
 * block: as `yaml.stringify` writes it; flow: each member (and SupplierNoticePeriod) a one-line
 * flow map, every string double-quoted; import: what `contract-sync import` writes (renderDesiredFile).
 */
export const REPO_STYLES = ['block', 'flow', 'import'] as const;
export type RepoStyle = (typeof REPO_STYLES)[number];

function flowValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `[${value.map(flowValue).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([key, item]) => `${key}: ${flowValue(item)}`)
    .join(', ')}}`;
}

/** The flow style: contracts and fields in block style, members one flow map a line, strings quoted. */
function flowFile(tenant: string, contracts: Readonly<Record<string, ContractFields>>): string {
  const lines = [`tenant: ${JSON.stringify(tenant)}`, 'contracts:'];
  for (const [contractId, fields] of Object.entries(contracts)) {
    lines.push(`  ${JSON.stringify(contractId)}:`);
    for (const [field, value] of Object.entries(fields)) {
      if (!Array.isArray(value)) {
        lines.push(`    ${field}: ${flowValue(value)}`);
        continue;
      }
      lines.push(`    ${field}:`);
      for (const item of value) lines.push(`      - ${flowValue(item)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** One desired-state file of `tenant` in `style`. */
export function contractsFileText(tenant: string, contracts: Readonly<Record<string, ContractFields>>, style: RepoStyle = 'block'): string {
  switch (style) {
    case 'block':
      return stringify({ tenant, contracts });
    case 'flow':
      return flowFile(tenant, contracts);
    case 'import':
      return renderDesiredFile({ tenant, contracts: new Map(Object.entries(contracts)), schema: '../../contracts.schema.json' }).text;
  }
}

/** Writes `contract-sync.yaml` and `contracts/<tenant>/part-N.yaml` files under `dir`. */
export async function writeContractsRepo(dir: string, shape: RepoShape, seed = 42): Promise<void> {
  const random = createRandom(seed);
  const tenants = Array.from({ length: shape.tenants }, (_, i) => `tenant-${String(i).padStart(3, '0')}`);
  const config = {
    api: { baseUrl: 'https://cms.example.com' },
    auth: { url: 'https://login.example.com', realm: 'cms' },
    tenants: Object.fromEntries(
      tenants.map((tenant) => [tenant, { clientId: `cs-${tenant}`, clientSecret: { env: `SECRET_${tenant.replace('-', '_').toUpperCase()}` } }]),
    ),
  };
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'contract-sync.yaml'), stringify(config));
  const perTenant = Math.ceil(shape.contracts / shape.tenants);
  let written = 0;
  for (const tenant of tenants) {
    await mkdir(path.join(dir, 'contracts', tenant), { recursive: true });
    for (let part = 0; part * shape.perFile < perTenant && written < shape.contracts; part++) {
      const contracts: Record<string, ContractFields> = {};
      for (let i = 0; i < shape.perFile && part * shape.perFile + i < perTenant && written < shape.contracts; i++, written++) {
        contracts[`C-${written}`] = generateContract(random, written);
      }
      await writeFile(path.join(dir, 'contracts', tenant, `part-${part}.yaml`), contractsFileText(tenant, contracts, shape.style));
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      contracts: { type: 'string', default: '10000' },
      tenants: { type: 'string', default: '10' },
      'per-file': { type: 'string', default: '100' },
      style: { type: 'string', default: 'block' },
    },
  });
  if (!values.out) throw new TypeError('--out DIR is required');
  const style = REPO_STYLES.find((name) => name === values.style);
  if (style === undefined) throw new TypeError(`--style: expected one of ${REPO_STYLES.join(', ')}, got ${values.style}`);
  const shape = { contracts: Number(values.contracts), tenants: Number(values.tenants), perFile: Number(values['per-file']), style };
  await writeContractsRepo(values.out, shape);
  console.log(`wrote ${shape.contracts} contracts for ${shape.tenants} tenants to ${values.out}`);
}
