/** Adapter: desired-state files from a working tree. */
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { DEFAULT_YAML_LIMITS } from '../yaml-source.ts';
import type { DesiredFile } from './types.ts';

const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

/** Reads at most `limit + 1` bytes, so that a huge file is refused without being loaded. */
async function readBounded(file: string, limit: number): Promise<Uint8Array> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min((await handle.stat()).size, limit + 1));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Files below `directory`, repository-relative, skipping .git and node_modules. */
async function walk(repoDir: string, directory: string): Promise<string[]> {
  const found: string[] = [];
  const pending = [directory];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = await readdir(path.join(repoDir, current), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
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
  const matches = picomatch([...patterns]);
  // Walk only below each pattern's static prefix: `contracts/**/*.yaml` walks `contracts/`.
  const bases = [...new Set(patterns.map((pattern) => picomatch.scan(pattern).base))];
  const roots = bases.filter((base) => !bases.some((other) => other !== base && (other === '' || base.startsWith(`${other}/`))));
  const files = (await Promise.all(roots.map((base) => walk(repoDir, base)))).flat();
  return [...new Set(files.filter((file) => matches(file)))].sort();
}

export async function readDesiredFiles(
  repoDir: string,
  patterns: readonly string[],
  maxBytes = DEFAULT_YAML_LIMITS.maxBytes,
): Promise<DesiredFile[]> {
  const paths = await listDesiredPaths(repoDir, patterns);
  return Promise.all(paths.map(async (relative) => ({ path: relative, content: await readBounded(path.join(repoDir, relative), maxBytes) })));
}
