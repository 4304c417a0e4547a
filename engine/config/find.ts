/**
 * Adapter: where the engine config is when no `--config` names it. As git finds `.git`, the search
 * starts in a directory and goes up, one parent at a time, to the root of the git repository the
 * directory is in; outside a git repository only the directory itself is looked at (a stray
 * contract-sync.yaml in a home directory is nobody's config).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';

export const CONFIG_FILE_NAME = 'contract-sync.yaml';

export interface ConfigSearch {
  /** The config file found (absolute), or undefined. */
  readonly found?: string;
  /** The directories looked in (absolute), nearest first. */
  readonly looked: readonly string[];
  /** The root of the git repository the start is in (absolute); undefined outside a repository. */
  readonly gitRoot?: string;
  /** The start is not a directory (a mistyped --repo). */
  readonly noStart?: true;
}

async function kind(file: string): Promise<'file' | 'directory' | undefined> {
  try {
    const info = await stat(file);
    return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** A directory holding `.git` (a directory, or the file of a linked work tree or submodule) is a repository's root. */
async function isGitRoot(dir: string): Promise<boolean> {
  return (await kind(path.join(dir, '.git'))) !== undefined;
}

/** The nearest git repository root at or above `dir`, or undefined. */
export async function findGitRoot(dir: string): Promise<string | undefined> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if (await isGitRoot(current)) return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/** Looks for `name` in `start`, then in each parent up to the git repository's root (see the module's comment). */
export async function findConfig(start: string, name: string = CONFIG_FILE_NAME): Promise<ConfigSearch> {
  const from = path.resolve(start);
  if ((await kind(from)) !== 'directory') return { looked: [from], noStart: true };
  const gitRoot = await findGitRoot(from);
  const looked: string[] = [];
  for (let dir = from; ; dir = path.dirname(dir)) {
    looked.push(dir);
    const file = path.join(dir, name);
    if ((await kind(file)) === 'file') return { found: file, looked, ...(gitRoot === undefined ? {} : { gitRoot }) };
    if (gitRoot === undefined || dir === gitRoot || path.dirname(dir) === dir) return { looked, ...(gitRoot === undefined ? {} : { gitRoot }) };
  }
}

/**
 * What a missing default config says: where contract-sync looked, and what to do.
 * `shown` turns an absolute path into the one the user reads (relative to the working directory).
 */
export function configNotFoundMessage(search: ConfigSearch, shown: (file: string) => string, name: string = CONFIG_FILE_NAME): string {
  const [first] = search.looked;
  const start = first === undefined ? '.' : shown(first);
  const todo = `run contract-sync init to write one, or pass --config FILE (or set CONTRACT_SYNC_CONFIG)`;
  if (search.noStart) return `no such directory: ${start}`;
  if (search.found !== undefined) {
    // Only reachable when --repo named a directory below the one holding the config.
    const dir = shown(path.dirname(search.found));
    return `no ${name} in ${start}; there is one in ${dir}: pass --repo ${dir}, or run contract-sync from there`;
  }
  if (search.gitRoot === undefined) return `no ${name} in ${start}, which is not inside a git repository (no directory above it is searched); ${todo}`;
  if (search.looked.length === 1) return `no ${name} in ${start} (the git repository's root); ${todo}`;
  return `no ${name} in ${start} nor in any directory above it up to the git repository's root ${shown(search.gitRoot)}; ${todo}`;
}
