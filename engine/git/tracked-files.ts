/** Which files git tracks: `git ls-files` (the index) or, at a commit, `git ls-tree`. */
import path from 'node:path';
import { runGit, type GitRepository } from './repository.ts';
import { isObjectId } from './resolve-ref.ts';

/** `file` (absolute) relative to the work tree's top, `/`-separated; undefined when outside the work tree. */
function fromTop(repo: GitRepository, file: string): string | undefined {
  const relative = path.relative(repo.dir, file);
  if (path.isAbsolute(relative)) return undefined;
  const top = path.posix.normalize(`${repo.prefix}${relative.split(path.sep).join('/')}`);
  return top === '..' || top.startsWith('../') || top === '.' ? undefined : top;
}

/**
 * Those of `files` (absolute paths) that git tracks: in the index, or with `commit` (a commit id)
 * in that commit's tree. A file outside the work tree is never tracked; a directory is not a file.
 */
export async function trackedFiles(repo: GitRepository, files: readonly string[], commit?: string): Promise<Set<string>> {
  if (commit !== undefined && !isObjectId(commit)) throw new TypeError(`trackedFiles: expected a commit id, got ${JSON.stringify(commit)}`);
  const inside = new Map<string, string[]>();
  for (const file of files) {
    const top = fromTop(repo, file);
    if (top !== undefined) inside.set(top, [...(inside.get(top) ?? []), file]);
  }
  if (inside.size === 0) return new Set();

  const paths = [...inside.keys()];
  const output =
    commit === undefined
      ? await runGit(repo, ['ls-files', '-z', '--full-name', '--', ...paths.map((top) => `:(top,literal)${top}`)])
      : await runGit(repo, ['--literal-pathspecs', 'ls-tree', '-r', '-z', '--name-only', '--full-tree', commit, '--', ...paths]);
  const tracked = new Set<string>();
  for (const name of output.split('\0')) {
    for (const file of inside.get(name) ?? []) tracked.add(file);
  }
  return tracked;
}
