import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { GitError, openGitRepository, resolveCommit } from '../../engine/git/index.ts';
import { readBaseChanges } from '../../engine/run/index.ts';
import { createRepo, git, shallowClone, type TestRepo } from '../git/helpers.ts';
import { fetchCommand } from '../../engine/git/fetch-hint.ts';

const PATTERNS = ['contracts/**/*.yaml'];
const repos: TestRepo[] = [];

afterEach(async () => {
  await Promise.all(repos.splice(0).map((repo) => repo.cleanup()));
});

function file(id: string, name: string): string {
  return `tenant: acme\ncontracts:\n  "${id}":\n    Name: ${name}\n`;
}

/** main: 3 commits; feature branches off the 3rd, edits a.yaml, adds b.yaml; main then moves on (c.yaml). */
async function branchedRepo(): Promise<TestRepo> {
  const repo = await createRepo({ 'contracts/a.yaml': file('1', 'A') });
  repos.push(repo);
  await repo.commit('main 2', { 'contracts/x.yaml': file('9', 'X') });
  await repo.commit('main 3', { 'README.md': 'readme' });
  await repo.git('checkout', '-q', '-b', 'feature');
  await repo.commit('feature 1', { 'contracts/a.yaml': file('1', 'A on the branch') });
  await repo.commit('feature 2', { 'contracts/b.yaml': file('2', 'B'), 'docs.md': 'not desired state' });
  await repo.git('checkout', '-q', 'main');
  await repo.commit('main 4', { 'contracts/c.yaml': file('3', 'C'), 'contracts/x.yaml': file('9', 'X edited on main') });
  await repo.git('checkout', '-q', 'feature');
  return repo;
}

async function failure(promise: Promise<unknown>): Promise<GitError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GitError)) throw new Error(`expected a GitError, got ${String(error)}`);
  return error;
}

describe('readBaseChanges', () => {
  it('compares from the merge base, as a pull request does: later commits on the base do not count', async () => {
    const repo = await branchedRepo();
    const repository = (await openGitRepository(repo.dir))!;
    const head = (await resolveCommit(repository, 'HEAD'))!;

    const changes = await readBaseChanges(repository, { base: 'main', head, headName: 'HEAD', patterns: PATTERNS });

    expect([...changes.changedPaths]).toEqual(['contracts/a.yaml', 'contracts/b.yaml']);
    expect(changes.base).toEqual({
      ref: 'main',
      commit: (await repo.git('rev-parse', 'main')).trim(),
      mergeBase: (await repo.git('merge-base', 'main', 'feature')).trim(),
    });
    expect(changes.baseContractSets.map((set) => [set.file, set.contracts.map((c) => [c.id, c.fields.Name])])).toEqual([['contracts/a.yaml', [['1', 'A']]]]);
  });

  it('with the working tree as head: uncommitted and untracked desired-state files count', async () => {
    const repo = await branchedRepo();
    await repo.write({ 'contracts/x.yaml': file('9', 'X edited, not committed'), 'contracts/new.yaml': file('4', 'new') });
    const repository = (await openGitRepository(repo.dir))!;

    const changes = await readBaseChanges(repository, { base: 'main', head: null, headName: 'HEAD', patterns: PATTERNS });

    expect([...changes.changedPaths]).toEqual(['contracts/a.yaml', 'contracts/b.yaml', 'contracts/new.yaml', 'contracts/x.yaml']);
  });

  it('a shallow clone without the base: says so, and the fetch it suggests makes the comparison work', async () => {
    const origin = await branchedRepo();
    const clone = await shallowClone(origin.dir, ['--depth', '1', '--branch', 'feature', '--single-branch']);
    repos.push(clone);
    const repository = (await openGitRepository(clone.dir))!;
    const head = (await resolveCommit(repository, 'HEAD'))!;

    const error = await failure(readBaseChanges(repository, { base: 'origin/main', head, headName: 'HEAD', patterns: PATTERNS }));

    expect(error.code).toBe('unknown-ref');
    expect(error.message).toBe(
      'cannot resolve --base "origin/main": this clone is shallow and does not have it. ' +
        'Fetch it first (git fetch --no-tags --deepen=50 origin +refs/heads/main:refs/remotes/origin/main), ' +
        'or in GitHub Actions, check out with `fetch-depth: 0` (actions/checkout); in GitLab CI, set `GIT_DEPTH: 0`.',
    );
    const suggested = /\((git fetch [^)]+)\)/.exec(error.message)![1]!.split(' ');
    await git(clone.dir, ...suggested.slice(1));
    const changes = await readBaseChanges(repository, { base: 'origin/main', head, headName: 'HEAD', patterns: PATTERNS });
    expect([...changes.changedPaths]).toEqual(['contracts/a.yaml', 'contracts/b.yaml']);
  });

  it('a shallow clone that has the base but not the merge base: says how to deepen it', async () => {
    const origin = await branchedRepo();
    const clone = await shallowClone(origin.dir, ['--depth', '1', '--no-single-branch']);
    repos.push(clone);
    await clone.git('checkout', '-q', 'feature');
    const repository = (await openGitRepository(clone.dir))!;
    const head = (await resolveCommit(repository, 'HEAD'))!;

    const error = await failure(readBaseChanges(repository, { base: 'origin/main', head, headName: 'HEAD', patterns: PATTERNS }));

    expect(error.code).toBe('no-merge-base');
    expect(error.message).toContain('this clone is too shallow to hold their merge base. Deepen it (git fetch --no-tags --deepen=200 origin)');
  });

  it('a base that does not exist in a full clone: no such ref, and how to fetch it', async () => {
    const repo = await branchedRepo();
    const repository = (await openGitRepository(repo.dir))!;

    const error = await failure(readBaseChanges(repository, { base: 'release/9', head: null, headName: 'HEAD', patterns: PATTERNS }));

    expect(error.message).toMatch(
      /^cannot resolve --base "release\/9": no such branch, tag or commit in this clone\. Fetch it first \(git fetch --no-tags origin release\/9\)/,
    );
  });
});

describe('the suggested fetch command quotes what it names (issue 21, item 11)', () => {
  it('a hostile --base is one quoted shell word in the hint, and the shell runs nothing else', async () => {
    const repo = await branchedRepo();
    const repository = (await openGitRepository(repo.dir))!;
    const base = "HEAD;touch pwned $(id) 'x'";

    const error = await failure(readBaseChanges(repository, { base, head: null, headName: 'HEAD', patterns: PATTERNS }));

    const command = /Fetch it first \((git fetch .*)\), or/.exec(error.message)?.[1];
    expect(command).toBe(`git fetch --no-tags origin 'HEAD;touch pwned $(id) '\\''x'\\'''`);
    // The shell reads it back as exactly these words.
    const words = execFileSync('sh', ['-c', `for word in ${command!.slice('git '.length)}; do printf '%s\\n' "$word"; done`], { encoding: 'utf8' });
    expect(words.split('\n').slice(0, -1)).toEqual(['fetch', '--no-tags', 'origin', base]);
  });

  it('plain refs stay unquoted', () => {
    expect(fetchCommand('origin/main', { shallow: false, remotes: ['origin'] })).toBe('git fetch --no-tags origin +refs/heads/main:refs/remotes/origin/main');
    expect(fetchCommand('release/9', { shallow: true, remotes: [] })).toBe('git fetch --no-tags --deepen=50 origin release/9');
  });
});
