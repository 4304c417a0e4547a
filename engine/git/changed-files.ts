/** The files that differ between a commit and another commit or the working tree (`git diff --name-status`). */
import { compareText } from '../text/compare-text.ts';
import { GitError } from './errors.ts';
import { runGit, type ChangedFile, type ChangeStatus, type GitRepository } from './repository.ts';
import { isObjectId } from './resolve-ref.ts';

export type { ChangedFile, ChangeStatus } from './repository.ts';

function statusOf(letter: string): ChangeStatus {
  if (letter === 'A') return 'added';
  if (letter === 'D') return 'deleted';
  // M, T (file <-> symlink), U (unmerged): the path exists on both sides.
  return 'modified';
}

/**
 * Files changed from commit `from` to commit `to`, or to the working tree when `to` is null (tracked
 * edits, staged or not, and untracked files that are not ignored: what a reader of the working tree
 * sees). Renames count as a delete and an add. Limited to the repository's `dir`, paths relative to it.
 */
export async function changedFiles(repo: GitRepository, from: string, to: string | null): Promise<ChangedFile[]> {
  if (!isObjectId(from) || (to !== null && !isObjectId(to))) throw new TypeError('changedFiles: expected commit ids');
  if (to === null) return diff(repo, from, null);
  const key = `${from} ${to}`;
  let answer = repo.commitDiffs.get(key);
  if (!answer) {
    answer = diff(repo, from, to);
    repo.commitDiffs.set(key, answer);
    // A failure is not remembered: asking again asks git again, as before.
    answer.catch(() => repo.commitDiffs.delete(key));
  }
  return [...(await answer)];
}

async function diff(repo: GitRepository, from: string, to: string | null): Promise<ChangedFile[]> {
  const revisions = to === null ? [from] : [from, to];
  const output = await runGit(repo, ['diff', '--name-status', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', '--relative', ...revisions, '--']);
  const fields = output.split('\0');
  const changed = new Map<string, ChangeStatus>();
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const letter = fields[index]!;
    const path = fields[index + 1]!;
    if (!/^[A-Z]$/.test(letter)) throw new GitError('git-failed', `git diff printed a status it should not: ${JSON.stringify(letter.slice(0, 20))}`);
    changed.set(path, statusOf(letter));
  }
  if (to === null) {
    const untracked = await runGit(repo, ['ls-files', '--others', '--exclude-standard', '-z']);
    for (const path of untracked.split('\0')) if (path !== '') changed.set(path, 'added');
  }
  return [...changed].map(([path, status]) => ({ path, status })).sort((a, b) => compareText(a.path, b.path));
}
