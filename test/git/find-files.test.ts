import { chmod, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compareText } from '../../engine/text/compare-text.ts';
import type { DesiredFile } from '../../engine/desired/types.ts';
import { findFiles } from '../../engine/git/find-files.ts';
import { closeGitRepository, listTree, openGitRepository, readBlobs, type GitRepository } from '../../engine/git/index.ts';
import { gitCommitSource, readFileAtCommit } from '../../engine/run/index.ts';
import { createRepo, loggingGit, type TestRepo } from './helpers.ts';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function open(dir: string, binary?: string): Promise<GitRepository> {
  const repository = (await openGitRepository(dir, binary === undefined ? {} : { binary }))!;
  cleanups.push(async () => closeGitRepository(repository));
  return repository;
}

const MAX_BYTES = 100;

/** What readFileAtCommit answered when it listed the file with `git ls-tree`. */
async function listedFile(repository: GitRepository, commit: string, file: string): Promise<{ path: string; content: string } | undefined> {
  const entry = (await listTree(repository, commit, [file])).find((candidate) => candidate.path === file);
  if (!entry) return undefined;
  const content = entry.size > MAX_BYTES ? Buffer.alloc(MAX_BYTES + 1) : (await readBlobs(repository, [entry.oid]))[0]!;
  return { path: entry.path, content: content.toString('latin1') };
}

function asText(file: DesiredFile | undefined): { path: string; content: string } | undefined {
  return file && { path: file.path, content: typeof file.content === 'string' ? file.content : Buffer.from(file.content).toString('latin1') };
}

/** A repository with every kind of tree entry a desired-state path can name. */
async function everyKind(): Promise<{ repo: TestRepo; commit: string }> {
  const repo = await createRepo({
    'contract-sync.yaml': 'api: {}\n',
    'contracts/acme/a.yaml': 'tenant: acme\n',
    'contracts/acme/run.yaml': 'executable\n',
    'contracts/acme/big.yaml': `# ${'x'.repeat(MAX_BYTES)}\n`,
    'contracts/dir.yaml/inner.yaml': 'inside a directory named like a file\n',
    'contracts/ünïcode ø.yaml': 'non-ASCII name\n',
    'contracts/acme/deep/er/still.yaml': 'deep\n',
    'infra/contracts/a.yaml': 'below infra\n',
  });
  cleanups.push(() => repo.cleanup());
  await chmod(path.join(repo.dir, 'contracts/acme/run.yaml'), 0o755);
  await symlink('a.yaml', path.join(repo.dir, 'contracts/acme/link.yaml'));
  await symlink('acme', path.join(repo.dir, 'contracts/linked-dir'));
  await repo.commit('links');
  const other = (await repo.git('rev-parse', 'HEAD')).trim();
  await repo.git('update-index', '--add', '--cacheinfo', `160000,${other},contracts/module.yaml`);
  await repo.git('update-index', '--add', '--cacheinfo', `160000,${other},contracts/module-dir`);
  await repo.git('commit', '-q', '-m', 'submodules');
  return { repo, commit: (await repo.git('rev-parse', 'HEAD')).trim() };
}

const PATHS = [
  'contract-sync.yaml',
  'contracts/acme/a.yaml',
  'contracts/acme/run.yaml',
  'contracts/acme/big.yaml',
  'contracts/acme/link.yaml',
  'contracts/linked-dir/a.yaml',
  'contracts/dir.yaml',
  'contracts/dir.yaml/inner.yaml',
  'contracts/module.yaml',
  'contracts/module-dir/x.yaml',
  'contracts/ünïcode ø.yaml',
  'contracts/acme/deep/er/still.yaml',
  'contracts/acme/deep',
  'contracts/acme/missing.yaml',
  'missing/a.yaml',
  'contracts/acme/a.yaml/x',
  'contracts//acme/a.yaml',
  './contract-sync.yaml',
  'contracts/acme/../acme/a.yaml',
  '',
];

describe('readFileAtCommit, by name', () => {
  it.each(PATHS)('%j: as ls-tree found it', async (file) => {
    const { repo, commit } = await everyKind();
    const repository = await open(repo.dir);

    const read = await readFileAtCommit(repository, commit, file, MAX_BYTES);

    expect(asText(read)).toEqual(await listedFile(repository, commit, file));
  });

  it('from a subdirectory of the work tree, relative to it', async () => {
    const { repo, commit } = await everyKind();
    const repository = await open(path.join(repo.dir, 'infra'));

    const read = await readFileAtCommit(repository, commit, 'contracts/a.yaml', MAX_BYTES);

    expect(repository.prefix).toBe('infra/');
    expect(asText(read)).toEqual({ path: 'contracts/a.yaml', content: 'below infra\n' });
    expect(await readFileAtCommit(repository, commit, 'contract-sync.yaml', MAX_BYTES)).toBeUndefined();
  });

  it('from a subdirectory whose name holds a line feed', async () => {
    const repo = await createRepo({ 'odd\nname/contracts/a.yaml': 'odd\n' });
    cleanups.push(() => repo.cleanup());
    const repository = await open(path.join(repo.dir, 'odd\nname'));
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();

    const read = await readFileAtCommit(repository, commit, 'contracts/a.yaml', MAX_BYTES);

    expect(repository.prefix).toBe('odd\nname/');
    expect(asText(read)).toEqual({ path: 'contracts/a.yaml', content: 'odd\n' });
  });
});

describe('findFiles', () => {
  it('finds the regular files among the paths, with the ids and sizes ls-tree lists', async () => {
    const { repo, commit } = await everyKind();
    const repository = await open(repo.dir);
    const plain = PATHS.filter((file) => !['contracts//acme/a.yaml', './contract-sync.yaml', 'contracts/acme/../acme/a.yaml', ''].includes(file));

    const found = await findFiles(repository, commit, plain);

    const listed = (await listTree(repository, commit, plain)).filter((entry) => plain.includes(entry.path));
    expect([...found!].sort((a, b) => compareText(a.path, b.path))).toEqual([...listed].sort((a, b) => compareText(a.path, b.path)));
    expect(found!.map((entry) => entry.path).sort()).toEqual([
      'contract-sync.yaml',
      'contracts/acme/a.yaml',
      'contracts/acme/big.yaml',
      'contracts/acme/deep/er/still.yaml',
      'contracts/acme/run.yaml',
      'contracts/dir.yaml/inner.yaml',
      'contracts/ünïcode ø.yaml',
    ]);
  });

  it.each([['contracts//acme/a.yaml'], ['./contract-sync.yaml'], ['contracts/acme/../acme/a.yaml'], [''], ['contracts\\acme\\a.yaml']])(
    'leaves %j to ls-tree',
    async (file) => {
      const { repo, commit } = await everyKind();
      const repository = await open(repo.dir);

      expect(await findFiles(repository, commit, ['contract-sync.yaml', file])).toBeUndefined();
    },
  );

  it('reads the sizes of the files, not their contents, and no file over the limit', async () => {
    const { repo, commit } = await everyKind();
    const repository = await open(repo.dir);
    const big = (await repo.git('rev-parse', `${commit}:contracts/acme/big.yaml`)).trim();
    const asked = vi.spyOn(repository.objects, 'ask');

    const files = await gitCommitSource(repository, commit).readFiles(['contracts/**/*.yaml'], {
      only: new Set(['contracts/acme/a.yaml', 'contracts/acme/big.yaml']),
      maxBytes: MAX_BYTES,
    });

    expect(files.map((file) => [file.path, file.content.length])).toEqual([
      ['contracts/acme/a.yaml', 'tenant: acme\n'.length],
      ['contracts/acme/big.yaml', MAX_BYTES + 1],
    ]);
    expect(asked.mock.calls.filter(([, withContent]) => withContent).flatMap(([names]) => names)).not.toContain(big);
  });
});

describe('gitCommitSource with a few files', () => {
  it('reads the files of two commits and a config with one cat-file process alone', async () => {
    const { repo, commit: first } = await everyKind();
    const second = await repo.commit('edit', { 'contracts/acme/a.yaml': 'tenant: acme\n# edited\n' });
    const git = await loggingGit();
    cleanups.push(git.cleanup);
    const repository = await open(repo.dir, git.binary);
    await git.clear();
    const only = new Set(['contracts/acme/a.yaml', 'contracts/acme/link.yaml', 'contracts/acme/gone.yaml']);

    const config = await readFileAtCommit(repository, second, 'contract-sync.yaml');
    const before = await gitCommitSource(repository, first).readFiles(['contracts/**/*.yaml'], { only });
    const after = await gitCommitSource(repository, second).readFiles(['contracts/**/*.yaml'], { only });

    expect(asText(config)).toEqual({ path: 'contract-sync.yaml', content: 'api: {}\n' });
    // The link is said (a skipped file, never followed), as the working-tree reader says it.
    expect(before.map((file) => [asText(file), file.skipped])).toEqual([
      [{ path: 'contracts/acme/a.yaml', content: 'tenant: acme\n' }, undefined],
      [{ path: 'contracts/acme/link.yaml', content: '' }, 'a symbolic link'],
    ]);
    expect(after.map((file) => [asText(file), file.skipped])).toEqual([
      [{ path: 'contracts/acme/a.yaml', content: 'tenant: acme\n# edited\n' }, undefined],
      [{ path: 'contracts/acme/link.yaml', content: '' }, 'a symbolic link'],
    ]);
    // Trees and blobs with content, sizes without: one process answers both.
    expect(await git.calls()).toEqual(['cat-file --batch-command']);
  });
});
