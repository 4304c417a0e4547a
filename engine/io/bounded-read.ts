/**
 * Adapter: every file read before parsing is a regular file and has a size bound. A path may name
 * something that blocks (a FIFO with no writer: opening it for reading waits forever), something
 * endless (`/dev/zero`, `/dev/urandom`) or something huge: a FIFO, device or socket is refused
 * before any byte is read (it is opened without blocking, then checked), and of a regular file at
 * most the bound and one byte more is ever read, so the parser can refuse it by size instead of the
 * run hanging or running out of memory.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';

/** Bounds, in bytes, of what each kind of input may hold. */
export const READ_LIMITS = {
  /** A secret file: a client secret or a database URL. */
  secret: 64 * 1024,
  /** A saved plan (plan --out) read by apply and show. */
  plan: 256 * 1024 * 1024,
} as const;

const CHUNK_BYTES = 64 * 1024;

/**
 * At most `maxBytes + 1` bytes of `file` (more than `maxBytes` means it is too large). The buffer is
 * sized by the file's size as stat says (and one byte more, to see its end): one allocation and no
 * copy for a regular file. It grows, up to the bound, for a file that grew or a device whose size
 * stat does not know.
 */
export async function readBounded(file: string, maxBytes: number): Promise<Uint8Array> {
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer; it has
  // no effect on a regular file's reads.
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotRegularFileError(file, stats);
    const { size } = stats;
    let buffer = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
    let total = 0;
    for (;;) {
      if (total === buffer.length) {
        if (total > maxBytes) break;
        const larger = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(2 * buffer.length, total + CHUNK_BYTES)));
        buffer.copy(larger, 0, 0, total);
        buffer = larger;
      }
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    // Only what was read: the rest of an unsafe allocation is never handed out.
    return buffer.subarray(0, total);
  } finally {
    await handle.close();
  }
}

/** What a path names when it is not a regular file, as messages say it. */
function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a directory';
  return 'not a regular file';
}

/**
 * A path that is no regular file; `code` is EISDIR for a directory (as reading one would fail),
 * else ENOTREG. Its message names the path and what it is.
 */
export class NotRegularFileError extends Error {
  readonly code: 'EISDIR' | 'ENOTREG';
  readonly path: string;
  /** `a FIFO (named pipe)`, `a character device`, ... */
  readonly kind: string;
  constructor(file: string, stats: Stats) {
    const kind = kindOf(stats);
    super(`${file} is ${kind}, not a regular file`);
    this.name = 'NotRegularFileError';
    this.code = stats.isDirectory() ? 'EISDIR' : 'ENOTREG';
    this.path = file;
    this.kind = kind;
  }
}

/** Why `error` of a read was refused, in words, for a message about `file`: `a FIFO (named pipe), not a regular file`. */
export function readProblem(error: unknown): string | undefined {
  if (error instanceof NotRegularFileError && error.code === 'ENOTREG') return `${error.kind}, not a regular file`;
  return undefined;
}

/** A file larger than its bound; `code` is EFBIG, as callers that report `error.code` show it. */
export class FileTooLargeError extends Error {
  readonly code = 'EFBIG';
  readonly path: string;
  constructor(file: string, maxBytes: number) {
    super(`${file} is larger than ${maxBytes} bytes`);
    this.name = 'FileTooLargeError';
    this.path = file;
  }
}

/** `file` as UTF-8 text; rejects with a FileTooLargeError past `maxBytes`, and as `readFile` does otherwise. */
export async function readTextBounded(file: string, maxBytes: number): Promise<string> {
  const bytes = await readBounded(file, maxBytes);
  if (bytes.byteLength > maxBytes) throw new FileTooLargeError(file, maxBytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * A file the engine keeps itself (the file state store's journals, run records, history, format
 * marker), read whole (up to 2 GiB, a Buffer's most): as readBounded, a FIFO, device or socket put there is refused before a byte
 * is read (NotRegularFileError, naming it), instead of hanging the run. No bound of its own: a
 * tenant's journal grows with its contracts.
 */
export async function readRegularFile(file: string): Promise<Buffer> {
  const bytes = await readBounded(file, MAX_WHOLE_FILE);
  if (bytes.byteLength > MAX_WHOLE_FILE) throw new FileTooLargeError(file, MAX_WHOLE_FILE);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** readRegularFile as UTF-8 text. */
export async function readRegularText(file: string): Promise<string> {
  return (await readRegularFile(file)).toString('utf8');
}

/** readRegularText, synchronously: for the many small files a plan reads at its start (a run record each). */
export function readRegularTextSync(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(file, stats);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

// The most a Buffer holds, less the byte readBounded reads past its bound.
const MAX_WHOLE_FILE = 2 ** 31 - 2;

/**
 * `file` opened with `flags` (e.g. O_RDONLY, or O_WRONLY | O_APPEND | O_CREAT) only when it is a
 * regular file: opened without blocking, then checked, so that a FIFO or device in its place is
 * refused (NotRegularFileError, naming it) instead of the open or the first read waiting forever.
 */
export async function openRegular(file: string, flags: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file, flags | constants.O_NONBLOCK, 0o666);
  } catch (error) {
    // ENXIO: a FIFO opened for writing without a reader.
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') throw new NotRegularFileError(file, await lstat(file));
    throw error;
  }
  const stats = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!stats.isFile()) {
    await handle.close();
    throw new NotRegularFileError(file, stats);
  }
  return handle;
}
