/**
 * End-to-end, against the emulator over real HTTP: owners whose user name, email and unit are
 * null, and reads carrying fields and member keys the model does not list (docs/architecture.md
 * section 2). A read with a known field of the wrong type fails that contract before any PATCH of
 * it; a tiny proxy in front of the emulator produces such reads, which the emulator never serves.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRandom } from '../../bench/generate-contracts.ts';
import { createApiClient } from '../../engine/api/client.ts';
import { runApply, type ApplyRunDeps } from '../../engine/pipeline/index.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import type { Config } from '../../engine/config/types.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import { readContract, type ContractFields, type OwnerMember } from '../../engine/model/index.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import type { StateStore } from '../../engine/state/types.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createFleet, fleetConfig, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';

const SOURCE = { repo: '.', ref: null, commit: null };

let emulator: Emulator;
let proxy: Server | undefined;
let stateDir: string;

beforeEach(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'contract-sync-shapes-'));
});

afterEach(async () => {
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  proxy = undefined;
  await emulator?.close();
  await rm(stateDir, { recursive: true, force: true });
});

function deps(config: Config, fleet: Fleet, store: StateStore): ApplyRunDeps {
  return {
    store,
    tokens: createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: ['core:read', 'core:write'], env: fleet.env, logger: silentLogger() }),
    api: createApiClient({
      baseUrl: config.api.baseUrl,
      readPath: '/contract/{id}',
      timeoutMs: 5000,
      userAgent: 'contract-sync/test',
      correlationId: 'run-test',
    }),
    clock: systemClock,
    random: Math.random,
    logger: silentLogger(),
  };
}

function apply(config: Config, fleet: Fleet, store: StateStore, refresh: boolean, runId: string) {
  return runApply({ config, contractSets: fleet.desired, source: SOURCE, refresh, dryRun: false, lockTimeoutMs: 5000, runId }, deps(config, fleet, store));
}

async function patchesOf(tenant: string): Promise<string[]> {
  const log = await requestLog(emulator);
  return log
    .filter((entry) => entry.kind === 'api' && entry.method === 'PATCH' && entry.tenant === tenant)
    .map((entry) => entry.path.slice('/contract/'.length))
    .sort();
}

type Random = () => number;

/** A value, null, or absent (undefined), a third of the time each. */
function maybe<T>(random: Random, value: T): T | null | undefined {
  const roll = random();
  return roll < 1 / 3 ? value : roll < 2 / 3 ? null : undefined;
}

function withoutUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** 1 to 3 owners, unique by (OwnerType.Value, User.Id), whose nullable user fields are set, null or absent at random. */
function randomOwners(random: Random, index: number): OwnerMember[] {
  return Array.from({ length: 1 + Math.floor(random() * 3) }, (_, n) =>
    withoutUndefined({
      OwnerType: { Name: 'Responsible', Value: 1 + n },
      User: {
        Id: 1000 + index,
        Name: maybe(random, `User ${index}`),
        Email: maybe(random, `user${index}@example.com`),
        OrganizationalUnit: { Id: maybe(random, 1 + (index % 7)), Name: maybe(random, `Unit ${index % 7}`) },
      },
    }),
  );
}

/** The same owner written the other way: null where it is absent, absent where it is null. */
function swapNulls(owner: OwnerMember): OwnerMember {
  function swap(map: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
    const copy = { ...map };
    for (const key of keys) {
      if (copy[key] === null) delete copy[key];
      else if (copy[key] === undefined) copy[key] = null;
    }
    return copy;
  }
  const user = swap(owner.User, ['Name', 'Email']);
  user.OrganizationalUnit = swap(owner.User.OrganizationalUnit ?? {}, ['Id', 'Name']);
  return { OwnerType: owner.OwnerType, User: user as OwnerMember['User'] };
}

/**
 * createFleet with random owners: live ones with nulls; the desired ones the same owners with null
 * and absent swapped (equal: no op), except that a changed contract sometimes changes an owner's
 * email or gains an owner whose user fields are all null.
 */
function ownersFleet(tenants: number, perTenant: number): Fleet {
  const base = createFleet(tenants, perTenant, 23);
  const random = createRandom(99);
  const live = new Map<string, Map<string, ContractFields>>();
  const desired: ContractSet[] = [];
  for (const set of base.desired) {
    const liveContracts = new Map<string, ContractFields>();
    const contracts = set.contracts.map((contract, index) => {
      const owners = randomOwners(random, index);
      liveContracts.set(contract.id, { ...base.live.get(set.tenant)!.get(contract.id)!, Owner: owners });
      const wanted = owners.map(swapNulls);
      if (base.changed.get(set.tenant)!.has(contract.id)) {
        if (index % 4 === 1) wanted[0] = { ...wanted[0]!, User: { ...wanted[0]!.User, Email: owners[0]!.User.Email ? null : 'new@example.com' } };
        if (index % 4 === 2)
          wanted.push({ OwnerType: { Name: 'Deputy', Value: 9 }, User: { Id: 9, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } });
      }
      return { ...contract, fields: { ...contract.fields, Owner: wanted } };
    });
    live.set(set.tenant, liveContracts);
    desired.push({ ...set, contracts });
  }
  return { ...base, live, desired };
}

/** A live contract as a service may return it: keys the model does not list at the top, in members and in nested maps. */
function withUnknownKeys(fields: ContractFields, revision: number): Record<string, unknown> {
  return {
    ...fields,
    ContractId: `C-${revision}`,
    Revision: revision,
    Company: (fields.Company ?? []).map((member) => ({ ...member, Name: `Company ${member.Id}` })),
    Owner: (fields.Owner ?? []).map((owner) => ({ OwnerType: { ...owner.OwnerType, Code: 'R' }, User: { ...owner.User, Login: `u${owner.User.Id}` } })),
  };
}

describe('runApply with the published shapes', () => {
  it(
    'applies 3 tenants x 60 contracts with null owner fields and unknown read keys: one PATCH per changed contract, none on the next runs',
    { timeout: 60_000 },
    async () => {
      const fleet = ownersFleet(3, 60);
      emulator = await startEmulator(fleetSeed(fleet));
      let revision = 0;
      for (const [tenant, contracts] of fleet.live) {
        for (const [id, fields] of contracts) {
          const response = await fetch(`${emulator.urls.adminUrl}/contracts/${tenant}/${id}`, {
            method: 'PUT',
            body: JSON.stringify(withUnknownKeys(fields, (revision += 1))),
          });
          expect(response.status).toBe(204);
        }
      }
      const config = fleetConfig(fleet, emulator, { read: true });
      const store = fileStateStore(stateDir);

      const first = await apply(config, fleet, store, true, 'run-1');

      const changedCount = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
      expect(first.report.tenants.flatMap((tenant) => tenant.failures)).toEqual([]);
      expect(first.report.summary).toMatchObject({ changed: changedCount, applied: changedCount, failed: 0 });
      for (const tenant of fleet.tenants) expect(await patchesOf(tenant)).toEqual([...fleet.changed.get(tenant)!].sort());
      const log = await requestLog(emulator);
      expect(log.filter((entry) => entry.kind === 'api' && entry.status !== 200 && entry.status !== 204)).toEqual([]);
      for (const set of fleet.desired) {
        for (const contract of set.contracts) {
          const live = readContract(await liveContract(emulator, set.tenant, contract.id));
          expect(live.issues).toEqual([]);
          expect(diffContract(live.fields, contract.fields), `${set.tenant} ${contract.id}`).toEqual([]);
        }
      }
      // Keys the engine does not know were neither sent nor lost: the service still holds them.
      expect(await liveContract(emulator, 'tenant-a', 'tenant-a-0001')).toMatchObject({ Revision: 2, ContractId: 'C-2' });

      const second = await apply(config, fleet, store, true, 'run-2');
      // From the state store alone: what the first run recorded after each successful PATCH.
      const patched = {
        ...fleet,
        desired: fleet.desired.map((set) => ({ ...set, contracts: set.contracts.filter((c) => fleet.changed.get(set.tenant)!.has(c.id)) })),
      };
      const third = await apply(config, patched, store, false, 'run-3');

      expect(second.report.summary).toMatchObject({ changed: 0, failed: 0 });
      expect(third.report.summary).toMatchObject({ changed: 0, failed: 0 });
      for (const tenant of fleet.tenants) expect(await patchesOf(tenant)).toEqual([...fleet.changed.get(tenant)!].sort());
    },
  );

  it(
    'fails a contract whose read has a known field of the wrong type, naming the field, sends it no PATCH, and applies the others',
    { timeout: 30_000 },
    async () => {
      const fleet = createFleet(1, 6, 3);
      emulator = await startEmulator(fleetSeed(fleet));
      const broken: Record<string, Record<string, unknown>> = { 'tenant-a-0001': { Company: null }, 'tenant-a-0002': { Company: 'x' } };
      const proxyUrl = await startProxy(emulator.urls.baseUrl, broken);
      const config = fleetConfig(fleet, emulator, { read: true });
      const viaProxy: Config = { ...config, api: { ...config.api, baseUrl: proxyUrl } };
      expect([...fleet.changed.get('tenant-a')!].sort()).toEqual(['tenant-a-0001', 'tenant-a-0002', 'tenant-a-0004', 'tenant-a-0005']);

      const { report } = await apply(viaProxy, fleet, fileStateStore(stateDir), true, 'run-broken');

      const failures = report.tenants.flatMap((tenant) => tenant.failures);
      expect(failures.map((failure) => [failure.contractId, failure.outcome, failure.reason])).toEqual([
        [
          'tenant-a-0001',
          'failed',
          'could not read the contract: GET /contract/tenant-a-0001: the contract does not fit the contract model: Company: expected a list, got null',
        ],
        [
          'tenant-a-0002',
          'failed',
          'could not read the contract: GET /contract/tenant-a-0002: the contract does not fit the contract model: Company: expected a list, got "x"',
        ],
      ]);
      expect(report.summary).toMatchObject({ applied: 2, failed: 2 });
      expect(await patchesOf('tenant-a')).toEqual(['tenant-a-0004', 'tenant-a-0005']);
      expect(await liveContract(emulator, 'tenant-a', 'tenant-a-0001')).toEqual(fleet.live.get('tenant-a')!.get('tenant-a-0001'));
    },
  );
});

/** A pass-through proxy to the emulator's API that overwrites fields of some contracts' reads. */
async function startProxy(upstream: string, broken: Readonly<Record<string, Record<string, unknown>>>): Promise<string> {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type', 'accept']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        const body = Buffer.concat(chunks);
        const answer = await fetch(`${upstream}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body.length > 0 ? { body } : {}) });
        let text = await answer.text();
        const id = decodeURIComponent(/^\/contract\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '');
        const overwrite = broken[id];
        if (req.method === 'GET' && answer.status === 200 && overwrite) text = JSON.stringify({ ...(JSON.parse(text) as object), ...overwrite });
        res.writeHead(answer.status, text === '' ? {} : { 'Content-Type': 'application/json' });
        res.end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}
