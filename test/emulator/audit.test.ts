/** The emulator's audit events (docs/architecture.md section 6): recorded by PATCH and the admin PUT, served with audit:read. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator, Seed } from '../../emulator/index.ts';
import { admin, patch, requestToken, SEED, start, token } from './helpers.ts';

const AUDIT_SEED = {
  ...SEED,
  tenants: {
    ...SEED.tenants,
    acme: { ...SEED.tenants.acme, clients: [...SEED.tenants.acme.clients, { clientId: 'acme-auditor', secret: 'acme-audit-secret', scopes: ['audit:read'] }] },
    globex: {
      ...SEED.tenants.globex,
      clients: [...SEED.tenants.globex.clients, { clientId: 'globex-auditor', secret: 'globex-audit-secret', scopes: ['audit:read'] }],
    },
  },
} as const satisfies Seed;

// The API's clock also checks token expiry: it starts at the whole minute before now, not at a fixed date.
const START = Math.floor(Date.now() / 60_000) * 60_000;
let emulator: Emulator;
let clock = START;
let writer: string;
let auditor: string;

beforeAll(async () => {
  emulator = await start(AUDIT_SEED, { now: () => clock });
  writer = await token(emulator);
  auditor = await token(emulator, 'acme-auditor', 'acme-audit-secret', 'audit:read');
});

beforeEach(async () => {
  clock = START;
  await admin(emulator, 'POST', '/reset');
});

afterAll(async () => {
  await emulator.close();
});

function auditEvents(accessToken: string | undefined, query = '?contractId=4711'): Promise<Response> {
  return fetch(`${emulator.urls.baseUrl}/audit/events${query}`, { headers: accessToken === undefined ? {} : { Authorization: `Bearer ${accessToken}` } });
}

async function eventsOf(id: string): Promise<unknown[]> {
  const response = await auditEvents(auditor, `?contractId=${encodeURIComponent(id)}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: unknown[] }).events;
}

describe('recording', () => {
  it('records a PATCH with the token client as actor, the clock time and the op paths’ fields in table order', async () => {
    clock = START + 15_000;

    const response = await patch(emulator, writer, '4711', [
      { op: 'Replace', path: '/Contract/Comment', value: 'c' },
      { op: 'Replace', path: '/Contract/Name', value: 'Renamed' },
      { op: 'Remove', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } },
    ]);

    expect(response.status).toBe(204);
    expect(await eventsOf('4711')).toEqual([
      {
        id: expect.stringMatching(/^evt-\d{6}$/),
        time: new Date(START + 15_000).toISOString(),
        actor: 'acme-rw',
        contractId: '4711',
        fields: ['Comment', 'Name', 'Company'],
      },
    ]);
  });

  it('records nothing for a PATCH that is refused', async () => {
    const conflict = await patch(emulator, writer, '4711', [{ op: 'Add', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } }]);
    const invalid = await patch(emulator, writer, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 1 }]);

    expect([conflict.status, invalid.status]).toEqual([409, 400]);
    expect(await eventsOf('4711')).toEqual([]);
  });

  it('records an out-of-band PUT with its X-Actor (default admin) and only the fields whose value changed', async () => {
    clock = START + 1000;
    await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Actor': 'jane@example.com' },
      body: JSON.stringify({ Name: 'Edited in the UI', Company: [{ Id: 12, RelationType: 'Supplier' }], Colour: 'red' }),
    });
    clock += 60_000;
    await admin(emulator, 'PUT', '/contracts/acme/4711', { Name: 'Edited in the UI', Company: [{ Id: 12, RelationType: 'Supplier' }], Colour: 'red' });
    await admin(emulator, 'PUT', '/contracts/acme/4711', { Name: 'Edited in the UI', Company: [] });

    const events = await eventsOf('4711');

    expect(events).toEqual([
      { id: expect.any(String), time: new Date(START + 1000).toISOString(), actor: 'jane@example.com', contractId: '4711', fields: ['Name', 'Colour'] },
      { id: expect.any(String), time: new Date(START + 61_000).toISOString(), actor: 'admin', contractId: '4711', fields: ['Company', 'Colour'] },
    ]);
  });

  it('records every field of a contract an admin PUT creates', async () => {
    await admin(emulator, 'PUT', '/contracts/acme/7000', { Area: 1, Name: 'New' });

    expect(await eventsOf('7000')).toEqual([expect.objectContaining({ actor: 'admin', fields: ['Area', 'Name'] })]);
  });

  it('refuses an X-Actor with control characters, and changes nothing', async () => {
    const response = await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Actor': '' },
      body: JSON.stringify({ Name: 'x' }),
    });

    expect(response.status).toBe(400);
    expect(await eventsOf('4711')).toEqual([]);
  });

  it('serves events oldest first with ids that a reset never reuses', async () => {
    await patch(emulator, writer, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 'one' }]);
    const [first] = (await eventsOf('4711')) as { id: string }[];
    await admin(emulator, 'POST', '/reset');
    await patch(emulator, writer, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 'two' }]);
    clock += 1000;
    await patch(emulator, writer, '4711', [{ op: 'Replace', path: '/Contract/Comment', value: 'three' }]);

    const events = (await eventsOf('4711')) as { id: string; fields: string[] }[];

    expect(events.map((event) => event.fields)).toEqual([['Name'], ['Comment']]);
    expect(events.map((event) => event.id)).not.toContain(first!.id);
    expect(events[0]!.id < events[1]!.id).toBe(true);
  });
});

describe('GET /audit/events', () => {
  it('needs the scope audit:read (403 naming it) and a valid token (401)', async () => {
    const noScope = await auditEvents(writer);
    const noToken = await auditEvents(undefined);

    expect(noScope.status).toBe(403);
    expect(await noScope.json()).toMatchObject({ error: 'insufficient_scope', scope: 'audit:read' });
    expect(noScope.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="audit:read"');
    expect(noToken.status).toBe(401);
  });

  it('serves the token’s tenant only: another tenant’s contract has no events for the caller', async () => {
    await patch(emulator, writer, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 'x' }]);
    const globexAuditor = await token(emulator, 'globex-auditor', 'globex-audit-secret', 'audit:read');

    const response = await auditEvents(globexAuditor);

    expect(await response.json()).toEqual({ events: [] });
    expect(await eventsOf('4711')).toHaveLength(1);
  });

  it.each([[''], ['?contractId='], ['?id=4711']])('answers 400 without a valid contractId (%s)', async (query) => {
    const response = await auditEvents(auditor, query);

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_query' });
  });

  it('decodes a percent-encoded contract id', async () => {
    await admin(emulator, 'PUT', `/contracts/acme/${encodeURIComponent('C/2024 ä')}`, { Name: 'x' });

    expect(await eventsOf('C/2024 ä')).toEqual([expect.objectContaining({ contractId: 'C/2024 ä', fields: ['Name'] })]);
  });

  it('answers 405 to another method', async () => {
    const response = await fetch(`${emulator.urls.baseUrl}/audit/events?contractId=4711`, { method: 'POST', headers: { Authorization: `Bearer ${auditor}` } });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
  });
});

describe('the identity provider', () => {
  it('knows audit:read: discovery lists it, and a client that lacks it is refused it', async () => {
    const discovery = await fetch(`${emulator.urls.authUrl}/realms/cms/.well-known/openid-configuration`);
    const refused = await requestToken(emulator, 'acme-rw', 'acme-secret-new', 'audit:read');

    expect(((await discovery.json()) as { scopes_supported: string[] }).scopes_supported).toContain('audit:read');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_scope' });
  });

  it('knows audit:read even when no seed client holds it', async () => {
    const bare = await start();
    try {
      const discovery = await fetch(`${bare.urls.authUrl}/realms/cms/.well-known/openid-configuration`);

      expect(((await discovery.json()) as { scopes_supported: string[] }).scopes_supported).toContain('audit:read');
    } finally {
      await bare.close();
    }
  });
});
