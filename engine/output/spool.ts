/**
 * Adapter: output held in a file until the run knows it may be written. A plan made one tenant at
 * a time is complete only at the end, and a run with an error in its last tenant must write nothing
 * (no half plan in a pull-request comment or a PLAN.json): the pieces go to a spool, which is then
 * copied to stdout or renamed onto --out, or discarded. Memory stays that of one piece.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, readSync, renameSync, rmSync, writeSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** What is gathered before it goes to the file (a plan writes a piece per contract), and what is copied out at once. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Where copyTo writes, each chunk after the promise of the one before settled (backpressure): the
 * bytes as they are in the spool, or text (a chunk then never ends inside a character).
 */
export type SpoolOut =
  | {
      readonly bytes: (chunk: Buffer) => Promise<void>;
      /**
       * After a chunk's promise settled: true when `bytes` holds nothing of it any more (written, or
       * copied), so that its buffer may take the next chunk. Left out: a fresh buffer each time.
       */
      readonly done?: () => boolean;
    }
  | { readonly text: (chunk: string) => Promise<void> };

export interface Spool {
  write(text: string): void;
  /** How many bytes were written since the spool was made or reset: a mark for copyTo's range. */
  position(): number;
  /** Forgets everything written (the run starts over). */
  reset(): void;
  /** Copies the spooled bytes from `from` (default 0) up to `to` (default: all) to `out`, in chunks. */
  copyTo(out: SpoolOut, from?: number, to?: number): Promise<void>;
  /** Moves the spool onto `file` (same directory: an atomic rename); the spool is then closed. */
  commitTo(file: string): void;
  /** Closes and removes the spool; idempotent. */
  discard(): void;
}

function fileSpool(file: string, cleanup: () => void): Spool {
  const fd = openSync(file, 'w+', 0o644);
  let size = 0;
  let open = true;
  // Pieces are encoded into this buffer as they come (no joined string, no copy), written to the file when it is full.
  const gathered = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  function close(): void {
    if (!open) return;
    open = false;
    closeSync(fd);
  }
  function writeAll(bytes: Buffer, length: number): void {
    let done = 0;
    while (done < length) done += writeSync(fd, bytes, done, length - done, size + done);
    size += length;
  }
  function flush(): void {
    if (used === 0) return;
    writeAll(gathered, used);
    used = 0;
  }
  return {
    write(text) {
      // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair: 4 bytes for 2 units).
      if (text.length * 3 > CHUNK_BYTES - used) {
        flush();
        if (text.length * 3 > CHUNK_BYTES) {
          const bytes = Buffer.from(text, 'utf8');
          writeAll(bytes, bytes.length);
          return;
        }
      }
      used += gathered.write(text, used);
    },
    position: () => size + used,
    reset() {
      used = 0;
      ftruncateSync(fd, 0);
      size = 0;
    },
    async copyTo(out, from = 0, to = Number.POSITIVE_INFINITY) {
      flush();
      const end = Math.min(to, size);
      const decoder = 'text' in out ? new StringDecoder('utf8') : undefined;
      // A stream may hold a chunk it was given until it is written: a buffer is used again only when
      // `out` says it holds nothing of it (else each chunk would be a buffer outside the JS heap,
      // left for a collection that comes late: the process's memory grows by the plan's size).
      let buffer: Buffer | undefined;
      for (let position = from; position < end;) {
        buffer ??= Buffer.allocUnsafe(CHUNK_BYTES);
        const read = readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, end - position), position);
        if (read === 0) break;
        position += read;
        const chunk = read === buffer.length ? buffer : buffer.subarray(0, read);
        // A chunk may end inside a character: the decoder keeps its first bytes for the next one.
        if ('text' in out) await out.text(decoder!.write(chunk));
        else {
          await out.bytes(chunk);
          if (out.done?.() !== true) buffer = undefined;
        }
      }
      const rest = decoder?.end() ?? '';
      if (rest !== '' && 'text' in out) await out.text(rest);
    },
    commitTo(target) {
      flush();
      close();
      renameSync(file, target);
    },
    discard() {
      used = 0;
      close();
      cleanup();
    },
  };
}

/** A spool beside `file` (to be renamed onto it). */
export function spoolBeside(file: string): Spool {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  return fileSpool(temporary, () => rmSync(temporary, { force: true }));
}

/** A spool in the system's temporary directory. */
export function temporarySpool(): Spool {
  const directory = mkdtempSync(path.join(tmpdir(), 'contract-sync-plan-'));
  return fileSpool(path.join(directory, 'output'), () => rmSync(directory, { recursive: true, force: true }));
}
