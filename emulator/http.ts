/** Small HTTP helpers shared by the API and admin handlers. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const MAX_BODY_BYTES = 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, headers);
  res.end();
}

export type BodyResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: 'too-large' };

/**
 * The request body as UTF-8, or `too-large` past `limit` bytes. The rest of an oversized body is
 * left to Node, which discards it after the response so that the connection can be reused.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return Promise.resolve({ ok: false, reason: 'too-large' });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Answer now; the rest of the body keeps flowing into the void so the socket stays usable.
      chunks.length = 0;
      req.off('end', onEnd);
      resolve({ ok: false, reason: 'too-large' });
    }
    function onEnd(): void {
      resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') });
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}

/** `application/json`, with or without parameters such as `charset=utf-8`. */
/** The media type of a Content-Type header, lower case and without parameters; '' when absent. */
export function mediaTypeOf(value: string | undefined): string {
  return value?.split(';')[0]?.trim().toLowerCase() ?? '';
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** Ends the connection with no answer at all: what a crashed proxy or a network failure looks like. */
export function dropConnection(res: ServerResponse): void {
  res.socket?.resetAndDestroy();
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The path of a request URL, without the query. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export function isJsonContentType(value: string | undefined): boolean {
  return mediaTypeOf(value) === 'application/json';
}
