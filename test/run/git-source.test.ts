import { chmod, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateDesiredState, workingTreeSource } from '../../engine/desired/index.ts';
import { GitError, openGitRepository, resolveCommit, type GitRepository } from '../../engine/git/index.ts';
import { gitCommitSource, readFileAtCommit } from '../../engine/run/index.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

const PATTERNS = ['contracts/**/*.yaml'];

function contractFile(tenant: string, id: string, name: string): string {
  return `tenant: ${tenant}\ncontracts:\n  "${id}":\n    Name: ${name}\n`;
}

const repos: TestRepo[] = [];
const cleanups: (() => Promise<void>)[] = [];

async function repoWith(files: Record<string, string>): Promise<TestRepo> {
  const repo = await createRepo(files);
  repos.push(repo);
  return repo;
}

async function open(dir: string): Promise<GitRepository> {
  const repository = await openGitRepository(dir);
  if (!repository) throw new Error(`not a repository: ${dir}`);
  return repository;
}

afterEach(async () => {
  await Promise.all([...repos.splice(0).map((repo) => repo.cleanup()), ...cleanups.splice(0).map((cleanup) => cleanup())]);
});

function text(files: readonly { path: string; content: Uint8Array | string }[]): [string, string][] {
  return files.map((file) => [file.path, Buffer.from(file.content).toString('utf8')]);
}

describe('gitCommitSource', () => {
  it('reads the same files as the working tree when the tree is clean', async () => {
    const repo = await repoWith({
      'contracts/acme/a.yaml': contractFile('acme', '1', 'One'),
      'contracts/acme/deep/b.yaml': contractFile('acme', '2', 'Two'),
      'contracts/globex/c.yaml': contractFile('globex', '3', 'Three'),
      'contracts/readme.md': '# not yaml',
      'other/d.yaml': contractFile('acme', '4', 'Outside the patterns'),
    });
    const repository = await open(repo.dir);
    const commit = (await resolveCommit(repository, 'HEAD'))!;

    const fromGit = await gitCommitSource(repository, commit).readFiles(PATTERNS);
    const fromTree = await workingTreeSource(repo.dir).readFiles(PATTERNS);

    expect(text(fromGit)).toEqual(text(fromTree));
    expect(fromGit.map((file) => file.path)).toEqual(['contracts/acme/a.yaml', 'contracts/acme/deep/b.yaml', 'contracts/globex/c.yaml']);
  });

  it('lists the same files as the working tree, and reads each when asked as readFiles reads it', async () => {
    const repo = await repoWith({
      'contracts/globex/c.yaml': contractFile('globex', '3', 'Three'),
      'contracts/acme/a.yaml': contractFile('acme', '1', 'One'),
      'contracts/acme/deep/b.yaml': contractFile('acme', '2', 'Two'),
      'contracts/readme.md': '# not yaml',
    });
    const repository = await open(repo.dir);
    const commit = (await resolveCommit(repository, 'HEAD'))!;
    const git = gitCommitSource(repository, commit);
    const tree = workingTreeSource(repo.dir);

    const fromGit = await git.listFiles(PATTERNS);
    const fromTree = await tree.listFiles(PATTERNS);
    const wanted = ['contracts/globex/c.yaml', 'contracts/acme/a.yaml'];

    expect(fromGit.paths).toEqual(['contracts/acme/a.yaml', 'contracts/acme/deep/b.yaml', 'contracts/globex/c.yaml']);
    expect(fromTree.paths).toEqual(fromGit.paths);
    expect(text(await fromGit.read(wanted))).toEqual(text(await fromTree.read(wanted)));
    expect(text(await fromGit.read(fromGit.paths))).toEqual(text(await git.readFiles(PATTERNS)));
    expect((await fromTree.read(wanted)).map((file) => file.path)).toEqual(wanted);
  });

  it('reads the commit, not the working tree: uncommitted edits and new files are not in it', async () => {
    const repo = await repoWith({ 'contracts/a.yaml': contractFile('acme', '1', 'Committed') });
    await repo.write({ 'contracts/a.yaml': contractFile('acme', '1', 'Edited'), 'contracts/new.yaml': contractFile('acme', '2', 'New') });
    const repository = await open(repo.dir);

    const files = await gitCommitSource(repository, (await resolveCommit(repository, 'HEAD'))!).readFiles(PATTERNS);

    expect(text(files)).toEqual([['contracts/a.yaml', contractFile('acme', '1', 'Committed')]]);
  });

  it('reads an older commit by its ref', async () => {
    const repo = await repoWith({ 'contracts/a.yaml': contractFile('acme', '1', 'First') });
    await repo.git('tag', 'v1');
    await repo.commit('second', { 'contracts/a.yaml': contractFile('acme', '1', 'Second'), 'contracts/b.yaml': contractFile('acme', '2', 'B') });
    const repository = await open(repo.dir);

    const files = await gitCommitSource(repository, (await resolveCommit(repository, 'v1'))!).readFiles(PATTERNS);

    expect(text(files)).toEqual([['contracts/a.yaml', contractFile('acme', '1', 'First')]]);
  });

  it('skips symbolic links and node_modules, and lists a link as skipped, as the working-tree reader does (issue 41)', async () => {
    const repo = await repoWith({ 'contracts/a.yaml': contractFile('acme', '1', 'A'), 'contracts/node_modules/x.yaml': contractFile('acme', '9', 'X') });
    await symlink('a.yaml', path.join(repo.dir, 'contracts/link.yaml'));
    await symlink('../outside', path.join(repo.dir, 'contracts/dangling.yml'));
    await repo.commit('links');
    const repository = await open(repo.dir);
    const commit = (await resolveCommit(repository, 'HEAD'))!;

    const files = await gitCommitSource(repository, commit).readFiles(PATTERNS);
    const byName = await gitCommitSource(repository, commit).readFiles(PATTERNS, { only: new Set(['contracts/a.yaml', 'contracts/link.yaml']) });

    const link = { path: 'contracts/link.yaml', content: '', skipped: 'a symbolic link' };
    expect(files.filter((file) => file.skipped === undefined).map((file) => file.path)).toEqual(['contracts/a.yaml']);
    expect(files.filter((file) => file.skipped !== undefined)).toEqual([link]);
    expect(byName.filter((file) => file.skipped !== undefined)).toEqual([link]);
    const working = await workingTreeSource(repo.dir).readFiles(PATTERNS);
    expect(working.map((file) => [file.path, file.skipped])).toEqual(files.map((file) => [file.path, file.skipped]));
  });

  it('validate --ref HEAD warns naming a symbolic link of the commit, reads the other files, exit 0', async () => {
    const repo = await repoWith({
      'contract-sync.yaml': configYaml(['acme']),
      'contracts/acme/a.yaml': contractFile('acme', '1', 'A'),
      'outside.yaml': contractFile('acme', '9', 'Y'),
    });
    await symlink('../../outside.yaml', path.join(repo.dir, 'contracts/acme/link.yaml'));
    await repo.commit('link');

    const run = await runCli(['validate', '--ref', 'HEAD'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^contracts\/acme\/link\.yaml:1:1 {2}- {2}warning: not read: a symbolic link, not a regular file \(desired-state files are read only as regular files in the repository\)\n\n0 errors, 1 warning; 1 valid contract in 2 files at HEAD \([0-9a-f]+\)\n$/,
    );
  });

  it('works from a subdirectory of the work tree, with paths relative to it', async () => {
    const repo = await repoWith({
      'infra/contracts/a.yaml': contractFile('acme', '1', 'A'),
      'contracts/outside.yaml': contractFile('acme', '2', 'Not below infra/'),
    });
    const repository = await open(path.join(repo.dir, 'infra'));

    const files = await gitCommitSource(repository, (await resolveCommit(repository, 'HEAD'))!).readFiles(PATTERNS);

    expect(files.map((file) => file.path)).toEqual(['contracts/a.yaml']);
  });

  it('does not read a blob over the size limit: parsing refuses it as too large', async () => {
    const repo = await repoWith({
      'contracts/big.yaml': `${contractFile('acme', '1', 'Big')}# ${'x'.repeat(200)}\n`,
      'contracts/small.yaml': contractFile('acme', '2', 'S'),
    });
    const repository = await open(repo.dir);
    const commit = (await resolveCommit(repository, 'HEAD'))!;

    const files = await gitCommitSource(repository, commit).readFiles(PATTERNS, { maxBytes: 100 });
    const result = validateDesiredState(
      files,
      { tenants: { acme: { clientId: 'a', clientSecret: { env: 'A' } } } },
      { maxBytes: 100, maxDepth: 64, maxAliasCount: 100 },
    );

    expect(files.map((file) => [file.path, file.content.length])).toEqual([
      ['contracts/big.yaml', 101],
      ['contracts/small.yaml', contractFile('acme', '2', 'S').length],
    ]);
    expect(result.errors.map((d) => [d.file, d.code])).toEqual([['contracts/big.yaml', 'file-too-large']]);
  });

  it('reads thousands of files with one ls-tree and one cat-file process', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 2_000; i += 1) files[`contracts/t${i % 10}/c${i}.yaml`] = contractFile('acme', String(i), `Contract ${i}`);
    const repo = await repoWith(files);
    const { dir: binDir, cleanup } = await writeTree({});
    cleanups.push(cleanup);
    const log = path.join(binDir, 'calls.log');
    const wrapper = path.join(binDir, 'git-wrapper');
    await writeFile(wrapper, `#!/bin/sh\necho "$1 $2" >> '${log}'\nexec git "$@"\n`);
    await chmod(wrapper, 0o755);
    const repository = (await openGitRepository(repo.dir, { binary: wrapper }))!;
    const commit = (await resolveCommit(repository, 'HEAD'))!;
    await writeFile(log, '');

    const read = await gitCommitSource(repository, commit).readFiles(PATTERNS);

    expect(read).toHaveLength(2_000);
    expect(Buffer.from(read.find((file) => file.path === 'contracts/t7/c1237.yaml')!.content).toString()).toBe(contractFile('acme', '1237', 'Contract 1237'));
    // The cat-file process that resolved HEAD reads the blobs too.
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual(['--literal-pathspecs ls-tree']);
  });
});

describe('readFileAtCommit', () => {
  it('reads one file at a commit, or undefined when the commit has none', async () => {
    const repo = await repoWith({ 'contract-sync.yaml': 'api: {}\n' });
    const repository = await open(repo.dir);
    const commit = (await resolveCommit(repository, 'HEAD'))!;

    const file = await readFileAtCommit(repository, commit, 'contract-sync.yaml');
    const none = await readFileAtCommit(repository, commit, 'missing.yaml');

    expect(file && Buffer.from(file.content).toString()).toBe('api: {}\n');
    expect(none).toBeUndefined();
  });
});

describe('resolveCommit', () => {
  it.each([['HEAD'], ['main'], ['v1'], ['HEAD~0']])('resolves %s to the commit id', async (ref) => {
    const repo = await repoWith({ 'a.txt': 'a' });
    await repo.git('tag', '-a', 'v1', '-m', 'annotated: resolves through the tag object');
    const repository = await open(repo.dir);

    const commit = await resolveCommit(repository, ref);

    expect(commit).toBe((await repo.git('rev-parse', 'HEAD')).trim());
  });

  it('is undefined for a ref the repository does not have', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });

    expect(await resolveCommit(await open(repo.dir), 'origin/main')).toBeUndefined();
  });

  it.each([['--output=/tmp/x'], ['-n'], ['']])('refuses %j before it reaches git (it would be read as an option)', async (ref) => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const repository = await open(repo.dir);

    const failure = await resolveCommit(repository, ref).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(GitError);
    expect(failure).toMatchObject({ code: 'invalid-ref' });
  });
});

describe('openGitRepository', () => {
  it('is undefined outside a git work tree and for a missing directory', async () => {
    const { dir, cleanup } = await writeTree({ 'a.txt': 'a' });
    cleanups.push(cleanup);

    expect(await openGitRepository(dir)).toBeUndefined();
    expect(await openGitRepository(path.join(dir, 'missing'))).toBeUndefined();
  });
});
