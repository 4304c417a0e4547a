/** Adapter: desired-state files from a working tree; the selection rules every source shares. */
import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { readBounded } from '../io/bounded-read.ts';
import { DEFAULT_YAML_LIMITS } from '../yaml/yaml-source.ts';
import type { DesiredFile, DesiredFileList } from './types.ts';

const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);
/** Files read at the same time. */
const READ_CONCURRENCY = 16;

export interface ReadDesiredOptions {
  /** Larger files are not loaded: their content is cut to `maxBytes + 1` bytes, which parsing refuses by size. */
  readonly maxBytes?: number;
  /** Read only these repository-relative paths (those of them that match the patterns). */
  readonly only?: ReadonlySet<string>;
}

/**
 * Where desired-state files come from: the working tree, or git objects at a commit. Every source
 * selects files with the same rules (desiredPathMatcher) and returns them sorted by path, so
 * validation cannot tell them apart.
 */
export interface DesiredSource {
  readFiles(patterns: readonly string[], options?: ReadDesiredOptions): Promise<DesiredFile[]>;
  /** The same files, listed now and read when asked (a run one tenant at a time). */
  listFiles(patterns: readonly string[], options?: Pick<ReadDesiredOptions, 'maxBytes'>): Promise<DesiredFileList>;
}

/** True for a repository-relative path that `patterns` select; never inside .git or node_modules. */
export function desiredPathMatcher(patterns: readonly string[]): (file: string) => boolean {
  const matches = picomatch([...patterns]);
  return (file) => matches(file) && !file.split('/').some((segment) => SKIPPED_DIRECTORIES.has(segment));
}

/** The static prefixes of `patterns` that hold every match (`contracts/**\/*.yaml` -> `contracts`); `''` is the whole tree. */
export function patternRoots(patterns: readonly string[]): string[] {
  const bases = [...new Set(patterns.map((pattern) => picomatch.scan(pattern).base))];
  return bases.filter((base) => !bases.some((other) => other !== base && (other === '' || base.startsWith(`${other}/`)))).sort();
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Whether `relative` is reached from `repoDir` without a symbolic link on the way: a pattern's
 * static prefix (`contracts/acme`) is opened by name, and a link there could lead out of the
 * repository. Symbolic links are ignored, as they are inside the walk.
 */
async function isPlainPathInside(repoDir: string, relative: string): Promise<boolean> {
  if (relative === '') return true;
  try {
    return (await realpath(path.join(repoDir, relative))) === path.join(await realpath(repoDir), relative);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR' || errorCode(error) === 'ELOOP') return false;
    throw error;
  }
}

/** What a directory entry or lstat names, when it is not a regular file or a directory. */
function kindOf(entry: { isSymbolicLink(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isFIFO()) return 'a FIFO (named pipe)';
  if (entry.isSocket()) return 'a socket';
  if (entry.isCharacterDevice()) return 'a character device';
  if (entry.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** Paths under a directory: the regular files, and the rest by what each is (never opened: a link could lead out, a FIFO block). */
interface Walked {
  readonly files: string[];
  readonly skipped: Map<string, string>;
}

/** Files below `directory`, repository-relative, skipping .git and node_modules. */
async function walk(repoDir: string, directory: string): Promise<Walked> {
  const walked: Walked = { files: [], skipped: new Map() };
  if (!(await isPlainPathInside(repoDir, directory))) {
    // A pattern's root that is itself a link (to a file or a directory): said once, at the root.
    const stats = await lstat(path.join(repoDir, directory)).catch(() => undefined);
    if (stats?.isSymbolicLink()) walked.skipped.set(directory, 'a symbolic link');
    return walked;
  }
  const pending = [directory];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = await readdir(path.join(repoDir, current), { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      // A pattern without a glob (`contracts/acme.yaml`) has the file itself as its root.
      // Only a regular file: never a FIFO or a device, which would block or never end.
      if (code === 'ENOTDIR') {
        const stats = await lstat(path.join(repoDir, current));
        if (stats.isFile()) walked.files.push(current);
        else walked.skipped.set(current, kindOf(stats));
        continue;
      }
      throw error;
    }
    for (const entry of entries) {
      const relative = current === '' ? entry.name : `${current}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name)) pending.push(relative);
      } else if (entry.isFile()) walked.files.push(relative);
      else walked.skipped.set(relative, kindOf(entry));
    }
  }
  return walked;
}

/** Every path under `repoDir` matching `patterns`: the regular files, sorted, and the others by what each is. */
async function walkDesired(repoDir: string, patterns: readonly string[]): Promise<Walked> {
  const selected = desiredPathMatcher(patterns);
  // Walk only below each pattern's static prefix: `contracts/**/*.yaml` walks `contracts/`.
  const walks = await Promise.all(patternRoots(patterns).map((base) => walk(repoDir, base)));
  const skipped = new Map<string, string>();
  for (const { skipped: found } of walks) for (const [file, kind] of found) if (selected(file)) skipped.set(file, kind);
  return { files: [...new Set(walks.flatMap((walked) => walked.files).filter(selected))].sort(), skipped };
}

/** Every regular file under `repoDir` matching `patterns` (repository-relative globs), sorted by path. */
export async function listDesiredPaths(repoDir: string, patterns: readonly string[]): Promise<string[]> {
  return (await walkDesired(repoDir, patterns)).files;
}

export async function readDesiredFiles(repoDir: string, patterns: readonly string[], options: ReadDesiredOptions = {}): Promise<DesiredFile[]> {
  const { only } = options;
  const list = await listDesiredFiles(repoDir, patterns, options);
  return list.read(only ? list.paths.filter((relative) => only.has(relative)) : list.paths);
}

/** Every file under `repoDir` matching `patterns`, sorted by path, each read when asked. */
export async function listDesiredFiles(
  repoDir: string,
  patterns: readonly string[],
  options: Pick<ReadDesiredOptions, 'maxBytes'> = {},
): Promise<DesiredFileList> {
  const maxBytes = options.maxBytes ?? DEFAULT_YAML_LIMITS.maxBytes;
  const walked = await walkDesired(repoDir, patterns);
  const paths = walked.skipped.size === 0 ? walked.files : [...walked.files, ...walked.skipped.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { paths, read: (wanted) => readPaths(repoDir, wanted, walked.skipped, maxBytes) };
}

/** The files at `paths`, in that order: links, FIFOs and devices the patterns select listed unread, so that parsing says so. */
async function readPaths(repoDir: string, paths: readonly string[], skipped: ReadonlyMap<string, string>, maxBytes: number): Promise<DesiredFile[]> {
  // A few files at a time: every file of a large repository opened at once holds a buffer each
  // before any is done (and may run out of file descriptors).
  const files: DesiredFile[] = new Array<DesiredFile>(paths.length);
  let next = 0;
  async function reader(): Promise<void> {
    while (next < paths.length) {
      const index = next++;
      const relative = paths[index]!;
      const kind = skipped.get(relative);
      files[index] =
        kind === undefined
          ? { path: relative, content: await readBounded(path.join(repoDir, relative), maxBytes) }
          : { path: relative, content: '', skipped: kind };
    }
  }
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, paths.length) }, reader));
  return files;
}

/** The desired-state files of the working tree at `repoDir`, uncommitted edits included. */
export function workingTreeSource(repoDir: string): DesiredSource {
  return {
    readFiles: (patterns, options) => readDesiredFiles(repoDir, patterns, options),
    listFiles: (patterns, options) => listDesiredFiles(repoDir, patterns, options),
  };
}
