import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FIELDS, opShapes, type FieldSpec } from '../../engine/model/index.ts';
import type { Emulator } from '../../emulator/index.ts';
import { admin, live, patch, read, SEED, start, token } from './helpers.ts';

let emulator: Emulator;
let clockMs = Date.now();
let acme: string;

beforeAll(async () => {
  emulator = await start(SEED, { now: () => clockMs });
  acme = await token(emulator);
});

beforeEach(async () => {
  clockMs = Date.now();
  await admin(emulator, 'POST', '/reset');
});

afterAll(async () => {
  await emulator.close();
});

const MEMBERS: Record<string, unknown> = {
  Company: { Id: 99, RelationType: 'Customer' },
  OrganizationalUnit: { Id: 5, Name: 'IT' },
  Owner: { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7, Email: 'owner@example.com', OrganizationalUnit: { Id: 5 } } },
  Type: { Lookup: 'IT-SERVICES', EbaCode: null, IsDora: true },
};

const SCALARS: Record<string, unknown> = {
  number: 1234.5,
  integer: 978,
  string: 'Changed by the test',
  timestamp: '2027-01-01T00:00:00Z',
  duration: { Days: 30, Hours: null },
};

function sampleValue(field: FieldSpec): unknown {
  return field.kind === 'collection' ? MEMBERS[field.name] : SCALARS[field.kind];
}

describe('authentication and tenancy', () => {
  it('reads its own tenant contract', async () => {
    const response = await read(emulator, acme, '4711');

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it("answers 404 to a token of tenant A for tenant B's contract, and leaves it unchanged", async () => {
    const readB = await read(emulator, acme, '9001');
    const patchB = await patch(emulator, acme, '9001', [{ op: 'Replace', path: '/Contract/Name', value: 'hijacked' }]);

    expect(readB.status).toBe(404);
    expect(patchB.status).toBe(404);
    expect(await live(emulator, 'globex', '9001')).toEqual(SEED.tenants.globex.contracts['9001']);
  });

  it('answers 403 naming core:write to a read-only token, and changes nothing', async () => {
    const readOnly = await token(emulator, 'acme-ro', 'acme-ro-secret', 'core:read');

    const response = await patch(emulator, readOnly, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 'nope' }]);

    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: 'insufficient_scope', scope: 'core:write' });
    expect(response.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('answers 403 naming core:read to a write-only token on GET', async () => {
    const writeOnly = await token(emulator, 'acme-rw', 'acme-secret-new', 'core:write');

    const response = await read(emulator, writeOnly, '4711');

    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ scope: 'core:read' });
  });

  it('answers 401 to an expired token (injected clock), and changes nothing', async () => {
    clockMs = Date.now() + (SEED.tokenTtlSeconds + 1) * 1000;

    const response = await patch(emulator, acme, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 'late' }]);

    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_token', message: 'the access token has expired' });
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('accepts the same token just before it expires', async () => {
    clockMs = Date.now() + (SEED.tokenTtlSeconds - 5) * 1000;

    const response = await read(emulator, acme, '4711');

    expect(response.status).toBe(200);
  });

  it.each([
    ['a tampered signature', (jwt: string) => `${jwt.slice(0, -6)}${jwt.slice(-6, -5) === 'A' ? 'B' : 'A'}${jwt.slice(-5)}`],
    [
      'a tampered payload',
      (jwt: string) => {
        const [header, payload, signature] = jwt.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
        return [header, Buffer.from(JSON.stringify({ ...claims, tenant_id: 'globex' })).toString('base64url'), signature].join('.');
      },
    ],
    ['no token', () => ''],
    ['garbage', () => 'not-a-jwt'],
  ])('answers 401 to %s', async (_case, mangle) => {
    const response = await fetch(`${emulator.urls.baseUrl}/contract/4711`, {
      method: 'PATCH',
      headers: { ...(mangle(acme) === '' ? {} : { Authorization: `Bearer ${mangle(acme)}` }), 'Content-Type': 'application/json' },
      body: JSON.stringify([{ op: 'Replace', path: '/Contract/Name', value: 'forged' }]),
    });

    expect(response.status).toBe(401);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('answers 401 to a token from another emulator (other keys, issuer and audience)', async () => {
    const other = await start();
    try {
      const foreign = await token(other);

      const response = await read(emulator, foreign, '4711');

      expect(response.status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe('PATCH ops', () => {
  const shapes = opShapes().map((shape) => ({ name: `${shape.op} /Contract/${shape.field.name}`, op: shape.op, field: shape.field as FieldSpec }));

  it('covers the 23 op shapes of the field table', () => {
    expect(shapes).toHaveLength(23);
    expect(new Set(shapes.map((shape) => shape.field.name)).size).toBe(FIELDS.length);
  });

  it.each(shapes)('accepts and applies $name', async ({ op, field }) => {
    const value = sampleValue(field);
    const before = field.kind === 'collection' && op === 'Remove' ? { Name: 'x', [field.name]: [MEMBERS[field.name]] } : { Name: 'x' };
    await admin(emulator, 'PUT', '/contracts/acme/4711', before);

    const response = await patch(emulator, acme, '4711', [{ op, path: `/Contract/${field.name}`, value }]);

    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const after = (await live(emulator, 'acme', '4711')) as Record<string, unknown>;
    if (op === 'Replace') expect(after[field.name]).toEqual(value);
    if (op === 'Add') expect(after[field.name]).toEqual([value]);
    if (op === 'Remove') expect(after[field.name]).toEqual([]);
  });

  it.each([
    ['a lower-case op name', { op: 'replace', path: '/Contract/Name', value: 'x' }],
    ['an upper-case op name', { op: 'REPLACE', path: '/Contract/Name', value: 'x' }],
    ['an RFC 6902 op', { op: 'test', path: '/Contract/Name', value: 'x' }],
    ['an unknown field', { op: 'Replace', path: '/Contract/Nmae', value: 'x' }],
    ['a lower-case path root', { op: 'Replace', path: '/contract/Name', value: 'x' }],
    ['a path without root', { op: 'Replace', path: '/Name', value: 'x' }],
    ['a path into a field', { op: 'Replace', path: '/Contract/Name/0', value: 'x' }],
    ['Replace on a collection', { op: 'Replace', path: '/Contract/Company', value: [] }],
    ['Add on a scalar', { op: 'Add', path: '/Contract/Name', value: 'x' }],
    ['a number for a string', { op: 'Replace', path: '/Contract/Name', value: 42 }],
    ['a string for an integer', { op: 'Replace', path: '/Contract/Area', value: '3' }],
    ['a fraction for an integer', { op: 'Replace', path: '/Contract/Category', value: 1.5 }],
    ['a date without time', { op: 'Replace', path: '/Contract/ValidFrom', value: '2027-01-01' }],
    ['a timestamp with an offset', { op: 'Replace', path: '/Contract/ValidTo', value: '2027-01-01T00:00:00+01:00' }],
    ['an unknown duration unit', { op: 'Replace', path: '/Contract/SupplierNoticePeriod', value: { Weeks: 2 } }],
    ['a member without its identity', { op: 'Add', path: '/Contract/Company', value: { Id: 13 } }],
    ['a member with a wrong type', { op: 'Add', path: '/Contract/Type', value: { Lookup: 'X', IsDora: 'yes' } }],
    ['a member with an unknown field', { op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: 1, Name: 'FM', Colour: 'red' } }],
    ['an Add of an incomplete member', { op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: 1 } }],
    ['an op without value', { op: 'Replace', path: '/Contract/Name' }],
    ['an op with an extra key', { op: 'Replace', path: '/Contract/Name', value: 'x', from: '/Contract/Comment' }],
    ['null for a string', { op: 'Replace', path: '/Contract/Name', value: null }],
  ])('answers 400 to %s and changes nothing', async (_case, op) => {
    const response = await patch(emulator, acme, '4711', [op]);

    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; problems: { index: number; message: string }[] };
    expect(body.error).toBe('invalid_ops');
    expect(body.problems).toEqual([expect.objectContaining({ index: 0, message: expect.any(String) })]);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it.each([
    ['an object instead of a list', JSON.stringify({ op: 'Replace', path: '/Contract/Name', value: 'x' }), 'invalid_ops'],
    ['an empty list', '[]', 'invalid_ops'],
    ['invalid JSON', '[{"op": "Replace",', 'invalid_json'],
  ])('answers 400 to %s', async (_case, body, error) => {
    const response = await patch(emulator, acme, '4711', body);

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error });
  });

  it('lists every bad op of a list, each with its index and reason, and applies none of the five', async () => {
    const ops = [
      { op: 'Replace', path: '/Contract/Name', value: 'New name' },
      { op: 'Replace', path: '/Contract/Area', value: 4 },
      { op: 'Add', path: '/Contract/Company', value: { Id: 13, RelationType: 'Customer' } },
      { op: 'Replace', path: '/Contract/ValidFrom', value: 'soon' },
      { op: 'Replace', path: '/Contract/Comment', value: 'ok' },
    ];

    const response = await patch(emulator, acme, '4711', ops);

    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: { index: number; op: string; path: string; message: string }[] };
    expect(body.problems).toEqual([expect.objectContaining({ index: 3, op: 'Replace', path: '/Contract/ValidFrom' })]);
    expect(body.problems[0]!.message).toMatch(/ISO 8601/);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('applies nothing when the fourth of five ops conflicts (409)', async () => {
    const ops = [
      { op: 'Replace', path: '/Contract/Name', value: 'New name' },
      { op: 'Remove', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } },
      { op: 'Add', path: '/Contract/Company', value: { Id: 12, RelationType: 'Customer' } },
      { op: 'Remove', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } },
      { op: 'Replace', path: '/Contract/Comment', value: 'ok' },
    ];

    const response = await patch(emulator, acme, '4711', ops);

    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: 'conflict', index: 3 });
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('applies all five ops of a valid list, in order', async () => {
    const ops = [
      { op: 'Replace', path: '/Contract/Name', value: 'New name' },
      { op: 'Remove', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } },
      { op: 'Add', path: '/Contract/Company', value: { Id: 12, RelationType: 'Customer' } },
      { op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: 3, Name: 'FM' } },
      { op: 'Replace', path: '/Contract/SupplierNoticePeriod', value: { Days: 30 } },
    ];

    const response = await patch(emulator, acme, '4711', ops);

    expect(response.status).toBe(204);
    expect(await live(emulator, 'acme', '4711')).toEqual({
      Name: 'New name',
      Company: [{ Id: 12, RelationType: 'Customer' }],
      OrganizationalUnit: [{ Id: 3, Name: 'FM' }],
      SupplierNoticePeriod: { Days: 30 },
    });
  });

  it.each([
    ['Add of a present member', { op: 'Add', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } }],
    ['Add of a present member matched by identity only', { op: 'Add', path: '/Contract/Company', value: { Id: 12.0, RelationType: 'Supplier' } }],
    ['Remove of an absent member', { op: 'Remove', path: '/Contract/Company', value: { Id: 12, RelationType: 'Customer' } }],
    ['Remove from an absent collection', { op: 'Remove', path: '/Contract/Type', value: { Lookup: 'X' } }],
  ])('answers 409 to %s and changes nothing', async (_case, op) => {
    const response = await patch(emulator, acme, '4711', [op]);

    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: 'conflict', index: 0 });
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('answers 409 to the second Add of the same member in one list', async () => {
    const member = { Id: 1, Name: 'Ops' };

    const response = await patch(emulator, acme, '4711', [
      { op: 'Add', path: '/Contract/OrganizationalUnit', value: member },
      { op: 'Add', path: '/Contract/OrganizationalUnit', value: { ...member, Name: 'Operations' } },
    ]);

    expect(response.status).toBe(409);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it.each([
    ['no content type', undefined],
    ['text/plain', 'text/plain'],
    ['a JSON Patch media type', 'application/json-patch+json'],
  ])('answers 415 to %s', async (_case, contentType) => {
    const response = await fetch(`${emulator.urls.baseUrl}/contract/4711`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${acme}`, ...(contentType ? { 'Content-Type': contentType } : {}) },
      body: new Blob([JSON.stringify([{ op: 'Replace', path: '/Contract/Name', value: 'x' }])]),
    });

    expect(response.status).toBe(415);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('accepts application/json with a charset', async () => {
    const response = await patch(emulator, acme, '4711', [{ op: 'Replace', path: '/Contract/Name', value: 'ü' }], 'application/json; charset=utf-8');

    expect(response.status).toBe(204);
    expect(await live(emulator, 'acme', '4711')).toMatchObject({ Name: 'ü' });
  });

  it('answers 413 to a body over 1 MiB, and keeps serving', async () => {
    const big = [{ op: 'Replace', path: '/Contract/Comment', value: 'x'.repeat(1024 * 1024) }];

    const response = await patch(emulator, acme, '4711', big);
    const next = await read(emulator, acme, '4711');

    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'payload_too_large', limitBytes: 1024 * 1024 });
    expect(next.status).toBe(200);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('accepts a body of just under 1 MiB', async () => {
    const comment = 'x'.repeat(1024 * 1024 - 100);

    const response = await patch(emulator, acme, '4711', [{ op: 'Replace', path: '/Contract/Comment', value: comment }]);

    expect(response.status).toBe(204);
  });

  it('answers 404 to an unknown contract of its own tenant (PATCH never creates)', async () => {
    const response = await patch(emulator, acme, '0000', [{ op: 'Replace', path: '/Contract/Name', value: 'x' }]);

    expect(response.status).toBe(404);
    expect(await live(emulator, 'acme', '0000')).toBeUndefined();
  });

  it('answers 405 to other methods', async () => {
    const response = await fetch(`${emulator.urls.baseUrl}/contract/4711`, { method: 'DELETE', headers: { Authorization: `Bearer ${acme}` } });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, PATCH');
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After and RateLimit headers beyond the rate, per tenant, until the bucket refills', async () => {
    let now = Date.now();
    const limited = await start({ ...SEED, rateLimit: { requestsPerSecond: 2, burst: 3 } }, { now: () => now });
    try {
      const acmeToken = await token(limited);
      const globexToken = await token(limited, 'globex-rw', 'globex-secret');

      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await read(limited, acmeToken, '4711')).status);
      const refused = await read(limited, acmeToken, '4711');
      const otherTenant = await read(limited, globexToken, '9001');
      now += 500;
      const afterRefill = await read(limited, acmeToken, '4711');

      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('ratelimit-policy')).toBe('"tenant";q=4;w=2');
      expect(refused.headers.get('ratelimit')).toBe('"tenant";r=0;t=1');
      expect(await refused.json()).toMatchObject({ error: 'rate_limited', retryAfterSeconds: 1 });
      expect(otherTenant.status).toBe(200);
      expect(afterRefill.status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
