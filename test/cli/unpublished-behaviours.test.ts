/**
 * What the service leaves unpublished, end to end against the emulator: a read that wraps the
 * contract, timestamps without an offset, a required content type, a conflict status other than
 * 409 and ContractIds of any shape (issue: ready for the real service). With every behaviour on and
 * configured, apply converges, a second apply sends nothing and drift finds nothing; with one on and
 * not configured, each contract fails with a message naming the setting, and nothing is applied.
 */
import { writeFile } from 'node:fs/promises';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createApiClient } from '../../engine/api/client.ts';
import { applyContract } from '../../engine/apply/apply-contract.ts';
import { retryBudget } from '../../engine/apply/retry-policy.ts';
import { TenantLane } from '../../engine/apply/tenant-lane.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import type { ContractFields, Op } from '../../engine/model/types.ts';
import { memoryStateStore } from '../../engine/state/memory-store.ts';
import { startEmulator, type Emulator, type Seed, type SeedBehaviours } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { requestLog } from '../helpers/fleet.ts';

const SECRET = 'throwaway-secret-acme-0123456789';
const ENV = { ACME_SECRET: SECRET };

/** Ids a service could have: every one is percent-encoded in each URL. */
const IDS = ['C/2024/001', 'A B', 'Vertrag-ä', '50%?#x', '4711'] as const;

const LIVE: ContractFields = {
  Name: 'Facility cleaning',
  ValidFrom: '2027-01-01T00:00:00Z',
  Company: [{ Id: 12, RelationType: 'Supplier' }],
  OrganizationalUnit: [{ Id: 3, Name: 'Facility Management' }],
  Type: [{ Lookup: 'Service', EbaCode: null, IsDora: false }],
};

/** Renamed, a unit added, a Type changed, an owner added; ValidFrom the same instant as the naive one read. */
const DESIRED: ContractFields = {
  Name: 'Facility cleaning 2027',
  ValidFrom: '2027-01-01T00:00:00.000Z',
  Company: [{ Id: 12, RelationType: 'Supplier' }],
  OrganizationalUnit: [
    { Id: 3, Name: 'Facility Management' },
    { Id: 4, Name: 'Cleaning' },
  ],
  Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 501 } }],
  Type: [{ Lookup: 'Service', IsDora: true }],
};

const EVERY_BEHAVIOUR: Required<SeedBehaviours> = {
  readEnvelope: 'Contract',
  naiveTimestamps: true,
  patchContentType: 'application/json-patch+json',
  conflictStatus: 422,
};

const EVERY_SETTING = {
  read: '{ path: "/contract/{id}", pointer: /Contract, timestamps: utc }',
  patch: '{ contentType: application/json-patch+json }',
  conflictStatuses: '[409, 422]',
};

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

function seed(behaviours: SeedBehaviours): Seed {
  return {
    realm: 'cms',
    rateLimit: { requestsPerSecond: 10_000, burst: 10_000 },
    behaviours,
    tenants: {
      acme: {
        clients: [{ clientId: 'cs-acme', secret: SECRET, scopes: ['core:read', 'core:write'] }],
        contracts: Object.fromEntries(IDS.map((id) => [id, LIVE])),
      },
    },
  };
}

function config(running: Emulator, settings: Partial<typeof EVERY_SETTING>): string {
  const api = [`  baseUrl: "${running.urls.baseUrl}"`, `  read: ${settings.read ?? '{ path: "/contract/{id}" }'}`];
  if (settings.patch) api.push(`  patch: ${settings.patch}`);
  if (settings.conflictStatuses) api.push(`  conflictStatuses: ${settings.conflictStatuses}`);
  return [
    'api:',
    ...api,
    `auth: { url: "${running.urls.authUrl}", realm: cms }`,
    'tenants:',
    '  acme:',
    '    clientId: cs-acme',
    '    clientSecret: { env: ACME_SECRET }',
    '',
  ].join('\n');
}

function desiredFile(contracts: Readonly<Record<string, ContractFields>>): string {
  return stringify({ tenant: 'acme', contracts });
}

async function setup(behaviours: SeedBehaviours, settings: Partial<typeof EVERY_SETTING>) {
  const running = await startEmulator(seed(behaviours));
  emulator = running;
  const { dir, cleanup } = await writeTree({
    'contract-sync.yaml': config(running, settings),
    'contracts/acme.yaml': desiredFile(Object.fromEntries(IDS.map((id) => [id, DESIRED]))),
  });
  cleanups.push(cleanup);
  return { dir, running };
}

async function live(running: Emulator, id: string): Promise<ContractFields> {
  return (await (await fetch(`${running.urls.adminUrl}/contracts/acme/${encodeURIComponent(id)}`)).json()) as ContractFields;
}

async function putLive(running: Emulator, id: string, fields: ContractFields): Promise<void> {
  const response = await fetch(`${running.urls.adminUrl}/contracts/acme/${encodeURIComponent(id)}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(fields),
  });
  if (!response.ok) throw new Error(`PUT refused: ${response.status}`);
}

async function patches(running: Emulator): Promise<{ path: string; status: number | null }[]> {
  return (await requestLog(running)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').map(({ path, status }) => ({ path, status }));
}

/** What the service should hold once DESIRED is applied: unset nullable member fields sent as null. */
const CONVERGED = {
  Name: 'Facility cleaning 2027',
  ValidFrom: '2027-01-01T00:00:00Z',
  Company: [{ Id: 12, RelationType: 'Supplier' }],
  OrganizationalUnit: [
    { Id: 3, Name: 'Facility Management' },
    { Id: 4, Name: 'Cleaning' },
  ],
  Type: [{ Lookup: 'Service', EbaCode: null, IsDora: true }],
  Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 501, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } }],
};

describe('every unpublished behaviour at once, each configured', () => {
  it('apply converges, a second apply sends nothing, drift finds nothing; a 422 conflict is settled by a read and one re-plan', async () => {
    const { dir, running } = await setup(EVERY_BEHAVIOUR, EVERY_SETTING);

    const first = await runCli(['apply'], dir, ENV);
    const sentFirst = await patches(running);
    const second = await runCli(['apply'], dir, ENV);
    const drift = await runCli(['drift', '--detailed-exitcode'], dir, ENV);

    expect(first.stderr).not.toMatch(/"level":(50|60)/);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Apply: 5 contracts changed');
    // One PATCH per contract, each id percent-encoded into one path segment, none with a Replace of ValidFrom.
    expect(sentFirst.map((entry) => `${entry.path} ${entry.status}`).sort()).toEqual(IDS.map((id) => `/contract/${encodeURIComponent(id)} 204`).sort());
    for (const id of IDS) expect(await live(running, id)).toEqual(CONVERGED);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Apply: nothing to do');
    expect(await patches(running)).toEqual(sentFirst);
    expect(drift.code).toBe(0);
    expect(drift.stdout).toMatch(/No drift/);

    // Someone adds in the UI the member a new desired edit adds: the state store does not know it,
    // the Add is answered 422 (a configured conflict status), read and re-planned once.
    const edited = { ...DESIRED, Company: [...DESIRED.Company!, { Id: 13, RelationType: 'Client' }] };
    await writeFile(`${dir}/contracts/acme.yaml`, desiredFile({ ...Object.fromEntries(IDS.map((id) => [id, DESIRED])), '4711': edited }));
    await putLive(running, '4711', { ...CONVERGED, Company: [...CONVERGED.Company, { Id: 13, RelationType: 'Client' }] } as ContractFields);

    const settled = await runCli(['apply', '--no-refresh', '--target', 'acme/4711'], dir, ENV);

    expect(settled.code).toBe(0);
    expect((await patches(running)).slice(sentFirst.length)).toEqual([{ path: '/contract/4711', status: 422 }]);
    expect(settled.stdout).toContain('Apply: 1 contract changed');
  });
});

describe('each unpublished behaviour on, and not configured: a clear error per contract, nothing applied', () => {
  it('a read that wraps the contract: names the pointer and the keys found, and no PATCH is sent', async () => {
    const { dir, running } = await setup({ readEnvelope: 'Contract' }, {});

    const run = await runCli(['apply'], dir, ENV);

    expect(run.code).toBe(1);
    for (const id of IDS) {
      expect(run.stdout).toContain(`acme ${id} (contracts/acme.yaml:`);
      expect(run.stdout).toContain(`GET /contract/${encodeURIComponent(id)}: no contract field at "" (keys: Contract, Links): set api.read.pointer`);
    }
    expect(await patches(running)).toEqual([]);
  });

  it('timestamps without an offset: names the field and the value, and no PATCH is sent', async () => {
    const { dir, running } = await setup({ naiveTimestamps: true }, {});

    const run = await runCli(['apply'], dir, ENV);

    expect(run.code).toBe(1);
    for (const id of IDS)
      expect(run.stdout).toContain(
        `GET /contract/${encodeURIComponent(id)}: ValidFrom "2027-01-01T00:00:00" has no UTC offset: set api.read.timestamps to utc to read such timestamps as UTC`,
      );
    expect(await patches(running)).toEqual([]);
  });

  it('a required content type: the 415 names api.patch.contentType, is not retried, and nothing is applied', async () => {
    const { dir, running } = await setup({ patchContentType: 'application/json-patch+json' }, {});

    const run = await runCli(['apply'], dir, ENV);

    expect(run.code).toBe(1);
    for (const id of IDS) {
      expect(run.stdout).toContain(
        `PATCH /contract/${encodeURIComponent(id)}: 415 Unsupported Media Type: {"error":"unsupported_media_type","message":"send the operations as Content-Type: application/json-patch+json"}; the service refuses Content-Type application/json: set api.patch.contentType (it accepts application/json-patch+json)`,
      );
      expect(await live(running, id)).toEqual(LIVE);
    }
    expect((await patches(running)).map((entry) => entry.status)).toEqual(IDS.map(() => 415));
  });

  it('a conflict status other than 409: the contract fails naming the status and api.conflictStatuses, and nothing is applied', async () => {
    const { dir, running } = await setup({ conflictStatus: 422 }, {});
    expect((await runCli(['apply'], dir, ENV)).code).toBe(0);
    const before = (await patches(running)).length;
    await putLive(running, '4711', { ...CONVERGED, Company: [] } as ContractFields);
    await putLive(running, 'A B', { ...CONVERGED, Company: [] } as ContractFields);
    // The desired state now drops Company 12, which the service no longer holds: the Remove conflicts.
    await writeFile(`${dir}/contracts/acme.yaml`, desiredFile(Object.fromEntries(IDS.map((id) => [id, { ...DESIRED, Company: [] }]))));

    const run = await runCli(['apply', '--no-refresh', '--target', 'acme/4711', '--target', 'acme/A B'], dir, ENV);

    expect(run.code).toBe(1);
    for (const id of ['4711', 'A B']) {
      expect(run.stdout).toContain(`acme ${id} (contracts/acme.yaml:`);
      expect(run.stdout).toMatch(
        new RegExp(
          `PATCH /contract/${encodeURIComponent(id)}: 422 Unprocessable Entity: .*if the service answers 422 when its members differ from what contract-sync knew, add 422 to api\\.conflictStatuses`,
        ),
      );
      expect(await live(running, id)).toEqual({ ...CONVERGED, Company: [] });
    }
    expect((await patches(running)).slice(before).map((entry) => entry.status)).toEqual([422, 422]);
  });
});

describe('a planner defect: an op outside the patch schema', () => {
  it('is never sent to the service, and the contract fails as an internal error naming the ops', async () => {
    const running = await startEmulator(seed({}));
    emulator = running;
    const tokens = createTenantTokens({
      auth: { url: running.urls.authUrl, realm: 'cms' },
      tenants: { acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' } } },
      scopes: ['core:write'],
      env: ENV,
    });
    const lane = new TenantLane({
      tenant: 'acme',
      requestsPerSecond: 1000,
      concurrency: 1,
      budget: retryBudget(3),
      inFlight: new PQueue({ concurrency: 1 }),
      tokens,
      clock: { now: Date.now, sleep: async () => undefined },
      random: () => 0.5,
      logger: silentLogger(),
    });
    const api = createApiClient({ baseUrl: running.urls.baseUrl, timeoutMs: 5000, userAgent: 'contract-sync/test', correlationId: 'run-1' });
    const store = memoryStateStore();
    const ops: Op[] = [
      { op: 'Replace', path: '/Contract/Name', value: 'x' },
      { op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: 4 } },
    ];
    const collections = { Company: 'authoritative', OrganizationalUnit: 'authoritative', Owner: 'authoritative', Type: 'authoritative' } as const;

    const outcome = await applyContract(
      { contractId: 'C/2024/001', ops, known: LIVE, knownIsLive: false, desired: DESIRED },
      { lane, api, store, collections, commit: null, now: Date.now, maxReconciles: 2 },
    );

    expect(outcome).toMatchObject({
      outcome: 'failed',
      status: null,
      reason: expect.stringContaining(
        'internal error: the planned patch does not fit the published patch schema (specs/patch.schema.json), so it was not sent: op #1: value: missing required field "Name"',
      ),
    });
    expect(await patches(running)).toEqual([]);
    expect((await requestLog(running)).filter((entry) => entry.kind === 'api')).toEqual([]);
    expect(await live(running, 'C/2024/001')).toEqual(LIVE);
  });
});
