/**
 * Adapter: text and bytes written to a stream at the reader's pace (backpressure), so that output
 * to a pipe read slowly stays in the reader's hands, not in this process's memory.
 */
import { Writable } from 'node:stream';

/** What a writable stream says about its buffer: write() returned false, 'drain' says when it has room again. */
export interface Drainable {
  once?(event: 'drain' | 'close' | 'error', listener: (error?: Error) => void): unknown;
  off?(event: 'drain' | 'close' | 'error', listener: (error?: Error) => void): unknown;
  readonly destroyed?: boolean;
}

/** The most written at once by writeOut, in UTF-16 code units. */
const WRITE_CHUNK = 1024 * 1024;

/**
 * Writes `text` to `stream` respecting backpressure: in chunks of at most 1 Mi characters, each
 * after the stream drained what it could not take at once. Output to a pipe read slowly then stays
 * in the reader's hands, not in this process's memory (a plan of 100,000 contracts is 350 MB).
 * A stream without `once` (a test's collector) takes every chunk as it comes. Rejects when the
 * stream fails while it waits (EPIPE).
 */
export async function writeOut(stream: { write(text: string): unknown } & Drainable, text: string): Promise<void> {
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + WRITE_CHUNK);
    // Never between the two halves of a surrogate pair: each half alone would be written as U+FFFD.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    const accepted = stream.write(at === 0 && end === text.length ? text : text.slice(at, end));
    at = end;
    if (accepted === false) await drained(stream);
  }
}

/** A Node stream (process.stdout: a file, a pipe, a terminal) takes bytes as they are; anything else (a test's collector) takes text. */
export function takesBytes(stream: object): stream is { write(chunk: Uint8Array): unknown } & Drainable {
  return stream instanceof Writable;
}

/**
 * A stream of a file descriptor (process.stdout) that holds nothing it was given: what it took is
 * in the kernel, so a buffer it was given may be filled again. Any other stream may keep a chunk
 * after it called back (a test's reader does): never.
 */
export function holdsNothing(stream: object): boolean {
  const { fd, writableLength } = stream as { readonly fd?: unknown; readonly writableLength?: unknown };
  return typeof fd === 'number' && writableLength === 0;
}

/** Writes `chunk` to a stream that takes bytes, then waits for 'drain' when it could not take it at once (backpressure, as writeOut). */
export async function writeBytesOut(stream: { write(chunk: Uint8Array): unknown } & Drainable, chunk: Uint8Array): Promise<void> {
  if (stream.write(chunk) === false) await drained(stream);
}

/** Resolves on the stream's next 'drain' (or 'close': nothing more will be taken); rejects on 'error'. */
export function drained(stream: Drainable): Promise<void> {
  if (stream.once === undefined || stream.off === undefined || stream.destroyed === true) return Promise.resolve();
  return new Promise((resolve, reject) => {
    function done(): void {
      stop();
      resolve();
    }
    function failed(error?: Error): void {
      stop();
      reject(error ?? new Error('the output stream failed'));
    }
    function stop(): void {
      stream.off!('drain', done);
      stream.off!('close', done);
      stream.off!('error', failed);
    }
    stream.once!('drain', done);
    stream.once!('close', done);
    stream.once!('error', failed);
  });
}
