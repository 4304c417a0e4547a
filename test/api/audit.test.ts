/** The audit-event reader (`api.audit`): against the real emulator, canned bodies, and a local server that misbehaves. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../emulator/index.ts';
import { auditEventsOf, AuditShapeError, createAuditReader, type AuditReaderOptions } from '../../engine/api/audit.ts';
import { AuthError, createTenantTokens } from '../../engine/auth/index.ts';
import { parseConfig } from '../../engine/config/index.ts';
import type { AuditConfig } from '../../engine/config/types.ts';
import { attributeDrift } from '../../engine/drift/attribution.ts';
import { REDACTED } from '../../engine/log/logger.ts';
import { admin, patch, SEED, start, token } from '../emulator/helpers.ts';
import { authOf, ENV, TENANTS } from '../auth/helpers.ts';
import { rejection } from './helpers.ts';

const EMULATOR_AUDIT: AuditConfig = {
  path: '/audit/events?contractId={id}',
  pointer: '/events',
  fields: { actor: '/actor', time: '/time', contractFields: '/fields', id: '/id' },
};

function readerOptions(baseUrl: string, audit: AuditConfig = EMULATOR_AUDIT, overrides: Partial<AuditReaderOptions> = {}): AuditReaderOptions {
  return { baseUrl, audit, timeoutMs: 5000, userAgent: 'contract-sync/test', correlationId: 'run-1', ...overrides };
}

describe('against the emulator', () => {
  let emulator: Emulator;

  beforeAll(async () => {
    const acme = {
      ...SEED.tenants.acme,
      clients: [{ ...SEED.tenants.acme.clients[0], scopes: ['core:read', 'core:write', 'audit:read'] }, SEED.tenants.acme.clients[1]],
    };
    emulator = await start({ ...SEED, tenants: { ...SEED.tenants, acme } });
  });

  beforeEach(async () => {
    await admin(emulator, 'POST', '/reset');
  });

  afterAll(async () => {
    await emulator.close();
  });

  it('reads a contract’s events with an audit:read token, through the config, and attributes each drifted field', async () => {
    const config = parseConfig(
      'contract-sync.yaml',
      `api:\n  baseUrl: ${emulator.urls.baseUrl}\n  audit:\n    path: "/audit/events?contractId={id}"\n    pointer: /events\n    fields: { actor: /actor, time: /time, contractFields: /fields, id: /id }\nauth: { url: ${emulator.urls.authUrl}, realm: cms }\ntenants:\n  acme: { clientId: acme-rw, clientSecret: { env: ACME_SECRET } }\n`,
    ).config!;
    const auditTokens = createTenantTokens({ auth: authOf(emulator), tenants: TENANTS, scopes: ['audit:read'], env: ENV });
    await patch(emulator, await token(emulator), '4711', [{ op: 'Replace', path: '/Contract/Comment', value: 'by contract-sync' }]);
    await fetch(`${emulator.urls.adminUrl}/contracts/acme/4711`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Actor': 'jane@example.com' },
      body: JSON.stringify({ Name: 'Edited in the UI', Comment: 'by contract-sync', Company: [{ Id: 12, RelationType: 'Supplier' }] }),
    });
    const reader = createAuditReader(readerOptions(config.api.baseUrl, config.api.audit!));

    const read = await reader.read('4711', await auditTokens.get('acme'));
    const attributions = attributeDrift(['Name', 'Comment', 'Area'], read.events, { ownActors: ['acme-rw'] });

    expect(read.problems).toEqual([]);
    expect(read.events).toEqual([
      { id: expect.stringMatching(/^evt-/), actor: 'acme-rw', time: expect.any(String), fields: ['Comment'] },
      { id: expect.stringMatching(/^evt-/), actor: 'jane@example.com', time: expect.any(String), fields: ['Name'] },
    ]);
    expect(attributions).toEqual([
      { field: 'Name', attributed: true, actor: 'jane@example.com', time: read.events[1]!.time, eventId: read.events[1]!.id },
      { field: 'Comment', attributed: false, reason: 'own-change' },
      { field: 'Area', attributed: false, reason: 'no-event' },
    ]);
  });

  it('fails with 403 naming the scope when the token lacks audit:read', async () => {
    const reader = createAuditReader(readerOptions(emulator.urls.baseUrl));

    const error = await rejection(reader.read('4711', await token(emulator, 'acme-rw', 'acme-secret-new', 'core:read')));

    expect(error.status).toBe(403);
    expect(error.kind).toBe('permanent');
    expect(error.message).toMatch(/^GET \/audit\/events: 403 Forbidden: .*; the tenant's client needs the scope audit:read$/);
  });

  it('cannot get an audit:read token for a client the service did not grant it', async () => {
    const auditTokens = createTenantTokens({ auth: authOf(emulator), tenants: TENANTS, scopes: ['audit:read'], env: ENV });

    await expect(auditTokens.get('globex')).rejects.toBeInstanceOf(AuthError);
  });
});

describe('auditEventsOf (canned answers)', () => {
  const audit: AuditConfig = {
    path: '/a/{id}',
    pointer: '/data/items',
    fields: { actor: '/who/name', time: '/at', contractFields: '/changes', contractId: '/contract' },
  };

  it('reads events at the configured pointers, oldest first, op paths as field names, other contracts left out', () => {
    const body = {
      data: {
        items: [
          { who: { name: 'bob' }, at: '2027-01-02T10:00:00+01:00', changes: ['/Contract/Name', 'Name'], contract: '4711' },
          { who: { name: 'ann' }, at: '2027-01-02T08:00:00Z', changes: ['Area'], contract: 4711 },
          { who: { name: 'eve' }, at: '2027-01-02T07:00:00Z', changes: ['Area'], contract: '4712' },
        ],
      },
    };

    const read = auditEventsOf(body, '4711', audit);

    expect(read).toEqual({
      events: [
        { actor: 'ann', time: '2027-01-02T08:00:00.000Z', fields: ['Area'] },
        { actor: 'bob', time: '2027-01-02T09:00:00.000Z', fields: ['Name'] },
      ],
      problems: [],
    });
  });

  it.each([
    [
      'nothing at the pointer',
      { events: [] },
      'expected a list of events at "/data/items", found nothing there (the answer is an object (keys: events)): set api.audit.pointer',
    ],
    ['an object at the pointer', { data: { items: {} } }, 'expected a list of events at "/data/items", found an object (keys: none): set api.audit.pointer'],
  ])('refuses %s, naming the setting', (_, body, message) => {
    function attempt(): unknown {
      return auditEventsOf(body, '4711', audit);
    }

    expect(attempt).toThrow(AuditShapeError);
    expect(attempt).toThrow(message);
  });

  it('keeps events it cannot read out, counted per setting, and never guesses their actor, time or fields', () => {
    const body = {
      data: {
        items: [
          { who: {}, at: '2027-01-02T08:00:00Z', changes: ['Area'], contract: '4711' },
          { who: { name: '' }, at: '2027-01-02T08:00:00Z', changes: ['Area'], contract: '4711' },
          { who: { name: 'ann' }, at: '2027-01-02T08:00:00', changes: ['Area'], contract: '4711' },
          { who: { name: 'ann' }, at: '2027-01-02T08:00:00Z', changes: 'Area', contract: '4711' },
          { who: { name: 'ann' }, at: '2027-01-02T08:00:00Z', changes: ['Area'] },
        ],
      },
    };

    const read = auditEventsOf(body, '4711', audit);

    expect(read.events).toEqual([]);
    expect(read.problems).toEqual([
      { setting: 'api.audit.fields.actor', message: 'no actor (a non-empty string) at "/who/name"', events: 2 },
      { setting: 'api.audit.fields.time', message: 'no RFC 3339 time with an offset at "/at"', events: 1 },
      { setting: 'api.audit.fields.contractFields', message: 'no list of field names at "/changes"', events: 1 },
      { setting: 'api.audit.fields.contractId', message: 'no contract id at "/contract"', events: 1 },
    ]);
  });
});

describe('a service that misbehaves (a local server)', () => {
  let server: Server;
  let baseUrl: string;
  let answer: (url: string, respond: (status: number, body: string) => void) => void;

  beforeAll(async () => {
    server = createServer((req, res) => {
      answer(req.url ?? '', (status, body) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reads at most the bound of an answer', async () => {
    answer = (_, respond) => respond(200, JSON.stringify({ events: Array.from({ length: 5000 }, () => ({ actor: 'x'.repeat(100) })) }));
    const reader = createAuditReader(readerOptions(baseUrl, EMULATOR_AUDIT, { maxBytes: 64 * 1024 }));

    const error = await rejection(reader.read('4711', 'tok-secret'));

    expect(error.message).toBe("GET /audit/events: the answer's body is larger than 64 KiB, the bound for one answer; it was not read further");
  });

  it('gives up on a service that does not answer within the timeout', async () => {
    answer = () => undefined;
    const reader = createAuditReader(readerOptions(baseUrl, EMULATOR_AUDIT, { timeoutMs: 200 }));

    const error = await rejection(reader.read('4711', 'tok-secret'));

    expect(error.message).toBe('GET /audit/events: no answer within 200 ms');
    expect(error.kind).toBe('retryable');
  });

  it('never quotes the token a failing service echoes, and percent-encodes the id', async () => {
    let seen = '';
    answer = (url, respond) => {
      seen = url;
      respond(500, JSON.stringify({ error: 'boom', authorization: 'Bearer tok-secret-123' }));
    };
    const reader = createAuditReader(readerOptions(baseUrl));

    const error = await rejection(reader.read('C/1 ä', 'tok-secret-123'));

    expect(seen).toBe('/audit/events?contractId=C%2F1%20%C3%A4');
    expect(error.message).not.toContain('tok-secret-123');
    expect(error.message).toContain(REDACTED);
    expect(error.kind).toBe('retryable');
  });
});
