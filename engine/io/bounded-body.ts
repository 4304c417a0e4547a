/**
 * Adapter: every answer's body read from the network has a size bound, as every file has
 * (./bounded-read.ts). A service, proxy or identity provider may answer with a body of any size:
 * past the bound the reading stops, the connection is destroyed (nothing more arrives), and the
 * request fails with an AnswerTooLargeError naming the bound; at most the bound is ever held.
 */

/** Bounds, in bytes, of the body of one answer. */
export const ANSWER_LIMITS = {
  /**
   * An answer of the service (a read, a PATCH's answer, an error body): one contract. 16 MiB, the
   * bound of a whole desired-state file, which holds thousands of contracts; one contract with ten
   * thousand members is well under 2 MiB.
   */
  api: 16 * 1024 * 1024,
  /** An identity provider's answer (discovery, a token): a few KiB in practice. */
  identityProvider: 1024 * 1024,
} as const;

// Kept of a body refused by size, for an error's excerpt.
const HEAD_BYTES = 4096;

/** `16 MiB`, `512 KiB`, `100 bytes`: a bound as a message says it. */
export function formatBound(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (bytes >= 1024 * 1024 && Number.isInteger(mib)) return `${mib} MiB`;
  const kib = bytes / 1024;
  if (bytes >= 1024 && Number.isInteger(kib)) return `${kib} KiB`;
  return `${bytes} bytes`;
}

/** An answer whose body is larger than its bound; `head` is its first bytes as text, for an excerpt. */
export class AnswerTooLargeError extends Error {
  readonly code = 'answer-too-large';
  readonly maxBytes: number;
  readonly head: string;
  constructor(maxBytes: number, head: string) {
    super(`the answer's body is larger than ${formatBound(maxBytes)}, the bound for one answer; it was not read further`);
    this.name = 'AnswerTooLargeError';
    this.maxBytes = maxBytes;
    this.head = head;
  }
}

/** A Content-Length that already says the body is past the bound. */
export function declaredTooLarge(contentLength: string | null | undefined, maxBytes: number): boolean {
  if (contentLength === null || contentLength === undefined || !/^\d+$/.test(contentLength.trim())) return false;
  return Number(contentLength.trim()) > maxBytes;
}

/** Collects chunks up to `maxBytes`; `add` answers false once the bound is passed (the caller stops reading). */
export class BoundedChunks {
  readonly #maxBytes: number;
  readonly #chunks: Uint8Array[] = [];
  #total = 0;
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  add(chunk: Uint8Array): boolean {
    this.#total += chunk.byteLength;
    if (this.#total > this.#maxBytes) {
      // The first bytes stay for the excerpt; the rest is dropped at once.
      this.#chunks.splice(0, this.#chunks.length, this.bytes().subarray(0, HEAD_BYTES));
      return false;
    }
    this.#chunks.push(chunk);
    return true;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }

  tooLarge(): AnswerTooLargeError {
    return new AnswerTooLargeError(this.#maxBytes, this.bytes().subarray(0, HEAD_BYTES).toString('utf8'));
  }
}

/**
 * The body of a Fetch `Response`, at most `maxBytes`; past the bound the stream is cancelled (undici
 * then closes the connection) and an AnswerTooLargeError is thrown.
 */
export async function readResponseBounded(response: Response, maxBytes: number): Promise<Buffer> {
  if (response.body === null) return Buffer.alloc(0);
  if (declaredTooLarge(response.headers.get('content-length'), maxBytes)) {
    await response.body.cancel().catch(() => undefined);
    throw new AnswerTooLargeError(maxBytes, '');
  }
  const chunks = new BoundedChunks(maxBytes);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks.bytes();
    if (!chunks.add(value)) {
      await reader.cancel().catch(() => undefined);
      throw chunks.tooLarge();
    }
  }
}
