/**
 * Adapter: the files a command writes on request (plan --out, apply and drift --report). Only a
 * regular file is ever written, always whole (a temporary file beside it, then renamed onto it):
 * a device, a FIFO, a socket, a directory or a symbolic link is refused before the command does
 * anything, so that nothing is replaced that was not a file. `-` is refused too: stdout already
 * carries the command's output (`--format json` for the plan as JSON).
 */
import { randomBytes } from 'node:crypto';
import { lstat, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** One line, naming the flag and the file as given, for the CLI to print as it is; exit 1. */
export class OutputFileError extends Error {
  readonly code = 'output-file';
  constructor(message: string) {
    super(message);
    this.name = 'OutputFileError';
  }
}

export interface OutputFile {
  /** The flag that named it: `--out`, `--report`. */
  readonly flag: string;
  /** As given on the command line. */
  readonly name: string;
  /** The working directory `name` is relative to. */
  readonly cwd: string;
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'error';
}

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EEXIST: 'already exists',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
};

/** What a file-system error code means, in words (the code kept for a search). */
export function describeErrorCode(code: string): string {
  const reason = REASONS[code];
  return reason === undefined ? code : `${reason} (${code})`;
}

function kindOf(stats: {
  isDirectory(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isSymbolicLink(): boolean;
}): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Where `output` is written; rejects with an OutputFileError when it may not be (or cannot be). */
export async function checkOutputFile(output: OutputFile): Promise<string> {
  const { flag, name } = output;
  function refuse(why: string): OutputFileError {
    return new OutputFileError(`${flag} ${name}: ${why}`);
  }
  if (name === '-') throw refuse('"-" is not supported: name a file (the output itself goes to stdout)');
  if (name === '') throw refuse('name a file');
  const file = path.resolve(output.cwd, name);
  let existing;
  try {
    existing = await lstat(file);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw refuse(`cannot be checked: ${describeErrorCode(errorCode(error))}`);
  }
  if (existing !== undefined && !existing.isFile()) throw refuse(`is ${kindOf(existing)}; ${flag} writes regular files only`);
  const directory = path.dirname(file);
  let parent;
  try {
    parent = await stat(directory);
  } catch (error) {
    throw refuse(`its directory ${path.dirname(name) === '.' ? directory : path.dirname(name)} cannot be used: ${describeErrorCode(errorCode(error))}`);
  }
  if (!parent.isDirectory()) throw refuse(`${path.dirname(name)} is not a directory`);
  return file;
}

/**
 * Writes `content` to `output` whole: a temporary file beside it, synced, then renamed onto it.
 * Rejects with an OutputFileError (one line naming the file) for anything it refuses or fails at.
 */
export async function writeOutputFile(output: OutputFile, content: string): Promise<void> {
  const file = await checkOutputFile(output);
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx', 0o644);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new OutputFileError(`${output.flag} ${output.name}: cannot be written: ${describeErrorCode(errorCode(error))}`);
  }
}

/**
 * A file-system error that escaped its command (it carries `syscall`, `code` and `path`), as one
 * line naming the path; undefined for anything else.
 */
export function fileSystemErrorLine(error: unknown): string | undefined {
  if (error instanceof OutputFileError) return error.message;
  const { code, path: file, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code !== 'string' || typeof file !== 'string' || typeof syscall !== 'string') return undefined;
  return `${file}: ${describeErrorCode(code)} (${syscall})`;
}
