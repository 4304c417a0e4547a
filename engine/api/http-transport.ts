/**
 * The CMS client's transport: Node's own HTTP client (node:http, node:https) with kept-alive
 * connections. A run sends one request per contract, so what a request costs the engine counts:
 * through this client, a PATCH answered 204 costs about 0.78 ms of CPU over fetch (its Request,
 * Headers and web streams around undici) and 0.32 ms over node:http on Node 20; 0.43 ms against
 * 0.22 ms on Node 24 (bench/http-client.ts). Redirects are not followed, as the client wants (a
 * followed 303 would turn a PATCH into a GET whose 200 looks like success).
 */
import http from 'node:http';
import https from 'node:https';
import { BoundedChunks, declaredTooLarge } from '../io/bounded-body.ts';

/** A request as the client builds it: plain data, so that building one costs next to nothing. */
export interface ApiRequest {
  readonly method: 'PATCH' | 'GET';
  readonly url: string;
  /** Names as sent; look one up with headerOf. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What the client reads of an answer: a Fetch `Response` has it, and so does this transport's answer. */
export interface ApiAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  /** The body as text; rejects when it broke off (a reset or the timeout mid-body), or with an AnswerTooLargeError past the bound. */
  text(): Promise<string>;
}

/**
 * A failure before the transport had a connection for the request (refused, not resolved, or the
 * timeout while connecting): the service cannot have received it. Its cause is the system error.
 */
export class NotConnectedError extends Error {
  constructor(cause: unknown) {
    super('no connection', { cause });
    this.name = 'NotConnectedError';
  }
}

/** A header of `request`, its name in any case. */
export function headerOf(request: ApiRequest, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(request.headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

const agents: Readonly<Record<string, http.Agent>> = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** Several answers of one header name, joined as Fetch's Headers.get joins them. */
function joined(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Sends `request`; resolves once the answer's status and headers are in, its body read on, at most
 * `maxBodyBytes` of it: past that the socket is destroyed (nothing more is received) and the body's
 * text rejects with an AnswerTooLargeError. `signal` aborts the request and the reading of its body.
 */
export function sendOverHttp(request: ApiRequest, signal: AbortSignal, maxBodyBytes: number): Promise<ApiAnswer> {
  const url = new URL(request.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
  const client = url.protocol === 'https:' ? https : http;
  const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
  const headers = body === undefined ? request.headers : { ...request.headers, 'Content-Length': String(body.length) };
  return new Promise<ApiAnswer>((resolve, reject) => {
    let connected = false;
    const sending = client.request(url, { method: request.method, headers, agent: agents[url.protocol], signal }, (response) => {
      const chunks = new BoundedChunks(maxBodyBytes);
      const text = new Promise<string>((resolveText, rejectText) => {
        let refused = false;
        function refuse(): void {
          refused = true;
          rejectText(chunks.tooLarge());
          // The connection cannot be reused mid-body: destroying it stops the sender and frees the socket.
          response.destroy();
        }
        response.on('error', rejectText);
        if (declaredTooLarge(response.headers['content-length'], maxBodyBytes)) {
          refuse();
          return;
        }
        response.on('data', (chunk: Buffer) => {
          if (!refused && !chunks.add(chunk)) refuse();
        });
        response.on('end', () => resolveText(chunks.bytes().toString('utf8')));
      });
      // Read or not, a body that breaks off is no unhandled rejection.
      text.catch(() => undefined);
      const status = response.statusCode ?? 0;
      resolve({
        status,
        statusText: response.statusMessage ?? '',
        ok: status >= 200 && status <= 299,
        headers: { get: (name) => joined(response.headers[name.toLowerCase()]) },
        text: () => text,
      });
    });
    sending.on('socket', (socket) => {
      // A kept-alive socket is connected already; a new one once its TCP connection is made.
      if (socket.connecting) socket.once('connect', () => (connected = true));
      else connected = true;
    });
    sending.on('error', (error) => reject(connected ? error : new NotConnectedError(error)));
    sending.end(body);
  });
}
