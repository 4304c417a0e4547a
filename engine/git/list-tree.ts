/** The files of a commit, with their blob ids and sizes, from one `git ls-tree` process. */
import { GitError } from './errors.ts';
import { runGit, type GitRepository } from './repository.ts';
import { isObjectId } from './resolve-ref.ts';

export interface TreeEntry {
  /** Relative to the repository's `dir`, `/`-separated. */
  readonly path: string;
  readonly oid: string;
  /** In bytes, as stored in git: known before the blob is read. */
  readonly size: number;
}

// `<mode> SP <type> SP <object> SP+ <size> TAB <path>`; with -z paths are never quoted.
const ENTRY = /^(\d{6}) (\w+) ([0-9a-f]+) +(\d+|-)\t([\s\S]+)$/;
// Regular files only: the working-tree reader skips symbolic links and submodules too.
const REGULAR_FILE_MODES = new Set(['100644', '100755']);
const SYMBOLIC_LINK_MODE = '120000';

/** The entries of a commit a reader of its files cares for: its regular files, and its symbolic links (never followed, but said). */
export interface TreeListing {
  readonly files: TreeEntry[];
  /** Paths of the symbolic links, relative to the repository's `dir`. */
  readonly links: string[];
}

/**
 * Every regular file of `commit` below `roots` (paths relative to the repository's `dir`; `''`
 * for all of `dir`). Like every git command run from a subdirectory, the listing is limited to it.
 */
export async function listTree(repo: GitRepository, commit: string, roots: readonly string[]): Promise<TreeEntry[]> {
  return (await listTreeEntries(repo, commit, roots)).files;
}

/** listTree, with the symbolic links it passes over. */
export async function listTreeEntries(repo: GitRepository, commit: string, roots: readonly string[]): Promise<TreeListing> {
  if (!isObjectId(commit)) throw new TypeError(`listTree: expected a commit id, got ${JSON.stringify(commit)}`);
  const paths = roots.includes('') ? [] : [...roots];
  const output = await runGit(repo, ['--literal-pathspecs', 'ls-tree', '-r', '-l', '-z', commit, '--', ...paths]);
  const entries: TreeEntry[] = [];
  const links: string[] = [];
  for (const record of output.split('\0')) {
    if (record === '') continue;
    const match = ENTRY.exec(record);
    if (!match) throw new GitError('git-failed', `git ls-tree printed an entry it should not: ${JSON.stringify(record.slice(0, 200))}`);
    const [, mode, type, oid, size, path] = match as unknown as [string, string, string, string, string, string];
    if (type === 'blob' && mode === SYMBOLIC_LINK_MODE) links.push(path);
    if (type !== 'blob' || !REGULAR_FILE_MODES.has(mode)) continue;
    entries.push({ path, oid, size: Number(size) });
  }
  return { files: entries, links };
}
