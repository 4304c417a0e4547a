/** Adapter: desired-state files from a working tree; the selection rules every source shares. */
import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { readBounded } from '../io/bounded-read.ts';
import { DEFAULT_YAML_LIMITS } from '../yaml/yaml-source.ts';
import type { DesiredFile } from './types.ts';

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

/** Files below `directory`, repository-relative, skipping .git and node_modules. */
async function walk(repoDir: string, directory: string): Promise<string[]> {
  const found: string[] = [];
  if (!(await isPlainPathInside(repoDir, directory))) return found;
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
        if ((await lstat(path.join(repoDir, current))).isFile()) found.push(current);
        continue;
      }
      throw error;
    }
    for (const entry of entries) {
      const relative = current === '' ? entry.name : `${current}/${entry.name}`;
      if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) pending.push(relative);
      else if (entry.isFile()) found.push(relative);
    }
  }
  return found;
}

/** Every file under `repoDir` matching `patterns` (repository-relative globs), sorted by path. */
export async function listDesiredPaths(repoDir: string, patterns: readonly string[]): Promise<string[]> {
  const selected = desiredPathMatcher(patterns);
  // Walk only below each pattern's static prefix: `contracts/**/*.yaml` walks `contracts/`.
  const files = (await Promise.all(patternRoots(patterns).map((base) => walk(repoDir, base)))).flat();
  return [...new Set(files.filter(selected))].sort();
}

export async function readDesiredFiles(repoDir: string, patterns: readonly string[], options: ReadDesiredOptions = {}): Promise<DesiredFile[]> {
  const maxBytes = options.maxBytes ?? DEFAULT_YAML_LIMITS.maxBytes;
  const { only } = options;
  const paths = (await listDesiredPaths(repoDir, patterns)).filter((relative) => !only || only.has(relative));
  // A few files at a time: every file of a large repository opened at once holds a buffer each
  // before any is done (and may run out of file descriptors).
  const files: DesiredFile[] = new Array<DesiredFile>(paths.length);
  let next = 0;
  async function reader(): Promise<void> {
    while (next < paths.length) {
      const index = next++;
      const relative = paths[index]!;
      files[index] = { path: relative, content: await readBounded(path.join(repoDir, relative), maxBytes) };
    }
  }
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, paths.length) }, reader));
  return files;
}

/** The desired-state files of the working tree at `repoDir`, uncommitted edits included. */
export function workingTreeSource(repoDir: string): DesiredSource {
  return { readFiles: (patterns, options) => readDesiredFiles(repoDir, patterns, options) };
}
