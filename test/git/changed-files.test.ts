import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changedFiles, openGitRepository, resolveCommit, type GitRepository } from '../../engine/git/index.ts';
import { createRepo, loggingGit, type TestRepo } from './helpers.ts';

const repos: TestRepo[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all([...repos.splice(0).map((repo) => repo.cleanup()), ...cleanups.splice(0).map((cleanup) => cleanup())]);
});

async function setUp(): Promise<{ repo: TestRepo; repository: GitRepository; base: string }> {
  const repo = await createRepo({ 'keep.yaml': 'k', 'edit.yaml': 'e', 'remove.yaml': 'r', 'rename-me.yaml': 'same content, new name\n' });
  repos.push(repo);
  const repository = (await openGitRepository(repo.dir))!;
  return { repo, repository, base: (await resolveCommit(repository, 'HEAD'))! };
}

describe('changedFiles', () => {
  it('between two commits: added, modified, deleted; a rename is a delete and an add', async () => {
    const { repo, repository, base } = await setUp();
    const head = await repo.commit('change', {
      'edit.yaml': 'e2',
      'remove.yaml': null,
      'new.yaml': 'n',
      'rename-me.yaml': null,
      'renamed.yaml': 'same content, new name\n',
    });

    const changed = await changedFiles(repository, base, head);

    expect(changed).toEqual([
      { path: 'edit.yaml', status: 'modified' },
      { path: 'new.yaml', status: 'added' },
      { path: 'remove.yaml', status: 'deleted' },
      { path: 'rename-me.yaml', status: 'deleted' },
      { path: 'renamed.yaml', status: 'added' },
    ]);
  });

  it('to the working tree: uncommitted edits, deletions and untracked files, but not ignored ones', async () => {
    const { repo, repository, base } = await setUp();
    await repo.commit('ignore', { '.gitignore': 'ignored.yaml\n' });
    await repo.write({ 'edit.yaml': 'e2', 'remove.yaml': null, 'untracked.yaml': 'u', 'ignored.yaml': 'i' });
    await repo.git('add', 'edit.yaml');

    const changed = await changedFiles(repository, base, null);

    expect(changed).toEqual([
      { path: '.gitignore', status: 'added' },
      { path: 'edit.yaml', status: 'modified' },
      { path: 'remove.yaml', status: 'deleted' },
      { path: 'untracked.yaml', status: 'added' },
    ]);
  });

  it('from a subdirectory: only files below it, relative to it', async () => {
    const repo = await createRepo({ 'sub/a.yaml': 'a', 'b.yaml': 'b' });
    repos.push(repo);
    const repository = (await openGitRepository(path.join(repo.dir, 'sub')))!;
    const base = (await resolveCommit(repository, 'HEAD'))!;
    const head = await repo.commit('change', { 'sub/a.yaml': 'a2', 'b.yaml': 'b2' });
    await repo.write({ 'sub/c.yaml': 'c', 'd.yaml': 'd' });

    expect(await changedFiles(repository, base, head)).toEqual([{ path: 'a.yaml', status: 'modified' }]);
    expect(await changedFiles(repository, base, null)).toEqual([
      { path: 'a.yaml', status: 'modified' },
      { path: 'c.yaml', status: 'added' },
    ]);
  });

  it('asks git once for the same two commits, and every time for the working tree, which may have changed', async () => {
    const repo = await createRepo({ 'a.yaml': 'a' });
    repos.push(repo);
    const git = await loggingGit();
    cleanups.push(git.cleanup);
    const repository = (await openGitRepository(repo.dir, { binary: git.binary }))!;
    const base = (await resolveCommit(repository, 'HEAD'))!;
    const head = await repo.commit('change', { 'a.yaml': 'a2', 'b.yaml': 'b' });
    await git.clear();

    const first = await changedFiles(repository, base, head);
    const again = await changedFiles(repository, base, head);
    const clean = await changedFiles(repository, head, null);
    await repo.write({ 'a.yaml': 'a3' });
    const edited = await changedFiles(repository, head, null);

    const expected = [
      { path: 'a.yaml', status: 'modified' },
      { path: 'b.yaml', status: 'added' },
    ];
    expect(first).toEqual(expected);
    expect(again).toEqual(expected);
    expect(clean).toEqual([]);
    expect(edited).toEqual([{ path: 'a.yaml', status: 'modified' }]);
    expect((await git.calls()).map((call) => call.split(' ').slice(0, 2).join(' '))).toEqual([
      'diff --name-status',
      'diff --name-status',
      'ls-files --others',
      'diff --name-status',
      'ls-files --others',
    ]);
  });
});
