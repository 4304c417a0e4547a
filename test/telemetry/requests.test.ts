/**
 * recordingApiClient: the CMS client's reads and PATCHes recorded for telemetry against a local
 * server: the template, never the contract's id or the token; a failure's status and kind; answers
 * and failures passed through unchanged.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { recordingApiClient, recordingFetch, recordingTokens, requestRecorder } from '../../engine/telemetry/requests.ts';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.method === 'PATCH') res.writeHead(204).end();
    else if (req.url === '/api/contract/4711') res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"Name":"Facility cleaning"}');
    else res.writeHead(403, { 'Content-Type': 'application/json' }).end('{"error":"forbidden"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('recordingApiClient', () => {
  it('records each read and PATCH by its template, with a failure status and kind, and passes everything through', async () => {
    let now = 1000;
    const recorder = requestRecorder();
    const client = createApiClient({ baseUrl, readPath: '/contract/{id}', timeoutMs: 2000, userAgent: 'contract-sync/test', correlationId: 'run-1' });
    const api = recordingApiClient(client, recorder, { baseUrl, readPath: '/contract/{id}', now: () => (now += 5) });

    const read = await api.read('4711', 'throwaway-token');
    await api.patch('4711', [{ op: 'Replace', path: '/Contract/Name', value: 'x' }], 'throwaway-token');
    const refused = await api.read('4712', 'throwaway-token').catch((error: unknown) => error);

    expect(read.fields).toEqual({ Name: 'Facility cleaning' });
    expect(refused).toMatchObject({ status: 403 });
    const port = Number(new URL(baseUrl).port);
    expect(recorder.records).toEqual([
      { method: 'GET', template: '/api/contract/{id}', server: '127.0.0.1', port, status: null, start: 1005, end: 1010 },
      { method: 'PATCH', template: '/api/contract/{id}', server: '127.0.0.1', port, status: null, start: 1015, end: 1020 },
      { method: 'GET', template: '/api/contract/{id}', server: '127.0.0.1', port, status: 403, errorType: 'permanent', start: 1025, end: 1030 },
    ]);
    expect(JSON.stringify(recorder.records)).not.toMatch(/throwaway-token|4712|4711/);
  });

  it("knows each request's tenant by the token its tenant's cache handed out, and keeps no token in what it records", async () => {
    const recorder = requestRecorder();
    const caches = recordingTokens({ get: async (tenant) => `throwaway-token-${tenant}`, invalidate: () => undefined }, recorder);
    const client = createApiClient({ baseUrl, readPath: '/contract/{id}', timeoutMs: 2000, userAgent: 'contract-sync/test', correlationId: 'run-2' });
    const api = recordingApiClient(client, recorder, { baseUrl, readPath: '/contract/{id}', now: () => 1 });

    await api.read('4711', await caches.get('acme'));
    await api.patch('4711', [{ op: 'Replace', path: '/Contract/Name', value: 'x' }], await caches.get('globex'));
    await api.read('4711', 'a-token-no-cache-handed-out');

    expect(recorder.records.map((record) => record.tenant)).toEqual(['acme', 'globex', undefined]);
    expect(JSON.stringify(recorder.records)).not.toMatch(/throwaway-token|a-token/);
  });

  it("records the identity provider's requests by path and status, never the body that carries the secret; a refused connection as network", async () => {
    const recorder = requestRecorder();
    let now = 0;
    const fetchRecorded = recordingFetch(globalThis.fetch, recorder, () => (now += 1));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/realms/cms/protocol/openid-connect/token`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const refused = await fetchRecorded(`${baseUrl}/realms/cms/protocol/openid-connect/token`, { method: 'POST', body: 'client_secret=throwaway-secret' });
    const failed = await fetchRecorded(closedUrl, { method: 'POST', body: 'client_secret=throwaway-secret' }).catch((error: unknown) => error);

    expect(refused.status).toBe(403);
    expect(failed).toBeInstanceOf(Error);
    expect(recorder.records.map((record) => [record.method, record.to, record.template, record.status, record.errorType])).toEqual([
      ['POST', 'identity', '/api/realms/cms/protocol/openid-connect/token', 403, '403'],
      ['POST', 'identity', '/realms/cms/protocol/openid-connect/token', null, 'network'],
    ]);
    expect(JSON.stringify(recorder.records)).not.toContain('throwaway-secret');
  });
});
