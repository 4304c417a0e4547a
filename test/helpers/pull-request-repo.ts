/** A real git repository as a pull request leaves it, for the tests of what a pull request's plan shows. */
import { onTestFinished } from 'vitest';
import { createRepo, type TestRepo } from '../git/helpers.ts';

export interface PullRequest {
  /** The files committed on `main`. */
  readonly base: Readonly<Record<string, string>>;
  /** The branch, checked out at the end. */
  readonly branch: string;
  /** Its one commit: the message, and the files it writes (null deletes). */
  readonly message: string;
  readonly changes: Readonly<Record<string, string | null>>;
}

/** The repository of `pr`, and its head commit; removed when the test that called it finishes. */
export async function pullRequestRepo(pr: PullRequest): Promise<{ repo: TestRepo; head: string }> {
  const repo = await createRepo(pr.base);
  onTestFinished(() => repo.cleanup());
  await repo.git('checkout', '-q', '-b', pr.branch);
  const head = await repo.commit(pr.message, pr.changes);
  return { repo, head };
}
