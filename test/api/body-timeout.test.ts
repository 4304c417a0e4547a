/**
 * Issue 41, item 6: a body that stops coming half-way and is cut off by the request's timeout is
 * said to be a timeout, not "the answer broke off"; a body that breaks off (a reset) still says so.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClientOptions } from '../../engine/api/client.ts';
import type { Op } from '../../engine/model/types.ts';
import { rejection } from './helpers.ts';

const TOKEN = 'throwaway-token';
const OPS: readonly Op[] = [{ op: 'Replace', path: '/Contract/Name', value: 'Cleaning' }];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A loopback server answering every request with `answer`. */
async function serve(answer: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function options(baseUrl: string, extra: Partial<ApiClientOptions> = {}): ApiClientOptions {
  return { baseUrl, readPath: '/contract/{id}', timeoutMs: 300, userAgent: 'contract-sync/test', correlationId: 'run-1', ...extra };
}

/** Headers and half a body, then nothing. */
function stalling(status: number) {
  return (response: ServerResponse): void => {
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': '100' });
    response.write('{"Name": "half');
  };
}

const TRANSPORTS = [
  ['node:http', {}],
  ['a Fetch implementation', { fetch: globalThis.fetch }],
] as const;

describe.each(TRANSPORTS)('over %s', (_name, transport) => {
  it('a read whose body stops coming: a timeout, retryable', async () => {
    const client = createApiClient(options(await serve(stalling(200)), transport));

    const error = await rejection(client.read('C-1', TOKEN));

    expect(error.message).toBe('GET /contract/C-1: no complete answer within 300 ms: the body stopped coming');
    expect(error.kind).toBe('retryable');
  });

  it('a PATCH answered 200 whose body stops coming: an unexpected answer, said as a timeout, ambiguous', async () => {
    const baseUrl = await serve(stalling(200));
    const client = createApiClient(options(baseUrl, transport));

    const error = await rejection(client.patch('C-1', OPS, TOKEN));

    expect(error.message).toBe(`PATCH /contract/C-1: unexpected answer 200 OK whose body stopped coming (no complete answer within 300 ms) from ${baseUrl}`);
    expect(error.ambiguous).toBe(true);
  });

  it('a read whose connection is reset mid-body still "broke off"', async () => {
    const client = createApiClient(
      options(
        await serve((response) => {
          stalling(200)(response);
          setTimeout(() => response.socket?.destroy(), 20);
        }),
        { ...transport, timeoutMs: 5000 },
      ),
    );

    const error = await rejection(client.read('C-1', TOKEN));

    expect(error.message).toBe('GET /contract/C-1: the answer broke off');
  });
});
