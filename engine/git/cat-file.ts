/**
 * Blob contents through the repository's `git cat-file --batch` process, however many are asked
 * for: ten thousand files must not cost ten thousand processes, nor each reading one of its own.
 */
import { CatFileProcess, type ObjectAnswer } from './cat-file-process.ts';
import { GitError } from './errors.ts';
import type { GitRepository } from './repository.ts';
import { isObjectId } from './resolve-ref.ts';

function noBlob(oid: string, answer: string): GitError {
  return new GitError('git-failed', `git cat-file has no blob ${oid} (${answer}): the repository may be incomplete`);
}

/** The answers of a `cat-file --batch` process of its own, which ends with them. */
async function askAlone(repo: GitRepository, oids: readonly string[]): Promise<ObjectAnswer[]> {
  const alone = new CatFileProcess(repo.binary, repo.dir, 'contents');
  try {
    return await alone.ask(oids);
  } finally {
    alone.close();
  }
}

/** The contents of `oids`, in the order asked. */
export async function readBlobs(repo: GitRepository, oids: readonly string[]): Promise<Buffer[]> {
  if (oids.length === 0) return [];
  for (const oid of oids) {
    if (!isObjectId(oid)) throw new TypeError(`readBlobs: expected object ids, got ${JSON.stringify(oid)}`);
  }
  let answers;
  try {
    answers = await repo.objects.ask(oids, true);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    // The shared process may have died of another question: these blobs are asked again in a
    // process of their own, which answers or fails for them alone.
    answers = await askAlone(repo, oids);
  }
  return answers.map((answer, index) => {
    const oid = oids[index]!;
    if (!answer.found) throw noBlob(oid, answer.status);
    if (answer.oid !== oid || answer.type !== 'blob' || answer.content === undefined) throw noBlob(oid, `${answer.type} ${answer.size}`);
    return answer.content;
  });
}
