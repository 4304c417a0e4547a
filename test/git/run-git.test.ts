/**
 * runGit and openGitRepository: git's own command line, run with node:child_process, against real
 * repositories. What each way git can end becomes: an answer, a GitError, or no repository.
 */
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeGitRepository, GitError, openGitRepository, runGit, type GitRepository } from '../../engine/git/index.ts';
import { writeTree } from '../helpers/files.ts';
import { createRepo, type TestRepo } from './helpers.ts';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function opened(files: Record<string, string> = { 'a.txt': 'a\n' }): Promise<{ repo: TestRepo; repository: GitRepository }> {
  const repo = await createRepo(files);
  const repository = (await openGitRepository(repo.dir))!;
  cleanups.push(async () => {
    closeGitRepository(repository);
    await repo.cleanup();
  });
  return { repo, repository };
}

/** An executable shell script standing in for git, in a directory of its own. */
async function fakeGit(script: string): Promise<string> {
  const { dir, cleanup } = await writeTree({});
  cleanups.push(cleanup);
  const binary = path.join(dir, 'git');
  await writeFile(binary, `#!/bin/sh\n${script}\n`);
  await chmod(binary, 0o755);
  return binary;
}

describe('runGit', () => {
  it("returns git's output as it printed it", async () => {
    const { repo, repository } = await opened();

    expect(await runGit(repository, ['rev-parse', 'HEAD'])).toBe(await repo.git('rev-parse', 'HEAD'));
  });

  it('returns output of more than a pipe buffer whole (2 MB)', async () => {
    const big = `${'0123456789abcdef'.repeat(131_072)}\n`;
    const { repo, repository } = await opened({ 'big.txt': big });
    const oid = (await repo.git('rev-parse', 'HEAD:big.txt')).trim();

    expect(await runGit(repository, ['cat-file', 'blob', oid])).toBe(big);
  });

  it('an exit without a word on stderr is an answer: empty output, as `rev-parse --verify --quiet` says "not found"', async () => {
    const { repository } = await opened();

    expect(await runGit(repository, ['rev-parse', '--verify', '--quiet', '--end-of-options', 'no-such-branch^{commit}'])).toBe('');
  });

  it("a failure is a GitError naming the command, the directory and git's first line", async () => {
    const { repository } = await opened();

    const error = await runGit(repository, ['cat-file', '-t', 'no-such-object']).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(GitError);
    expect(error).toMatchObject({ code: 'git-failed', message: `git cat-file failed in ${repository.dir}: fatal: Not a valid object name no-such-object` });
  });

  it('masks the credentials of a URL that git quotes', async () => {
    const { repository } = await opened();
    const binary = await fakeGit(
      `echo "fatal: unable to access 'https://someone:throwaway-token@git.example.invalid/x/': Could not resolve host" >&2\nexit 128`,
    );

    const error = await runGit({ ...repository, binary }, ['fetch']).catch((caught: unknown) => caught);

    expect(error).toMatchObject({
      code: 'git-failed',
      message: `git fetch failed in ${repository.dir}: fatal: unable to access 'https://***@git.example.invalid/x/': Could not resolve host`,
    });
    expect((error as Error).message).not.toContain('throwaway-token');
  });

  it("quotes only the first line of git's complaint", async () => {
    const { repository } = await opened();
    const binary = await fakeGit('printf "fatal: first\\nsecond\\n" >&2\nexit 2');

    await expect(runGit({ ...repository, binary }, ['status'])).rejects.toMatchObject({
      code: 'git-failed',
      message: `git status failed in ${repository.dir}: fatal: first`,
    });
  });

  it('a git that cannot be started is a GitError that says so', async () => {
    const { repository } = await opened();
    const binary = path.join(repository.dir, 'no-such-git');

    await expect(runGit({ ...repository, binary }, ['status'])).rejects.toMatchObject({
      code: 'git-failed',
      message: `cannot run ${binary} for git status in ${repository.dir} (ENOENT)`,
    });
  });

  it('a git ended by a signal is a failure, not an empty answer', async () => {
    const { repository } = await opened();
    const binary = await fakeGit('kill -TERM $$');

    await expect(runGit({ ...repository, binary }, ['status'])).rejects.toMatchObject({
      code: 'git-failed',
      message: `git status was ended by SIGTERM in ${repository.dir}`,
    });
  });
});

describe('openGitRepository', () => {
  it('knows where in the work tree a subdirectory is', async () => {
    const { repo } = await opened({ 'contracts/acme/a.yaml': 'tenant: acme\n' });

    const repository = (await openGitRepository(path.join(repo.dir, 'contracts')))!;
    closeGitRepository(repository);

    expect(repository.prefix).toBe('contracts/');
  });

  it('is undefined outside a work tree, for a missing directory, and without a git to run', async () => {
    const { dir, cleanup } = await writeTree({ 'plain/a.yaml': 'tenant: acme\n' });
    cleanups.push(cleanup);
    const { repo } = await opened();

    expect(await openGitRepository(path.join(dir, 'plain'))).toBeUndefined();
    expect(await openGitRepository(path.join(dir, 'missing'))).toBeUndefined();
    expect(await openGitRepository(repo.dir, { binary: path.join(dir, 'no-such-git') })).toBeUndefined();
  });
});
