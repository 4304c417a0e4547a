/** A saved plan (`apply PLAN.json`), read and checked: readable, of a known version, made from a commit HEAD descends from. */
import path from 'node:path';
import { READ_LIMITS, readProblem, readTextBounded } from '../io/bounded-read.ts';
import { GitError } from '../git/errors.ts';
import { fetchCommand } from '../git/fetch-hint.ts';
import { checkAncestor } from '../git/is-ancestor.ts';
import { closeGitRepository, openGitRepository, type GitRepository } from '../git/repository.ts';
import { isObjectId, isShallow, remoteNames, resolveCommit } from '../git/resolve-ref.ts';
import { parsePlan, PlanFormatError } from '../plan/read-plan.ts';
import type { PlanDocument } from '../plan/types.ts';
import type { RunPlace } from './types.ts';

/** The plan, or why it must not be applied (one line, without the file name). */
export async function readSavedPlan(place: RunPlace, file: string, repo: string): Promise<PlanDocument | { readonly refused: string }> {
  let text: string;
  try {
    text = await readTextBounded(path.resolve(place.cwd, file), READ_LIMITS.plan);
  } catch (error) {
    const problem = readProblem(error);
    return {
      refused:
        problem === undefined
          ? `cannot read the plan file (${(error as NodeJS.ErrnoException).code ?? 'error'})`
          : `cannot read the plan file: it is ${problem}`,
    };
  }
  let plan: PlanDocument;
  try {
    plan = parsePlan(text);
  } catch (error) {
    if (!(error instanceof PlanFormatError)) throw error;
    return { refused: error.message };
  }
  const { commit } = plan.source;
  if (commit === null) return plan;
  if (!isObjectId(commit)) return { refused: `invalid plan: source.commit ${JSON.stringify(commit)} is not a commit id` };
  try {
    const problem = await commitProblem(path.resolve(place.cwd, repo), repo, commit);
    return problem === undefined ? plan : { refused: problem };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { refused: error.message };
  }
}

/** Why a plan made from `commit` must not be applied here, if it must not. */
async function commitProblem(repoDir: string, repo: string, commit: string): Promise<string | undefined> {
  const repository = await openGitRepository(repoDir);
  if (!repository) return `the plan was made from commit ${commit}, but ${repo} is not inside a git work tree`;
  try {
    return await commitProblemIn(repository, commit);
  } finally {
    closeGitRepository(repository);
  }
}

async function commitProblemIn(repository: GitRepository, commit: string): Promise<string | undefined> {
  const head = await resolveCommit(repository, 'HEAD');
  // A repository with no commit yet has nothing the plan could undo.
  if (head === undefined) return undefined;
  const check = await checkAncestor(repository, commit, head);
  if (check === 'ancestor') return undefined;
  if (check === 'not-ancestor') {
    return `the plan was made from commit ${commit}, which is not an ancestor of the current commit ${head} (another branch, or rewritten history): applying it could undo what is in the current commit; run contract-sync plan again`;
  }
  const fetch = fetchCommand(commit, { shallow: await isShallow(repository), remotes: await remoteNames(repository) });
  return `the plan was made from commit ${commit}, which this clone does not have, so it cannot be checked against the current commit ${head}; fetch it (${fetch}) or run contract-sync plan again`;
}
