/**
 * Blob contents through the repository's `git cat-file --batch` process, however many are asked
 * for: ten thousand files must not cost ten thousand processes, nor each reading one of its own.
 */
import { spawn } from 'node:child_process';
import { GitError, redactUrls } from './errors.ts';
import type { GitRepository } from './repository.ts';
import { isObjectId } from './resolve-ref.ts';

function runBatch(repo: GitRepository, input: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(repo.binary, ['cat-file', '--batch'], { cwd: repo.dir, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => reject(new GitError('git-failed', `cannot run ${repo.binary} (${(error as NodeJS.ErrnoException).code ?? error.message})`)));
    child.on('close', (code) => {
      if (code === 0) {
        resolve(Buffer.concat(out));
        return;
      }
      const detail = redactUrls(Buffer.concat(err).toString('utf8').trim().split('\n')[0] ?? '');
      reject(new GitError('git-failed', `git cat-file failed in ${repo.dir} (exit ${String(code)}): ${detail}`));
    });
    // git exits early on a broken request; its exit code reports that, not the pipe.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

function noBlob(oid: string, answer: string): GitError {
  return new GitError('git-failed', `git cat-file has no blob ${oid} (${answer}): the repository may be incomplete`);
}

/** The contents of `oids`, in the order asked. */
export async function readBlobs(repo: GitRepository, oids: readonly string[]): Promise<Buffer[]> {
  if (oids.length === 0) return [];
  for (const oid of oids) {
    if (!isObjectId(oid)) throw new TypeError(`readBlobs: expected object ids, got ${JSON.stringify(oid)}`);
  }
  let answers;
  try {
    answers = await repo.objectContents.ask(oids);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    // The shared process may have died of another question: these blobs are asked again in a
    // process of their own, which answers or fails for them as it always did.
    return readBlobsAlone(repo, oids);
  }
  return answers.map((answer, index) => {
    const oid = oids[index]!;
    if (!answer.found) throw noBlob(oid, answer.status);
    if (answer.oid !== oid || answer.type !== 'blob' || answer.content === undefined) throw noBlob(oid, `${answer.type} ${answer.size}`);
    return answer.content;
  });
}

async function readBlobsAlone(repo: GitRepository, oids: readonly string[]): Promise<Buffer[]> {
  const output = await runBatch(repo, oids.map((oid) => `${oid}\n`).join(''));
  const blobs: Buffer[] = [];
  let offset = 0;
  for (const oid of oids) {
    // Each answer: `<oid> <type> <size>\n<content>\n`, or `<oid> missing\n`.
    const newline = output.indexOf(0x0a, offset);
    if (newline < 0) throw new GitError('git-failed', `git cat-file ended before answering for ${oid}`);
    const header = output.toString('utf8', offset, newline).split(' ');
    if (header[0] !== oid || header[1] !== 'blob' || header.length !== 3) {
      throw noBlob(oid, header.slice(1).join(' '));
    }
    const size = Number(header[2]);
    const start = newline + 1;
    if (start + size + 1 > output.length) throw new GitError('git-failed', `git cat-file output for ${oid} is cut short`);
    blobs.push(output.subarray(start, start + size));
    offset = start + size + 1;
  }
  return blobs;
}
