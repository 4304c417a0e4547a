/** A tiny loopback HTTP server for identity providers the emulator cannot imitate: odd answers, hangs, foreign token endpoints. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  /** The form fields of a POST, as received. */
  readonly form: Readonly<Record<string, string>>;
}

export interface LocalServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  /** Every request, recorded on arrival (before it is answered, if ever). */
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

export type Handler = (request: ReceivedRequest, response: ServerResponse) => void;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startLocalServer(handle: Handler): Promise<LocalServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const received = { method: request.method ?? '', path: request.url ?? '', form: Object.fromEntries(new URLSearchParams(body)) };
      requests.push(received);
      handle(received, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  async function close(): Promise<void> {
    // A hung answer keeps its connection open: end it, or close() waits for it.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { url, requests, close };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Discovery for realm `cms` at `server`, naming `tokenEndpoint` (default: the server's own). */
export function discoveryDocument(server: string, tokenEndpoint = `${server}/realms/cms/protocol/openid-connect/token`): Record<string, unknown> {
  return { issuer: `${server}/realms/cms`, token_endpoint: tokenEndpoint, grant_types_supported: ['client_credentials'] };
}

export const DISCOVERY_PATH = '/realms/cms/.well-known/openid-configuration';
export const TOKEN_PATH = '/realms/cms/protocol/openid-connect/token';
