/** Desired-state files from git objects at a commit, without checking it out. */
import { compareText } from '../text/compare-text.ts';
import { desiredPathMatcher, patternRoots, type DesiredSource, type ReadDesiredOptions } from '../desired/read-files.ts';
import type { DesiredFile, DesiredFileList } from '../desired/types.ts';
import { DEFAULT_YAML_LIMITS } from '../yaml/yaml-source.ts';
import { readBlobs } from '../git/cat-file.ts';
import { findEntries } from '../git/find-files.ts';
import { listTreeEntries, type TreeEntry, type TreeListing } from '../git/list-tree.ts';
import type { GitRepository } from '../git/repository.ts';

/**
 * Blobs of `entries`; one over `maxBytes` is not read: it stands as `maxBytes + 1` zero bytes, which
 * parsing refuses by size before looking at a byte, exactly as it refuses an oversized working-tree
 * file (that reader too stops after `maxBytes + 1` bytes).
 */
async function readEntries(repo: GitRepository, entries: readonly TreeEntry[], maxBytes: number): Promise<DesiredFile[]> {
  const small = entries.filter((entry) => entry.size <= maxBytes);
  const blobs = await readBlobs(
    repo,
    small.map((entry) => entry.oid),
  );
  const contents = new Map(small.map((entry, index) => [entry.path, blobs[index]!]));
  return entries.map((entry) => ({ path: entry.path, content: contents.get(entry.path) ?? new Uint8Array(maxBytes + 1) }));
}

/** Up to this many `only` paths are looked up by name; more, and the tree is listed. */
const LISTED_BY_NAME = 1000;

/** The regular files (and symbolic links) at `paths` exactly: looked up in the commit's trees (no process of their own), else listed. */
async function filesAt(repo: GitRepository, commit: string, paths: readonly string[]): Promise<TreeListing> {
  return (await findEntries(repo, commit, paths)) ?? listTreeEntries(repo, commit, paths);
}

/**
 * A symbolic link the patterns select: never followed, and said, as the working-tree reader says
 * it (desired/parse-file.ts turns it into a warning naming the path).
 */
function skippedLink(path: string): DesiredFile {
  return { path, content: '', skipped: 'a symbolic link' };
}

/** The desired-state files of `commit` (a commit id), selected like the working tree's. */
export function gitCommitSource(repo: GitRepository, commit: string): DesiredSource {
  return {
    async readFiles(patterns: readonly string[], options: ReadDesiredOptions = {}): Promise<DesiredFile[]> {
      const selected = desiredPathMatcher(patterns);
      const { only } = options;
      // A few files (an incremental run's) are looked up by name: listing a tree of 100,000 files
      // to keep three of them costs more than everything else such a run does.
      const byName = only !== undefined && only.size <= LISTED_BY_NAME;
      const roots = byName ? [...only].filter(selected) : patternRoots(patterns);
      const listed: TreeListing =
        roots.length === 0 ? { files: [], links: [] } : byName ? await filesAt(repo, commit, roots) : await listTreeEntries(repo, commit, roots);
      function wanted(file: string): boolean {
        return selected(file) && (!only || only.has(file));
      }
      const entries = listed.files.filter((entry) => wanted(entry.path)).sort((a, b) => compareText(a.path, b.path));
      const files = await readEntries(repo, entries, options.maxBytes ?? DEFAULT_YAML_LIMITS.maxBytes);
      const links = listed.links.filter(wanted).map(skippedLink);
      return links.length === 0 ? files : [...files, ...links].sort((a, b) => compareText(a.path, b.path));
    },
    async listFiles(patterns: readonly string[], options: Pick<ReadDesiredOptions, 'maxBytes'> = {}): Promise<DesiredFileList> {
      const selected = desiredPathMatcher(patterns);
      const roots = patternRoots(patterns);
      const listed: TreeListing = roots.length === 0 ? { files: [], links: [] } : await listTreeEntries(repo, commit, roots);
      const entries = new Map(listed.files.filter((entry) => selected(entry.path)).map((entry) => [entry.path, entry]));
      // Symbolic links listed unread, as readFiles lists them, so that parsing says so.
      const links = new Set(listed.links.filter(selected));
      const maxBytes = options.maxBytes ?? DEFAULT_YAML_LIMITS.maxBytes;
      return {
        paths: [...entries.keys(), ...links].sort(compareText),
        async read(paths) {
          const read = await readEntries(
            repo,
            paths.flatMap((file) => entries.get(file) ?? []),
            maxBytes,
          );
          const byPath = new Map(read.map((file) => [file.path, file]));
          return paths.map((file) => byPath.get(file) ?? skippedLink(file));
        },
      };
    },
  };
}

/** One file of `commit` (path relative to the repository's `dir`), or undefined when the commit has none. */
export async function readFileAtCommit(
  repo: GitRepository,
  commit: string,
  file: string,
  maxBytes = DEFAULT_YAML_LIMITS.maxBytes,
): Promise<DesiredFile | undefined> {
  const entry = (await filesAt(repo, commit, [file])).files.find((candidate) => candidate.path === file);
  if (!entry) return undefined;
  const [read] = await readEntries(repo, [entry], maxBytes);
  return read;
}
