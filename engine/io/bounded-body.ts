/**
 * Adapter: an HTTP answer's body read up to a bound, so that a service or a receiver that answers
 * something endless or huge costs at most the bound (and one chunk) of memory, never the run.
 */

/** An answer's body larger than its bound. */
export class BodyTooLargeError extends Error {
  readonly code = 'body-too-large';
  constructor(maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The body as UTF-8 text; rejects with BodyTooLargeError past `maxBytes` (the rest is not read), and as the stream does otherwise. */
export async function readBodyBounded(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new BodyTooLargeError(maxBytes);
      chunks.push(value);
    }
  } catch (error) {
    // Stops the download: nobody reads the rest.
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks).toString('utf8');
}
