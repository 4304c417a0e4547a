/** Refs as people write them (`HEAD`, `origin/main`, a tag, a commit) -> commit ids. */
import { GitError } from './errors.ts';
import { runGit, type GitRepository } from './repository.ts';

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Checked before a ref reaches git: a ref starting with `-` would be read as an option. */
export function checkRefSyntax(ref: string, flag: string): void {
  if (ref === '' || ref.startsWith('-') || /[\0\n\r]/.test(ref)) {
    throw new GitError('invalid-ref', `${flag} ${JSON.stringify(ref)} is not a git ref`);
  }
}

/** True for a full object id (sha1 or sha256), the only form passed to later git commands. */
export function isObjectId(text: string): boolean {
  return OBJECT_ID.test(text);
}

/**
 * The commit `ref` names, or undefined when this clone has no such commit. Asked first of the
 * repository's `cat-file` process (engine/git/objects.ts), which reads a revision as
 * `rev-parse --verify` does: a run's refs cost no process of their own.
 */
export async function resolveCommit(repo: GitRepository, ref: string): Promise<string | undefined> {
  checkRefSyntax(ref, 'ref');
  const answer = await repo.objects.ask([`${ref}^{commit}`], false).then(
    ([found]) => found,
    (error: unknown) => {
      if (error instanceof GitError) return undefined;
      throw error;
    },
  );
  if (answer?.found && answer.type === 'commit') return answer.oid;
  // Not a commit, or git died of the ref (`main@{upstream}` without one) or of another question:
  // rev-parse answers as it always did, sometimes with an error (a ref to a tree, say) that
  // cat-file only writes to its stderr.
  return revParseCommit(repo, ref);
}

async function revParseCommit(repo: GitRepository, ref: string): Promise<string | undefined> {
  const output = (await runGit(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])).trim();
  return isObjectId(output) ? output : undefined;
}

export async function isShallow(repo: GitRepository): Promise<boolean> {
  return (await runGit(repo, ['rev-parse', '--is-shallow-repository'])).trim() === 'true';
}

/** The best common ancestor of two commits, or undefined when the clone holds none (too shallow, or unrelated histories). */
export async function mergeBase(repo: GitRepository, a: string, b: string): Promise<string | undefined> {
  if (!isObjectId(a) || !isObjectId(b)) throw new TypeError('mergeBase: expected two commit ids');
  const output = (await runGit(repo, ['merge-base', a, b])).trim();
  return isObjectId(output) ? output : undefined;
}

export async function remoteNames(repo: GitRepository): Promise<string[]> {
  return (await runGit(repo, ['remote'])).split('\n').filter((name) => name !== '');
}
