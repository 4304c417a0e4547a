/**
 * A few known files of a commit, found by walking its trees in the repository's cat-file processes
 * instead of listing them with a `git ls-tree` of their own: the answer listTree gives for them.
 */
import { GitError } from './errors.ts';
import type { TreeEntry, TreeListing } from './list-tree.ts';
import type { GitRepository } from './repository.ts';
import { isObjectId } from './resolve-ref.ts';

interface TreeItem {
  readonly mode: number;
  readonly oid: string;
}

/** By name, as bytes (latin1): git compares names byte for byte. */
type Tree = ReadonlyMap<string, TreeItem>;

const TYPE_BITS = 0o170000;
const DIRECTORY = 0o040000;
// Whatever its permission bits, as `git ls-tree` shows it (100644 or 100755): symbolic links
// (120000) and submodules (160000) are not regular files, and listTree skips them.
const REGULAR_FILE = 0o100000;
const SYMBOLIC_LINK = 0o120000;

/** `<mode> SP <name> NUL <binary object id>`, repeated; undefined when it is not that, or names an entry twice. */
function parseTree(content: Buffer, idBytes: number): Tree | undefined {
  const items = new Map<string, TreeItem>();
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    const end = space < 0 ? -1 : content.indexOf(0x00, space + 1);
    if (end < 0 || end + 1 + idBytes > content.length) return undefined;
    const mode = Number.parseInt(content.toString('latin1', offset, space), 8);
    const name = content.toString('latin1', space + 1, end);
    if (Number.isNaN(mode) || items.has(name)) return undefined;
    items.set(name, { mode, oid: content.toString('hex', end + 1, end + 1 + idBytes) });
    offset = end + 1 + idBytes;
  }
  return items;
}

/** A path read as written, one tree entry per step; anything else (`a//b`, `./a`, `a/..`) is left to ls-tree. */
function isPlainPath(path: string): boolean {
  return !/[\\\0\uFFFD]/.test(path) && path.split('/').every((step) => step !== '' && step !== '.' && step !== '..');
}

interface Walk {
  readonly path: string;
  /** The steps from the top of the work tree, as bytes (latin1). */
  readonly steps: readonly string[];
  step: number;
  tree: string;
}

/**
 * The regular files among `paths` (relative to the repository's `dir`) in `commit`, with their
 * sizes; a path that is missing, a directory, a symbolic link or a submodule has none. Undefined
 * when this way cannot answer exactly as listTree would (a path it does not read as written, a
 * tree it cannot parse, a failed process): the caller lists them instead.
 */
export async function findFiles(repo: GitRepository, commit: string, paths: readonly string[]): Promise<TreeEntry[] | undefined> {
  return (await findEntries(repo, commit, paths))?.files;
}

/** findFiles, with the paths among `paths` that are symbolic links (as listTreeEntries says them). */
export async function findEntries(repo: GitRepository, commit: string, paths: readonly string[]): Promise<TreeListing | undefined> {
  if (!isObjectId(commit)) throw new TypeError(`findFiles: expected a commit id, got ${JSON.stringify(commit)}`);
  if (!paths.every(isPlainPath) || (repo.prefix !== '' && !isPlainPath(repo.prefix.slice(0, -1)))) return undefined;
  try {
    return await walk(repo, commit, paths);
  } catch (error) {
    if (error instanceof GitError) return undefined;
    throw error;
  }
}

async function walk(repo: GitRepository, commit: string, paths: readonly string[]): Promise<TreeListing | undefined> {
  const idBytes = commit.length / 2;
  const trees = new Map<string, Tree>();

  async function readTrees(names: readonly string[]): Promise<string[] | undefined> {
    const answers = await repo.objects.ask(names, true);
    const oids: string[] = [];
    for (const answer of answers) {
      if (!answer.found || answer.type !== 'tree' || answer.content === undefined) return undefined;
      const tree = parseTree(answer.content, idBytes);
      if (!tree) return undefined;
      trees.set(answer.oid, tree);
      oids.push(answer.oid);
    }
    return oids;
  }

  const [root] = (await readTrees([`${commit}^{tree}`])) ?? [];
  if (root === undefined) return undefined;
  const walks: Walk[] = paths.map((path) => ({ path, steps: Buffer.from(`${repo.prefix}${path}`).toString('latin1').split('/'), step: 0, tree: root }));
  const found: { readonly path: string; readonly oid: string }[] = [];
  const links: string[] = [];
  let open = walks;
  while (open.length > 0) {
    const next: Walk[] = [];
    const wanted = new Set<string>();
    for (const walk of open) {
      const item = trees.get(walk.tree)?.get(walk.steps[walk.step]!);
      if (!item) continue;
      if (walk.step === walk.steps.length - 1) {
        if ((item.mode & TYPE_BITS) === REGULAR_FILE) found.push({ path: walk.path, oid: item.oid });
        else if ((item.mode & TYPE_BITS) === SYMBOLIC_LINK) links.push(walk.path);
        continue;
      }
      if ((item.mode & TYPE_BITS) !== DIRECTORY) continue;
      walk.step += 1;
      walk.tree = item.oid;
      next.push(walk);
      if (!trees.has(item.oid)) wanted.add(item.oid);
    }
    if (wanted.size > 0 && (await readTrees([...wanted])) === undefined) return undefined;
    open = next;
  }

  // Sizes without contents: a file over the size limit is never read.
  const sizes = await repo.objects.ask(
    found.map((file) => file.oid),
    false,
  );
  const entries: TreeEntry[] = [];
  for (const [index, file] of found.entries()) {
    const answer = sizes[index]!;
    if (!answer.found || answer.type !== 'blob') return undefined;
    entries.push({ path: file.path, oid: file.oid, size: answer.size });
  }
  return { files: entries, links };
}
