/** Whether one commit is in another's history: a saved plan may only be applied on top of its own commit. */
import { runGit, type GitRepository } from './repository.ts';
import { isObjectId, resolveCommit } from './resolve-ref.ts';

/**
 * Where `commit` stands relative to `head`:
 * - `ancestor`: `commit` is `head` or in its history;
 * - `not-ancestor`: both are in the clone, and `commit` is not in `head`'s history (another
 *   branch, a rewritten commit, or a shallow history cut between them);
 * - `missing`: this clone does not have `commit`.
 */
export type AncestorCheck = 'ancestor' | 'not-ancestor' | 'missing';

/**
 * `git merge-base --is-ancestor commit head`. Its answer is its exit code, which runGit does not
 * return (a non-zero exit without stderr is an empty answer), so the same question is asked
 * as `git merge-base commit head`: a commit's merge base with a descendant is the commit itself,
 * and with anything else it is some other commit or none.
 */
export async function checkAncestor(repo: GitRepository, commit: string, head: string): Promise<AncestorCheck> {
  if (!isObjectId(commit) || !isObjectId(head)) throw new TypeError('checkAncestor: expected two commit ids');
  if ((await resolveCommit(repo, commit)) === undefined) return 'missing';
  const output = (await runGit(repo, ['merge-base', commit, head])).trim();
  return output === commit ? 'ancestor' : 'not-ancestor';
}
