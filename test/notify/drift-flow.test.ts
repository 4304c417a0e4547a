/**
 * The whole path a scheduled drift run will take, short of the run itself: an edit in the
 * emulator's "UI" (admin PUT with X-Actor) recorded as an audit event, read through the engine's
 * configured reader with an audit:read token, attributed, deduplicated over three runs (the drift,
 * its repeat, its resolution), and delivered to local receivers standing in for Slack, Teams and a
 * webhook (the webhook's signature verified as a receiver would).
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../emulator/index.ts';
import { createAuditReader } from '../../engine/api/audit.ts';
import { createTenantTokens } from '../../engine/auth/index.ts';
import type { NotifyChannel } from '../../engine/config/types.ts';
import { attributeDrift } from '../../engine/drift/attribution.ts';
import type { DriftTenant } from '../../engine/drift/types.ts';
import {
  channelsFor,
  decideDriftNotifications,
  deliver,
  driftNotifications,
  driftSightings,
  prepareDelivery,
  type DeliveryResult,
  type DriftMemory,
} from '../../engine/notify/index.ts';
import { authOf, ENV, TENANTS } from '../auth/helpers.ts';
import { admin, SEED, start } from '../emulator/helpers.ts';

const HOOK_SECRET = 'throwaway-hook-secret';

let emulator: Emulator;
let receiver: Server;
let origin: string;
const received: { path: string; body: string; signature: string | undefined }[] = [];

beforeAll(async () => {
  const acme = {
    ...SEED.tenants.acme,
    clients: [{ ...SEED.tenants.acme.clients[0], scopes: ['core:read', 'core:write', 'audit:read'] }, SEED.tenants.acme.clients[1]],
  };
  emulator = await start({ ...SEED, tenants: { ...SEED.tenants, acme } });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
        signature: req.headers['x-contract-sync-signature'] as string | undefined,
      });
      res.writeHead(req.url === '/teams' ? 202 : 200).end(req.url === '/slack' ? 'ok' : '');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await emulator.close();
});

describe('a drift you hear about', () => {
  it('is sent once to each channel, attributed to the UI user, not repeated, and resolved once', async () => {
    const channels: NotifyChannel[] = [
      { name: 'platform-team', kind: 'slack', url: { env: 'SLACK_URL' }, on: ['drift', 'drift-resolved'], tenants: ['acme'] },
      { name: 'contract-owners', kind: 'teams', url: { env: 'TEAMS_URL' }, on: ['drift'] },
      { name: 'audit-sink', kind: 'webhook', url: `${origin}/hook`, secret: { env: 'HOOK_SECRET' }, on: ['drift', 'drift-resolved'] },
    ];
    const sources = { env: { SLACK_URL: `${origin}/slack`, TEAMS_URL: `${origin}/teams`, HOOK_SECRET }, readFile: () => Promise.reject(new Error('unused')) };
    const reader = createAuditReader({
      baseUrl: emulator.urls.baseUrl,
      audit: { path: '/audit/events?contractId={id}', pointer: '/events', fields: { actor: '/actor', time: '/time', contractFields: '/fields', id: '/id' } },
      timeoutMs: 5000,
      userAgent: 'contract-sync/test',
      correlationId: 'run-1',
    });
    const auditTokens = createTenantTokens({ auth: authOf(emulator), tenants: TENANTS, scopes: ['audit:read'], env: ENV });
    // Someone renames 4711 in the service's UI.
    await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Actor': 'jane@example.com' },
      body: JSON.stringify({ Name: 'Cleaning (edited by hand)', Company: [{ Id: 12, RelationType: 'Supplier' }] }),
    });
    const drifted: DriftTenant = {
      tenant: 'acme',
      managed: 2,
      errors: [],
      contracts: [
        {
          id: '4711',
          file: 'contracts/acme/facilities.yaml',
          line: 4,
          drift: [
            { field: 'Name', live: 'Cleaning (edited by hand)', desired: 'Facility cleaning', lastApplied: 'Facility cleaning', cause: 'changed-outside-git' },
          ],
          ops: [{ op: 'Replace', path: '/Contract/Name', value: 'Facility cleaning' }],
        },
      ],
    };
    const clean: DriftTenant = { ...drifted, contracts: [] };
    let memory: DriftMemory = {};

    async function scheduledRun(report: DriftTenant): Promise<DeliveryResult[]> {
      const decision = decideDriftNotifications({ previous: memory, drifted: driftSightings(report), checked: { acme: ['4711', '4712'] } });
      memory = decision.next;
      const token = await auditTokens.get('acme');
      const attributions = Object.fromEntries(
        await Promise.all(
          report.contracts.map(async (contract) => {
            const { events } = await reader.read(contract.id, token);
            return [contract.id, attributeDrift([...new Set(contract.drift.map((item) => item.field))], events, { ownActors: ['acme-rw'] })] as const;
          }),
        ),
      );
      const notifications = driftNotifications({ tenant: report, decision, attributions, time: new Date().toISOString() });
      return Promise.all(
        notifications.flatMap((notification) =>
          channelsFor(channels, notification).map(async (channel) => {
            const ready = await prepareDelivery(channel, notification, sources);
            if (!ready.ok) throw new Error(ready.warning);
            return deliver(ready.delivery, { fetch: globalThis.fetch, now: Date.now, sleep: async () => undefined, random: () => 0.5 });
          }),
        ),
      );
    }

    const first = await scheduledRun(drifted);
    const afterFirst = received.splice(0);
    const repeat = await scheduledRun(drifted);
    const afterRepeat = received.splice(0);
    const resolution = await scheduledRun(clean);
    const afterResolution = received.splice(0);

    expect(first.map((result) => [result.channel, result.ok, result.ok && result.status])).toEqual([
      ['platform-team', true, 200],
      ['contract-owners', true, 202],
      ['audit-sink', true, 200],
    ]);
    expect(afterFirst.map((request) => request.path)).toEqual(['/slack', '/teams', '/hook']);
    for (const request of afterFirst) expect(request.body).toMatch(/jane@example\.com/);
    const hook = afterFirst.find((request) => request.path === '/hook')!;
    expect(hook.signature).toBe(`sha256=${createHmac('sha256', HOOK_SECRET).update(hook.body).digest('hex')}`);
    expect(JSON.parse(hook.body)).toMatchObject({
      event: 'drift',
      contracts: [{ id: '4711', fields: [{ field: 'Name', changedBy: { actor: 'jane@example.com', eventId: expect.stringMatching(/^evt-/) } }] }],
    });
    expect(repeat).toEqual([]);
    expect(afterRepeat).toEqual([]);
    expect(resolution.map((result) => result.channel)).toEqual(['platform-team', 'audit-sink']);
    expect(afterResolution.map((request) => JSON.parse(request.body) as { text?: string; summary?: string })).toEqual([
      expect.objectContaining({ text: 'Drift resolved in tenant acme: 1 contract matches git again' }),
      expect.objectContaining({ summary: 'Drift resolved in tenant acme: 1 contract matches git again' }),
    ]);
    await admin(emulator, 'POST', '/reset');
  });
});
