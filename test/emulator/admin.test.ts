import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type RequestLogEntry } from '../../emulator/index.ts';
import { admin, live, patch, read, requestToken, SEED, start, token } from './helpers.ts';

let emulator: Emulator;
let acme: string;

beforeAll(async () => {
  emulator = await start();
  acme = await token(emulator);
});

beforeEach(async () => {
  await admin(emulator, 'POST', '/reset');
});

afterAll(async () => {
  await emulator.close();
});

async function requests(): Promise<RequestLogEntry[]> {
  return (await (await admin(emulator, 'GET', '/requests')).json()) as RequestLogEntry[];
}

const RENAME = [{ op: 'Replace', path: '/Contract/Name', value: 'Renamed' }];

describe('contracts', () => {
  it('replaces a contract out of band (drift) and creates one when absent', async () => {
    const replaced = await admin(emulator, 'PUT', '/contracts/acme/4711', { Name: 'Drifted' });
    const created = await admin(emulator, 'PUT', '/contracts/acme/7000', { Area: 1 });

    expect(replaced.status).toBe(204);
    expect(created.status).toBe(201);
    expect(await live(emulator, 'acme', '4711')).toEqual({ Name: 'Drifted' });
    expect(await (await read(emulator, acme, '7000')).json()).toEqual({ Area: 1 });
  });

  it('refuses a contract whose known fields have the wrong type (the read schema)', async () => {
    const response = await admin(emulator, 'PUT', '/contracts/acme/4711', { Name: 1, Company: null, Colour: 'red' });

    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: { path: string; message: string }[] };
    expect(body.problems.map((problem) => problem.path).sort()).toEqual(['Company', 'Name']);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
  });

  it('keeps fields and member keys the model does not list, and serves them on reads', async () => {
    const contract = { Name: 'Drifted', Colour: 'red', Company: [{ Id: 12, RelationType: 'Supplier', Name: 'Acme Ltd' }] };

    const response = await admin(emulator, 'PUT', '/contracts/acme/4711', contract);

    expect(response.status).toBe(204);
    expect(await (await read(emulator, acme, '4711')).json()).toEqual(contract);
  });

  it('answers 404 for an unknown contract', async () => {
    expect((await admin(emulator, 'GET', '/contracts/acme/0000')).status).toBe(404);
    expect((await admin(emulator, 'GET', '/contracts/globex/4711')).status).toBe(404);
  });
});

describe('request log and reset', () => {
  it('records every token and API request with time, kind, method, path, tenant, status and fault', async () => {
    await requestToken(emulator, 'acme-rw', 'acme-secret-new', 'core:write');
    await requestToken(emulator, 'acme-rw', 'wrong', 'core:write');
    await patch(emulator, acme, '4711', RENAME);
    await read(emulator, 'not-a-token', '4711');

    const log = await requests();

    expect(log).toEqual([
      { time: expect.any(String), kind: 'token', method: 'POST', path: '/realms/cms/protocol/openid-connect/token', tenant: 'acme', status: 200, fault: null },
      { time: expect.any(String), kind: 'token', method: 'POST', path: '/realms/cms/protocol/openid-connect/token', tenant: 'acme', status: 401, fault: null },
      { time: expect.any(String), kind: 'api', method: 'PATCH', path: '/contract/4711', tenant: 'acme', status: 204, fault: null },
      { time: expect.any(String), kind: 'api', method: 'GET', path: '/contract/4711', tenant: null, status: 401, fault: null },
    ]);
    expect(Date.parse(log[0]!.time)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('never records secrets or tokens', async () => {
    await requestToken(emulator, 'acme-rw', 'acme-secret-new', 'core:write');
    await patch(emulator, acme, '4711', RENAME);

    const text = JSON.stringify(await requests());

    expect(text).not.toContain('acme-secret-new');
    expect(text).not.toContain(acme.split('.')[2]);
  });

  it('resets contracts, the log and faults to the seed', async () => {
    await patch(emulator, acme, '4711', RENAME);
    await admin(emulator, 'POST', '/faults', { api: { status: { '503': 1 } } });

    const response = await admin(emulator, 'POST', '/reset');

    expect(response.status).toBe(204);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
    expect(await requests()).toEqual([]);
    expect((await read(emulator, acme, '4711')).status).toBe(200);
  });

  it('revokes every token issued so far, and only those', async () => {
    const revoked = await token(emulator);

    const response = await admin(emulator, 'POST', '/revoke-tokens');
    const fresh = await token(emulator);

    expect(response.status).toBe(204);
    expect((await read(emulator, revoked, '4711')).status).toBe(401);
    expect((await read(emulator, acme, '4711')).status).toBe(401);
    expect((await read(emulator, fresh, '4711')).status).toBe(200);
    acme = fresh;
  });
});

describe('faults', () => {
  it.each(['500', '502', '503', '429'])('injects status %s on the API without applying the patch', async (status) => {
    await admin(emulator, 'POST', '/faults', { seed: 1, api: { status: { [status]: 1 }, retryAfterSeconds: 2 } });

    const response = await patch(emulator, acme, '4711', RENAME);

    expect(response.status).toBe(Number(status));
    expect(response.headers.get('retry-after')).toBe(status === '503' || status === '429' ? '2' : null);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
    expect((await requests()).at(-1)).toMatchObject({ kind: 'api', status: Number(status), fault: { type: 'status', status: Number(status) } });
  });

  it('injects a status on the token endpoint with an RFC 6749 body', async () => {
    await admin(emulator, 'POST', '/faults', { token: { status: { '503': 1 }, retryAfterSeconds: 3 } });

    const response = await requestToken(emulator, 'acme-rw', 'acme-secret-new');
    const api = await read(emulator, acme, '4711');

    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toMatchObject({ error: 'temporarily_unavailable' });
    expect(api.status).toBe(200);
    expect((await requests())[0]).toMatchObject({ kind: 'token', status: 503, fault: { type: 'status', status: 503 } });
  });

  it('adds latency', async () => {
    await admin(emulator, 'POST', '/faults', { api: { latencyMs: [150, 150] }, token: { latencyMs: [150, 150] } });
    const started = performance.now();

    const response = await read(emulator, acme, '4711');
    const tokenResponse = await requestToken(emulator, 'acme-rw', 'acme-secret-new');

    expect(response.status).toBe(200);
    expect(tokenResponse.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect((await requests()).map((entry) => entry.fault)).toEqual([
      { type: 'latency', latencyMs: 150 },
      { type: 'latency', latencyMs: 150 },
    ]);
  });

  it('resets the connection before the change: nothing is applied', async () => {
    await admin(emulator, 'POST', '/faults', { api: { resetBefore: 1 } });

    const failure = patch(emulator, acme, '4711', RENAME);

    await expect(failure).rejects.toThrow(TypeError);
    expect(await live(emulator, 'acme', '4711')).toEqual(SEED.tenants.acme.contracts['4711']);
    expect((await requests()).at(-1)).toMatchObject({ status: null, tenant: null, fault: { type: 'resetBefore' } });
  });

  it('resets the connection after the change is committed: the client sees no answer, the change is there', async () => {
    await admin(emulator, 'POST', '/faults', { api: { resetAfter: 1 } });

    const failure = patch(emulator, acme, '4711', RENAME);

    await expect(failure).rejects.toThrow(TypeError);
    expect(await live(emulator, 'acme', '4711')).toMatchObject({ Name: 'Renamed' });
    expect((await requests()).at(-1)).toMatchObject({ status: 204, tenant: 'acme', fault: { type: 'resetAfter' } });
  });

  it('resets token requests after the token is issued', async () => {
    await admin(emulator, 'POST', '/faults', { token: { resetAfter: 1 } });

    const failure = requestToken(emulator, 'acme-rw', 'acme-secret-new');

    await expect(failure).rejects.toThrow(TypeError);
    expect((await requests()).at(-1)).toMatchObject({ kind: 'token', status: 200, tenant: 'acme', fault: { type: 'resetAfter' } });
  });

  it('turns faults off with {}', async () => {
    await admin(emulator, 'POST', '/faults', { api: { status: { '503': 1 } } });

    await admin(emulator, 'POST', '/faults', {});

    expect((await read(emulator, acme, '4711')).status).toBe(200);
    expect(await (await admin(emulator, 'GET', '/faults')).json()).toEqual({});
  });

  it('reproduces the same faults from the same seed, and others from another seed', async () => {
    const faults = { api: { status: { '503': 0.3, '500': 0.2 } } };
    async function run(seed: number): Promise<number[]> {
      await admin(emulator, 'POST', '/faults', { seed, ...faults });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i += 1) statuses.push((await read(emulator, acme, '4711')).status);
      return statuses;
    }

    const first = await run(42);
    const again = await run(42);
    const other = await run(43);

    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 500, 503]));
  });

  it.each([
    ['an unknown status', { api: { status: { '404': 0.5 } } }, /404/],
    ['a probability above 1', { api: { resetBefore: 2 } }, /resetBefore/],
    ['probabilities adding up above 1', { api: { status: { '503': 0.6 }, resetAfter: 0.6 } }, /add up/],
    ['an inverted latency range', { token: { latencyMs: [50, 10] } }, /min <= max/],
    ['an unknown endpoint', { admin: {} }, /admin/],
  ])('refuses a fault body with %s', async (_case, body, message) => {
    const response = await admin(emulator, 'POST', '/faults', body);

    expect(response.status).toBe(400);
    const { problems } = (await response.json()) as { problems: string[] };
    expect(problems.join('\n')).toMatch(message);
  });
});

describe('loopback only', () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((info) => info && info.family === 'IPv4' && !info.internal)?.address;

  it.skipIf(external === undefined)('refuses admin requests from a non-loopback address', async () => {
    const open = await startEmulator(SEED, { host: '0.0.0.0' });
    try {
      const port = new URL(open.urls.adminUrl).port;

      const remote = await fetch(`http://${external}:${port}/__admin/requests`);
      const local = await fetch(`http://127.0.0.1:${port}/__admin/requests`);

      expect(remote.status).toBe(403);
      expect(local.status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
