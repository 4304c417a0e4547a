import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClientOptions } from '../../engine/api/client.ts';
import { ApiError } from '../../engine/api/errors.ts';
import type { Op } from '../../engine/model/types.ts';
import { rejection } from './helpers.ts';
import { closedPort } from '../helpers/closed-port.ts';

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.token-of-acme.signature';
const OPS: readonly Op[] = [{ op: 'Replace', path: '/Contract/Name', value: 'Cleaning' }];

interface FetchCall {
  readonly request: Request;
  readonly signal: AbortSignal | undefined;
}

/** A fetch standing in for the network: records what it is given and answers with `answer`. */
function fakeFetch(answer: (request: Request, signal: AbortSignal | undefined) => Promise<Response>): { fetch: typeof fetch; calls: FetchCall[] } {
  const calls: FetchCall[] = [];
  function fetchStandIn(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
    const request = input as Request;
    const signal = init?.signal ?? undefined;
    calls.push({ request, signal });
    return answer(request, signal);
  }
  return { fetch: fetchStandIn as typeof fetch, calls };
}

function options(fetchStandIn: typeof fetch, extra: Partial<ApiClientOptions> = {}): ApiClientOptions {
  return {
    baseUrl: 'https://cms.test',
    readPath: '/contract/{id}',
    timeoutMs: 5000,
    userAgent: 'contract-sync/test',
    correlationId: 'run-1',
    fetch: fetchStandIn,
    ...extra,
  };
}

/** A fetch failing the way undici does when the connection fails: TypeError('fetch failed') with the socket error as its cause. */
function failingWith(cause: unknown): typeof fetch {
  return fakeFetch(() => Promise.reject(new TypeError('fetch failed', { cause }))).fetch;
}

describe('createApiClient: sending', () => {
  it('sends the built PATCH with a timeout signal and checks the answer', async () => {
    const { fetch, calls } = fakeFetch(async () => new Response(null, { status: 204 }));
    const client = createApiClient(options(fetch));

    const outcome = await client.patch('C-1', OPS, TOKEN);

    expect(outcome).toEqual({});
    expect(calls).toHaveLength(1);
    expect(calls[0]!.request.method).toBe('PATCH');
    expect(calls[0]!.request.url).toBe('https://cms.test/contract/C-1');
    expect(calls[0]!.request.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(calls[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it('reads through api.read and returns the patchable fields', async () => {
    const { fetch, calls } = fakeFetch(async () => Response.json({ ContractId: 'C-1', Name: 'Cleaning' }));
    const client = createApiClient(options(fetch));

    const outcome = await client.read('C-1', TOKEN);

    expect(client.canRead).toBe(true);
    expect(outcome).toEqual({ fields: { Name: 'Cleaning' } });
    expect(`${calls[0]!.request.method} ${calls[0]!.request.url}`).toBe('GET https://cms.test/contract/C-1');
  });

  it('cannot read without api.read, and sends nothing when asked to', async () => {
    const { fetch, calls } = fakeFetch(async () => Response.json({}));
    const { readPath: _readPath, ...withoutRead } = options(fetch);
    const client = createApiClient(withoutRead);

    const read = client.read('C-1', TOKEN);

    expect(client.canRead).toBe(false);
    await expect(read).rejects.toThrow(TypeError);
    expect(calls).toHaveLength(0);
  });

  it('rejects with the checker error for a refused PATCH', async () => {
    const { fetch } = fakeFetch(async () => new Response('{"error":"conflict"}', { status: 409 }));
    const client = createApiClient(options(fetch));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ kind: 'permanent', status: 409, ambiguous: false });
  });
});

describe('createApiClient: failures without an answer', () => {
  it.each<[string, unknown, boolean, string]>([
    ['ECONNREFUSED: never connected', { code: 'ECONNREFUSED' }, false, 'connection refused (ECONNREFUSED)'],
    ['ENOTFOUND: the host is unknown', { code: 'ENOTFOUND' }, false, 'host not found (ENOTFOUND)'],
    ['UND_ERR_CONNECT_TIMEOUT: never connected', { code: 'UND_ERR_CONNECT_TIMEOUT' }, false, 'connection timed out (UND_ERR_CONNECT_TIMEOUT)'],
    ['ECONNRESET: reset after sending', { code: 'ECONNRESET' }, true, 'connection reset (ECONNRESET)'],
    ['UND_ERR_SOCKET: the socket closed', { code: 'UND_ERR_SOCKET' }, true, 'connection closed (UND_ERR_SOCKET)'],
    ['a code two causes deep', new Error('socket', { cause: { code: 'ECONNRESET' } }), true, 'connection reset (ECONNRESET)'],
    ['no code at all', new Error('other side closed'), true, 'network error: other side closed'],
  ])('%s', async (_case, cause, ambiguous, what) => {
    const client = createApiClient(options(failingWith(cause)));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ kind: 'retryable', status: null, excerpt: '', ambiguous });
    expect(error.message).toBe(`PATCH /contract/C-1: ${what}`);
    expect(error.message).not.toContain(TOKEN);
    expect((error.cause as Error).message).toBe('fetch failed');
  });

  it('gives up on an answer that does not come within timeoutMs: ambiguous, naming the ms', async () => {
    // Stands in for a server that accepted the request and never answers; only the abort ends it.
    const { fetch } = fakeFetch(
      (_request, signal) =>
        new Promise<Response>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    );
    const client = createApiClient(options(fetch, { timeoutMs: 20 }));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ kind: 'retryable', status: null, ambiguous: true });
    expect(error.message).toBe('PATCH /contract/C-1: no answer within 20 ms');
    expect(error.message).not.toContain(TOKEN);
  });

  it('names a read in its failure', async () => {
    const client = createApiClient(options(failingWith({ code: 'ECONNRESET' })));

    const error = await rejection(client.read('C/1', TOKEN));

    expect(error.message).toBe('GET /contract/C%2F1: connection reset (ECONNRESET)');
  });
});

/** A 200 whose body breaks off after its first bytes, as undici reports a connection lost mid-body. */
function brokenBody(): Response {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"Name":"Clea'));
      controller.error(new TypeError('terminated', { cause: { code: 'UND_ERR_SOCKET' } }));
    },
  });
  return new Response(stream, { status: 200, headers: { 'Content-Type': 'application/json' } });
}

describe('createApiClient: an answer that breaks off', () => {
  // The read is classified "permanent: not JSON", so the lane never retries a read that a reset cut short.
  it('a read whose body is cut off by a reset is retryable, not permanent', async () => {
    const { fetch } = fakeFetch(async () => brokenBody());
    const client = createApiClient(options(fetch));

    const error = await rejection(client.read('C-1', TOKEN));

    expect(error.kind).toBe('retryable');
  });
});

describe('createApiClient: the token it sent', () => {
  // The redactor is optional; the client knows the one token it must never quote.
  it('censors its own bearer token echoed in an error body even without a redactor', async () => {
    const { fetch } = fakeFetch(async () => new Response(JSON.stringify({ error: 'invalid_token', token: TOKEN }), { status: 401 }));
    const client = createApiClient(options(fetch));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error.message).not.toContain(TOKEN);
    expect(error.excerpt).not.toContain(TOKEN);
  });
});

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A loopback HTTP server answering with `handle`; returns its base URL. */
async function serve(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(handle);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function realOptions(baseUrl: string, extra: Partial<ApiClientOptions> = {}): ApiClientOptions {
  return { baseUrl, readPath: '/contract/{id}', timeoutMs: 5000, userAgent: 'contract-sync/test', correlationId: 'run-1', ...extra };
}

describe('createApiClient: over loopback HTTP (node:http)', () => {
  it('classifies a refused connection as retryable and not ambiguous', async () => {
    const client = createApiClient(realOptions(`http://127.0.0.1:${await closedPort()}`));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ kind: 'retryable', status: null, ambiguous: false, message: 'PATCH /contract/C-1: connection refused (ECONNREFUSED)' });
  });

  it('classifies a connection dropped after the request arrived as ambiguous', async () => {
    const baseUrl = await serve((request) => request.socket.destroy());
    const client = createApiClient(realOptions(baseUrl));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ kind: 'retryable', status: null, ambiguous: true });
    expect(error.message).toMatch(/^PATCH \/contract\/C-1: connection (closed|reset) \((UND_ERR_SOCKET|ECONNRESET)\)$/);
  });

  it('gives up on a server that never answers after timeoutMs, as ambiguous', async () => {
    const baseUrl = await serve(() => undefined);
    const client = createApiClient(realOptions(baseUrl, { timeoutMs: 20 }));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ kind: 'retryable', status: null, ambiguous: true, message: 'PATCH /contract/C-1: no answer within 20 ms' });
  });

  // A proxy or gateway between the engine and the service: its answers are not the service's.
  it.each<[string, number, Record<string, string>, string, RegExp]>([
    [
      "a proxy's login page (200, HTML)",
      200,
      { 'Content-Type': 'text/html' },
      '<html><body>Sign in to the corporate proxy</body></html>',
      /^PATCH \/contract\/C-1: unexpected answer 200 OK \(an HTML page\) from http:\/\/127\.0\.0\.1:\d+: <html>/,
    ],
    [
      "a gateway's 202 Accepted with a body",
      202,
      { 'Content-Type': 'application/json' },
      '{"queued":true}',
      /^PATCH \/contract\/C-1: unexpected answer 202 Accepted from http:\/\/127\.0\.0\.1:\d+: \{"queued":true\}$/,
    ],
  ])('takes %s for an ambiguous error, not a success', async (_case, status, headers, body, message) => {
    const baseUrl = await serve((_request, response) => response.writeHead(status, headers).end(body));
    const client = createApiClient(realOptions(baseUrl));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error).toMatchObject({ status, ambiguous: true });
    expect(error.message).toMatch(message);
  });

  it('a read answered 500 is retryable and not ambiguous; a PATCH answered 500 is ambiguous', async () => {
    const baseUrl = await serve((_request, response) => response.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"internal"}'));
    const client = createApiClient(realOptions(baseUrl));

    const read = await rejection(client.read('C-1', TOKEN));
    const patched = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(read).toMatchObject({ kind: 'retryable', status: 500, ambiguous: false });
    expect(patched).toMatchObject({ kind: 'retryable', status: 500, ambiguous: true });
  });

  it('sends the PATCH with its headers and body as built', async () => {
    const received: { method?: string; url?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    const baseUrl = await serve((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        Object.assign(received, { method: request.method, url: request.url, headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    const client = createApiClient(realOptions(baseUrl));

    const outcome = await client.patch('C 1', OPS, TOKEN);

    expect(outcome).toEqual({});
    expect(received).toMatchObject({ method: 'PATCH', url: '/contract/C%201', body: JSON.stringify(OPS) });
    expect(received.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'user-agent': 'contract-sync/test',
      'x-correlation-id': 'run-1',
    });
  });

  it('reads the status line as the server sent it, and keeps one connection for consecutive requests', async () => {
    let connections = 0;
    const baseUrl = await serve((_request, response) => {
      response.statusMessage = 'Other Members';
      response.writeHead(409, { 'Content-Type': 'application/json' }).end('{"error":"conflict"}');
    });
    server!.on('connection', () => (connections += 1));
    const client = createApiClient(realOptions(baseUrl));

    const first = await rejection(client.patch('C-1', OPS, TOKEN));
    const second = await rejection(client.patch('C-2', OPS, TOKEN));

    expect(first.message).toBe('PATCH /contract/C-1: 409 Other Members: {"error":"conflict"}');
    expect(second).toMatchObject({ status: 409, conflict: true });
    expect(connections).toBe(1);
  });

  it('a read whose body breaks off after its first bytes is retryable: the answer broke off', async () => {
    const baseUrl = await serve((request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      response.write('{"Name":"Clea', () => request.socket.destroy());
    });
    const client = createApiClient(realOptions(baseUrl));

    const error = await rejection(client.read('C-1', TOKEN));

    expect(error).toMatchObject({ kind: 'retryable', status: null, ambiguous: true, message: 'GET /contract/C-1: the answer broke off' });
  });

  it('a read whose body stops coming ends at timeoutMs', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      response.write('{"Name":"Clea');
    });
    const client = createApiClient(realOptions(baseUrl, { timeoutMs: 50 }));

    const error = await rejection(client.read('C-1', TOKEN));

    // Said as the timeout it is (issue 41), not as a break.
    expect(error).toMatchObject({ kind: 'retryable', message: 'GET /contract/C-1: no complete answer within 50 ms: the body stopped coming' });
  });

  // fetch follows redirects by default, and a 303 turns the PATCH into a GET: its 200 is then
  // taken for a PATCH that succeeded and gets recorded, while nothing was patched.
  it('does not take a redirected PATCH (303 -> GET 200) for a success', async () => {
    const methods: string[] = [];
    const baseUrl = await serve((request, response) => {
      methods.push(request.method ?? '');
      if (request.method === 'PATCH') response.writeHead(303, { Location: request.url }).end();
      else response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
    const client = createApiClient(realOptions(baseUrl));

    const patched = client.patch('C-1', OPS, TOKEN);

    await expect(patched).rejects.toBeInstanceOf(ApiError);
    expect(methods).toEqual(['PATCH']);
  });
});
