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

const CHUNK_BYTES = 64 * 1024;
/** Written text is gathered up to this many UTF-16 units before it goes to the file: a plan writes a piece per contract. */
const GATHER_UNITS = 64 * 1024;

export interface Spool {
  write(text: string): void;
  /** Forgets everything written (the run starts over). */
  reset(): void;
  /** Writes the spooled text to `write`, in chunks, each after the promise of the one before settled (backpressure). */
  copyTo(write: (text: string) => Promise<void>): Promise<void>;
  /** Moves the spool onto `file` (same directory: an atomic rename); the spool is then closed. */
  commitTo(file: string): void;
  /** Closes and removes the spool; idempotent. */
  discard(): void;
}

function fileSpool(file: string, cleanup: () => void): Spool {
  const fd = openSync(file, 'w+', 0o644);
  let size = 0;
  let open = true;
  let gathered: string[] = [];
  let gatheredUnits = 0;
  function close(): void {
    if (!open) return;
    open = false;
    closeSync(fd);
  }
  function flush(): void {
    if (gathered.length === 0) return;
    const bytes = Buffer.from(gathered.join(''), 'utf8');
    gathered = [];
    gatheredUnits = 0;
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, size + done);
    size += bytes.length;
  }
  return {
    write(text) {
      gathered.push(text);
      gatheredUnits += text.length;
      if (gatheredUnits >= GATHER_UNITS) flush();
    },
    reset() {
      gathered = [];
      gatheredUnits = 0;
      ftruncateSync(fd, 0);
      size = 0;
    },
    async copyTo(write) {
      flush();
      const buffer = Buffer.alloc(CHUNK_BYTES);
      const decoder = new StringDecoder('utf8');
      for (let position = 0; position < size;) {
        const read = readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, size - position), position);
        if (read === 0) break;
        position += read;
        // A chunk may end inside a character: the decoder keeps its first bytes for the next one.
        await write(decoder.write(buffer.subarray(0, read)));
      }
      const rest = decoder.end();
      if (rest !== '') await write(rest);
    },
    commitTo(target) {
      flush();
      close();
      renameSync(file, target);
    },
    discard() {
      gathered = [];
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
