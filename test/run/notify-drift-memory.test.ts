/**
 * The drift notifications' memory through the run layer (notifyDrift) on the PostgreSQL store: a
 * hundred scheduled runs over one drift tell one message, its resolution one, to a local receiver;
 * the pure decision's own tests cover a drift that changes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/parse.ts';
import type { Config } from '../../engine/config/types.ts';
import type { DriftReport, DriftTenant } from '../../engine/drift/types.ts';
import { systemClock } from '../../engine/io/clock.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { openPostgresStateStore, type PostgresStateStore } from '../../engine/state/postgres/index.ts';
import { notifyDrift } from '../../engine/run/notify-run.ts';
import { postgresDatabaseForFile } from '../helpers/postgres-server.ts';

const database = postgresDatabaseForFile();
let server: Server;
let origin: string;
let store: PostgresStateStore;
const bodies: { event: string; contracts: { id: string }[]; next: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof bodies)[number]);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  store = await openPostgresStateStore({ url: database.url, schema: database.newSchema('drift_memory') });
});

afterAll(async () => {
  await store.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function config(): Config {
  const result = parseConfig(
    'contract-sync.yaml',
    [
      'api: { baseUrl: "https://cms.example.com", read: { path: "/contract/{id}" } }',
      'auth: { url: "https://id.example.com", realm: cms }',
      'tenants:',
      '  acme: { clientId: cs-acme, clientSecret: { env: SECRET_ACME } }',
      'state: { backend: postgres, url: { env: STATE_URL } }',
      'notify:',
      `  - { name: audit-sink, kind: webhook, url: "${origin}/hook", secret: { env: HOOK_SECRET }, on: [drift, drift-resolved] }`,
      '',
    ].join('\n'),
  );
  if (result.config === undefined) throw new Error(JSON.stringify(result.diagnostics));
  return result.config;
}

const SOURCE = { repo: '.', ref: null, commit: 'c'.repeat(40) };

function plan(): PlanDocument {
  function contract(id: string): object {
    return {
      id,
      file: 'contracts/acme.yaml',
      line: 3,
      action: 'noop',
      knownFrom: 'live',
      knownFingerprint: 'sha256:x',
      ops: [],
      changes: [],
    };
  }
  return {
    version: 1,
    createdAt: '2027-03-01T09:00:00.000Z',
    source: SOURCE,
    tenants: [{ tenant: 'acme', contracts: [contract('4711'), contract('4712')] }],
  } as unknown as PlanDocument;
}

function report(name: string | undefined): DriftReport {
  const tenant: DriftTenant = {
    tenant: 'acme',
    managed: 2,
    errors: [],
    contracts:
      name === undefined
        ? []
        : [
            {
              id: '4711',
              file: 'contracts/acme.yaml',
              line: 3,
              drift: [{ field: 'Name', live: name, desired: 'Facility cleaning', lastApplied: 'Facility cleaning', cause: 'changed-outside-git' }],
              ops: [{ op: 'Replace', path: '/Contract/Name', value: 'Facility cleaning' }],
            },
          ],
  };
  return { createdAt: '2027-03-01T09:00:00.000Z', runId: 'run', source: SOURCE, fix: false, tenants: [tenant] } as unknown as DriftReport;
}

describe('the drift notifications memory on PostgreSQL, through the run layer', () => {
  it('tells one message for a hundred runs over one drift, and one for its resolution', async () => {
    const effects = { env: { HOOK_SECRET: 'throwaway-hook-secret' }, cwd: '.', clock: systemClock };
    function scheduled(live: string | undefined): Promise<readonly unknown[]> {
      return notifyDrift({ config: config(), drift: report(live), plan: plan(), store }, effects);
    }

    const warnings: unknown[] = [];
    for (let run = 0; run < 100; run += 1) warnings.push(...(await scheduled('Cleaning (edited by hand)')));
    const afterHundred = bodies.splice(0);
    for (let run = 0; run < 3; run += 1) warnings.push(...(await scheduled(undefined)));
    const afterResolution = bodies.splice(0);

    expect(warnings).toEqual([]);
    expect(afterHundred.map((body) => [body.event, body.contracts.map((contract) => contract.id)])).toEqual([['drift', ['4711']]]);
    expect(afterResolution.map((body) => [body.event, body.contracts.map((contract) => contract.id)])).toEqual([['drift-resolved', ['4711']]]);
    expect(await store.readDriftKeys('acme')).toEqual({});
  });

  it('tells a drift that a standing policy deny keeps drift --fix from correcting: fix or except the finding first', async () => {
    const effects = { env: { HOOK_SECRET: 'throwaway-hook-secret' }, cwd: '.', clock: systemClock };
    const denied: DriftReport = {
      ...report('Cleaning (edited again)'),
      findings: [{ check: 'dora-needs-responsible-owner', action: 'deny', tenant: 'acme', contractId: '4712', message: 'no Responsible owner' }],
    };

    const warnings = await notifyDrift({ config: config(), drift: denied, plan: plan(), store }, effects);

    expect(warnings).toEqual([]);
    expect(bodies.splice(0).map((body) => [body.event, body.next])).toEqual([
      [
        'drift',
        'Policy rule dora-needs-responsible-owner denies, so `contract-sync drift --fix` would send nothing. Change the contract in git so that the rule holds, ' +
          'or add an exception for the finding under policyExceptions in the config (an owner, a reason, an expiry date), ' +
          'then run `contract-sync drift --fix`. Or change the desired state in git to keep the edit.',
      ],
    ]);
  });
});
