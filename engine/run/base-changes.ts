/** What changed in the desired state since a base ref: the files, and what they declared at the merge base. */
import { desiredPathMatcher } from '../desired/read-files.ts';
import { parseDesiredFile } from '../desired/parse-file.ts';
import type { ContractSet } from '../desired/types.ts';
import type { PlanBase } from '../plan/types.ts';
import { changedFiles } from '../git/changed-files.ts';
import { GitError } from '../git/errors.ts';
import { missingRefMessage, noMergeBaseMessage } from '../git/fetch-hint.ts';
import { gitCommitSource } from './git-source.ts';
import type { GitRepository } from '../git/repository.ts';
import { checkRefSyntax, isShallow, mergeBase, remoteNames, resolveCommit } from '../git/resolve-ref.ts';

export interface BaseChanges {
  readonly base: PlanBase;
  /** Desired-state files (matching the patterns) that differ between the merge base and the head. */
  readonly changedPaths: ReadonlySet<string>;
  /** The contracts those files declared at the merge base; files that do not parse there declare none. */
  readonly baseContractSets: ContractSet[];
}

export interface BaseChangesOptions {
  /** `--base` as given. */
  readonly base: string;
  /** The head commit, or null for the working tree (compared with the merge base of the base and HEAD). */
  readonly head: string | null;
  /** How the head was named, for messages: `HEAD`, or `--ref` as given. */
  readonly headName: string;
  /** `desired.paths` of the config. */
  readonly patterns: readonly string[];
}

/**
 * Compares like a pull request: from the merge base of base and head (`base...head`) to the head,
 * so that commits on the base branch since the branch-off do not count as the change.
 */
export async function readBaseChanges(repo: GitRepository, options: BaseChangesOptions): Promise<BaseChanges> {
  checkRefSyntax(options.base, '--base');
  const baseCommit = await resolveCommit(repo, options.base);
  if (baseCommit === undefined) {
    const message = missingRefMessage('--base', options.base, { shallow: await isShallow(repo), remotes: await remoteNames(repo) });
    throw new GitError('unknown-ref', message);
  }
  const headCommit = options.head ?? (await resolveCommit(repo, 'HEAD'));
  if (headCommit === undefined) throw new GitError('unknown-ref', `cannot compare with ${JSON.stringify(options.base)}: this repository has no commit yet`);
  const since = await mergeBase(repo, baseCommit, headCommit);
  if (since === undefined) {
    const message = noMergeBaseMessage(options.base, options.headName, { shallow: await isShallow(repo), remotes: await remoteNames(repo) });
    throw new GitError('no-merge-base', message);
  }

  const selected = desiredPathMatcher(options.patterns);
  const changed = (await changedFiles(repo, since, options.head)).filter((file) => selected(file.path));
  const changedPaths = new Set(changed.map((file) => file.path));
  const existedAtBase = new Set(changed.filter((file) => file.status !== 'added').map((file) => file.path));
  const baseFiles = existedAtBase.size === 0 ? [] : await gitCommitSource(repo, since).readFiles(options.patterns, { only: existedAtBase });
  const baseContractSets: ContractSet[] = [];
  for (const file of baseFiles) {
    const { contractSet } = parseDesiredFile(file);
    if (contractSet) baseContractSets.push(contractSet);
  }
  return { base: { ref: options.base, commit: baseCommit, mergeBase: since }, changedPaths, baseContractSets };
}
