/**
 * A fleet for end-to-end apply tests: tenants of generated contracts, seeded live in the emulator,
 * a desired state that changes two in three of them, and the engine config pointing at it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { stringify } from 'yaml';
import { createRandom, generateContract } from '../../bench/generate-contracts.ts';
import type { Clock } from '../../engine/io/clock.ts';
import { parseConfig } from '../../engine/config/parse.ts';
import type { Config } from '../../engine/config/types.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import type { StateStore } from '../../engine/state/types.ts';
import type { Emulator, RequestLogEntry, Seed } from '../../emulator/index.ts';

export interface Fleet {
  readonly tenants: readonly string[];
  /** What the service holds before the run (also what the state store says was last applied). */
  readonly live: ReadonlyMap<string, ReadonlyMap<string, ContractFields>>;
  readonly desired: readonly ContractSet[];
  /** ContractIds whose desired state differs from live, by tenant. */
  readonly changed: ReadonlyMap<string, ReadonlySet<string>>;
  readonly env: Record<string, string>;
}

export function secretEnvOf(tenant: string): string {
  return `SECRET_${tenant.toUpperCase().replace(/-/g, '_')}`;
}

export function secretOf(tenant: string): string {
  return `throwaway-secret-${tenant}-0123456789`;
}

/** Changes a generated contract the way people edit them: a scalar, a member added, one removed. */
function edit(fields: ContractFields, index: number): ContractFields {
  const copy = structuredClone(fields) as Record<string, unknown>;
  copy.Name = `${String(fields.Name)} (renewed)`;
  if (index % 2 === 0) copy.Company = [...(fields.Company ?? []).slice(1), { Id: 5000 + index, RelationType: 'Partner' }];
  if (index % 5 === 0) copy.SupplierNoticePeriod = { Days: 90 };
  return copy as ContractFields;
}

export function createFleet(tenantCount: number, perTenant: number, seed = 7): Fleet {
  const random = createRandom(seed);
  const tenants = Array.from({ length: tenantCount }, (_, index) => `tenant-${String.fromCharCode(97 + index)}`);
  const live = new Map<string, Map<string, ContractFields>>();
  const changed = new Map<string, Set<string>>();
  const desired: ContractSet[] = [];
  for (const tenant of tenants) {
    const liveContracts = new Map<string, ContractFields>();
    const changedIds = new Set<string>();
    const contracts: ContractSet['contracts'][number][] = [];
    for (let index = 0; index < perTenant; index += 1) {
      // Ids are unique across tenants, so that a request for another tenant's contract would show.
      const id = `${tenant}-${String(index).padStart(4, '0')}`;
      const fields = generateContract(random, index);
      liveContracts.set(id, fields);
      const wanted = index % 3 === 0 ? fields : edit(fields, index);
      if (index % 3 !== 0) changedIds.add(id);
      contracts.push({ id, line: index + 3, column: 3, fields: wanted });
    }
    live.set(tenant, liveContracts);
    changed.set(tenant, changedIds);
    desired.push({ tenant, file: `contracts/${tenant}.yaml`, contracts });
  }
  const env = Object.fromEntries(tenants.map((tenant) => [secretEnvOf(tenant), secretOf(tenant)]));
  return { tenants, live, desired, changed, env };
}

export function fleetSeed(fleet: Fleet, rateLimit = { requestsPerSecond: 10_000, burst: 10_000 }): Seed {
  return {
    realm: 'cms',
    tokenTtlSeconds: 3600,
    rateLimit,
    tenants: Object.fromEntries(
      fleet.tenants.map((tenant) => [
        tenant,
        {
          clients: [{ clientId: `cs-${tenant}`, secret: secretOf(tenant), scopes: ['core:read', 'core:write'] }],
          contracts: Object.fromEntries(fleet.live.get(tenant)!),
        },
      ]),
    ),
  } satisfies Seed;
}

export interface FleetConfigOptions {
  readonly read?: boolean;
  readonly rate?: string;
  readonly retry?: string;
  /** state.path, for a config written into a repository. */
  readonly statePath?: string;
}

/** The engine config for `fleet` against `emulator`, as YAML. */
export function fleetConfigYaml(fleet: Fleet, emulator: Emulator, extra: FleetConfigOptions = {}): string {
  const lines = [
    `api: { baseUrl: "${emulator.urls.baseUrl}"${extra.read ? ', read: { path: "/contract/{id}" }' : ''} }`,
    `auth: { url: "${emulator.urls.authUrl}", realm: ${emulator.urls.realm} }`,
    'tenants:',
    ...fleet.tenants.flatMap((tenant) => [`  ${tenant}:`, `    clientId: cs-${tenant}`, `    clientSecret: { env: ${secretEnvOf(tenant)} }`]),
    `rate: ${extra.rate ?? '{ requestsPerSecond: 2000, concurrency: 8, maxInFlight: 16 }'}`,
    `retry: ${extra.retry ?? '{ maxAttempts: 5 }'}`,
    ...(extra.statePath ? [`state: { backend: file, path: ${extra.statePath} }`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

export function fleetConfig(fleet: Fleet, emulator: Emulator, extra: FleetConfigOptions = {}): Config {
  const result = parseConfig('contract-sync.yaml', fleetConfigYaml(fleet, emulator, extra));
  if (!result.config) throw new Error(`fleet config is invalid: ${JSON.stringify(result.diagnostics)}`);
  return result.config;
}

/** The files of a desired-state repository for `fleet`: its config and one YAML file per tenant. */
export function fleetRepoFiles(fleet: Fleet, emulator: Emulator, extra: FleetConfigOptions = {}): Record<string, string> {
  const files: Record<string, string> = { 'contract-sync.yaml': fleetConfigYaml(fleet, emulator, extra) };
  for (const set of fleet.desired) {
    files[set.file] = stringify({ tenant: set.tenant, contracts: Object.fromEntries(set.contracts.map((contract) => [contract.id, contract.fields])) });
  }
  return files;
}

export async function requestLog(emulator: Emulator): Promise<RequestLogEntry[]> {
  return (await (await fetch(`${emulator.urls.adminUrl}/requests`)).json()) as RequestLogEntry[];
}

export async function liveContract(emulator: Emulator, tenant: string, id: string): Promise<ContractFields> {
  return (await (await fetch(`${emulator.urls.adminUrl}/contracts/${tenant}/${id}`)).json()) as ContractFields;
}

export async function setFaults(emulator: Emulator, faults: unknown): Promise<void> {
  const response = await fetch(`${emulator.urls.adminUrl}/faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(faults),
  });
  if (!response.ok) throw new Error(`faults refused: ${response.status} ${await response.text()}`);
}

/**
 * Time running `factor` times faster than the wall clock, for the engine's waits only: a
 * Retry-After of 1 s costs 1000/factor ms of test time, and the engine still sees 1 s pass.
 */
export function fastClock(factor: number): Clock {
  const start = Date.now();
  return {
    now: () => start + (Date.now() - start) * factor,
    sleep: (ms) => delay(Math.max(0, ms) / factor),
  };
}

/** A file state store in `dir` as a previous run left it: every contract of the fleet recorded as it is live. */
export async function storeMatchingLive(dir: string, fleet: Fleet): Promise<StateStore> {
  const store = fileStateStore(dir);
  for (const [tenant, contracts] of fleet.live) {
    for (const [contractId, fields] of contracts) {
      await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-01-01T00:00:00.000Z', commit: null });
    }
  }
  return store;
}
