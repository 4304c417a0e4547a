/**
 * Issue 41, item 3: every answer's body is bounded. A tiny loopback server streams a body larger than
 * the bound (injected small, so a few MiB prove it); the request fails with one line naming the
 * bound, and the connection is destroyed before the server has sent the rest (nothing more is read).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClientOptions } from '../../engine/api/client.ts';
import { ApiError } from '../../engine/api/errors.ts';
import { AuthError, createTenantTokens } from '../../engine/auth/index.ts';
import { formatBound } from '../../engine/io/bounded-body.ts';
import type { Op } from '../../engine/model/types.ts';
import { rejection } from '../api/helpers.ts';
import { DISCOVERY_PATH, discoveryDocument, TOKEN_PATH } from '../auth/local-server.ts';

const BOUND = 1024 * 1024;
const STREAMED = 8 * BOUND;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
const TOKEN = 'throwaway-token';
const OPS: readonly Op[] = [{ op: 'Replace', path: '/Contract/Name', value: 'Cleaning' }];

interface Streamed {
  /** Bytes written before the server saw the connection close or finished. */
  sent: number;
  /** The whole body went out: the client read past its bound. */
  finished: boolean;
}

interface StreamingServer {
  readonly url: string;
  readonly answers: Streamed[];
  close(): Promise<void>;
}

type Answer = (request: IncomingMessage, response: ServerResponse, stream: (response: ServerResponse) => void) => void;

const servers: StreamingServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Streams STREAMED bytes at the reader's pace, stopping when the client goes away. */
async function startServer(answer: Answer): Promise<StreamingServer> {
  const answers: Streamed[] = [];
  function stream(response: ServerResponse): void {
    const streamed: Streamed = { sent: 0, finished: false };
    answers.push(streamed);
    response.on('close', () => (closed = true));
    let closed = false;
    function more(): void {
      while (!closed && streamed.sent < STREAMED) {
        streamed.sent += CHUNK.length;
        if (!response.write(CHUNK)) return void response.once('drain', more);
      }
      if (!closed) {
        streamed.finished = true;
        response.end();
      }
    }
    more();
  }
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(request, response, stream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const started: StreamingServer = {
    url,
    answers,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(started);
  return started;
}

function clientOptions(server: StreamingServer, extra: Partial<ApiClientOptions> = {}): ApiClientOptions {
  return {
    baseUrl: server.url,
    readPath: '/contract/{id}',
    timeoutMs: 20_000,
    userAgent: 'contract-sync/test',
    correlationId: 'run-1',
    maxAnswerBytes: BOUND,
    ...extra,
  };
}

/** Waits until the server saw the answer end: closed by the client, or finished. */
async function settled(server: StreamingServer): Promise<Streamed> {
  for (let tries = 0; tries < 200 && server.answers.length === 0; tries += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  const streamed = server.answers[0]!;
  await new Promise((resolve) => setTimeout(resolve, 50));
  return streamed;
}

const TRANSPORTS = [
  ['node:http', {}],
  ['a Fetch implementation', { fetch: globalThis.fetch }],
] as const;

describe.each(TRANSPORTS)('answers of the service over %s', (_name, transport) => {
  it('a read answered 200 with a body past the bound fails naming the bound, not retried, and the connection is closed', async () => {
    const server = await startServer((_request, response, stream) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      stream(response);
    });
    const client = createApiClient(clientOptions(server, transport));

    const error = await rejection(client.read('C-1', TOKEN));

    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe(`GET /contract/C-1: the answer's body is larger than 1 MiB, the bound for one answer; it was not read further`);
    expect((error as ApiError).kind).toBe('permanent');
    const streamed = await settled(server);
    expect(streamed.finished).toBe(false);
    expect(streamed.sent).toBeLessThan(STREAMED);
  });

  it('a PATCH answered 500 with a body past the bound keeps its status and excerpt, and names the bound', async () => {
    const server = await startServer((_request, response, stream) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      stream(response);
    });
    const client = createApiClient(clientOptions(server, transport));

    const error = (await rejection(client.patch('C-1', OPS, TOKEN))) as ApiError;

    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(500);
    expect(error.ambiguous).toBe(true);
    expect(error.message).toMatch(
      /^PATCH \/contract\/C-1: 500 Internal Server Error: x{300}…; the answer's body is larger than 1 MiB, the bound for one answer; it was not read further$/,
    );
    expect((await settled(server)).finished).toBe(false);
  });

  it('a PATCH answered 200 with a body past the bound is an unexpected, ambiguous answer naming the bound', async () => {
    const server = await startServer((_request, response, stream) => {
      response.writeHead(200);
      stream(response);
    });
    const client = createApiClient(clientOptions(server, transport));

    const error = (await rejection(client.patch('C-1', OPS, TOKEN))) as ApiError;

    expect(error.ambiguous).toBe(true);
    expect(error.message).toMatch(
      /^PATCH \/contract\/C-1: unexpected answer 200 OK from http:\/\/127\.0\.0\.1:\d+: x{300}…; the answer's body is larger than 1 MiB/,
    );
    expect((await settled(server)).finished).toBe(false);
  });

  it('a Content-Length past the bound is refused before any of the body is read', async () => {
    const server = await startServer((_request, response, stream) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(STREAMED) });
      stream(response);
    });
    const client = createApiClient(clientOptions(server, transport));

    const error = (await rejection(client.read('C-1', TOKEN))) as ApiError;

    expect(error.message).toBe(`GET /contract/C-1: the answer's body is larger than 1 MiB, the bound for one answer; it was not read further`);
    expect((await settled(server)).finished).toBe(false);
  });

  it('a body just under the bound is read whole', async () => {
    const server = await startServer((_request, response) => {
      const name = 'y'.repeat(BOUND - 100);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Name: name }));
    });
    const client = createApiClient(clientOptions(server, transport));

    const outcome = await client.read('C-1', TOKEN);

    expect(outcome.fields.Name).toHaveLength(BOUND - 100);
  });
});

describe('answers of the identity provider', () => {
  function tokens(server: StreamingServer) {
    return createTenantTokens({
      auth: { url: server.url, realm: 'cms' },
      tenants: { acme: { clientId: 'acme-rw', clientSecret: { env: 'ACME_SECRET' } } },
      scopes: ['core:write'],
      env: { ACME_SECRET: 'acme-secret-throwaway' },
      maxAnswerBytes: BOUND,
      sleep: async () => undefined,
    });
  }

  it('a token answer past the bound fails the grant naming the bound, once, without retrying', async () => {
    let posts = 0;
    const server = await startServer((request, response, stream) => {
      if (request.url === DISCOVERY_PATH) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(discoveryDocument(started.url)));
        return;
      }
      if (request.url === TOKEN_PATH) posts += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      stream(response);
    });
    const started = server;

    const error = await tokens(server)
      .get('acme')
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );

    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).message).toBe(
      `tenant acme: token request failed: the answer from ${server.url} is larger than 1 MiB, the bound for one answer of the identity provider; it was not read further`,
    );
    expect(posts).toBe(1);
    expect((await settled(server)).finished).toBe(false);
  });

  it('a discovery answer past the bound fails discovery naming the bound, without retrying', async () => {
    const server = await startServer((_request, response, stream) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      stream(response);
    });

    const error = await tokens(server)
      .get('acme')
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );

    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).message).toBe(
      `OIDC discovery at ${server.url}/realms/cms failed: the answer from ${server.url} is larger than 1 MiB, the bound for one answer of the identity provider; it was not read further`,
    );
    expect(server.answers).toHaveLength(1);
    expect((await settled(server)).finished).toBe(false);
  });
});

describe('formatBound', () => {
  it.each([
    [16 * 1024 * 1024, '16 MiB'],
    [1024 * 1024, '1 MiB'],
    [512 * 1024, '512 KiB'],
    [1500, '1500 bytes'],
  ])('%d bytes: %s', (bytes, said) => {
    expect(formatBound(bytes)).toBe(said);
  });
});
