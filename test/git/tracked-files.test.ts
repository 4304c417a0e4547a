import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openGitRepository, resolveCommit } from '../../engine/git/index.ts';
import { trackedFiles } from '../../engine/git/tracked-files.ts';
import { writeTree } from '../helpers/files.ts';
import { createRepo, type TestRepo } from './helpers.ts';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function setUp(): Promise<TestRepo> {
  const repo = await createRepo({
    'secrets/acme': 'throwaway-1\n',
    'sub/dir/pg-url': 'throwaway-2\n',
    'odd [name]*': 'throwaway-3\n',
    '.gitignore': 'secrets/ignored\n',
  });
  cleanups.push(() => repo.cleanup());
  await repo.write({ 'secrets/untracked': 'u\n', 'secrets/ignored': 'i\n' });
  return repo;
}

describe('trackedFiles', () => {
  it('in the index: tracked files only, not untracked, ignored, missing or directories', async () => {
    const repo = await setUp();
    const repository = (await openGitRepository(repo.dir))!;
    function at(relative: string): string {
      return path.join(repo.dir, relative);
    }

    const tracked = await trackedFiles(
      repository,
      ['secrets/acme', 'sub/dir/pg-url', 'odd [name]*', 'secrets/untracked', 'secrets/ignored', 'secrets/missing', 'secrets', 'sub'].map(at),
    );

    expect([...tracked].sort()).toEqual([at('odd [name]*'), at('secrets/acme'), at('sub/dir/pg-url')]);
  });

  it('from a subdirectory: files above it in the same work tree count, files outside it do not', async () => {
    const repo = await setUp();
    const outside = await writeTree({ acme: 'throwaway-4\n' });
    cleanups.push(outside.cleanup);
    const repository = (await openGitRepository(path.join(repo.dir, 'sub')))!;

    const tracked = await trackedFiles(repository, [
      path.join(repo.dir, 'secrets/acme'),
      path.join(repo.dir, 'sub/dir/pg-url'),
      path.join(outside.dir, 'acme'),
      path.parse(repo.dir).root,
    ]);

    expect([...tracked].sort()).toEqual([path.join(repo.dir, 'secrets/acme'), path.join(repo.dir, 'sub/dir/pg-url')]);
  });

  it('at a commit: its tree, not the index', async () => {
    const repo = await setUp();
    const repository = (await openGitRepository(repo.dir))!;
    const first = (await resolveCommit(repository, 'HEAD'))!;
    await repo.git('rm', '-q', '--cached', 'secrets/acme');
    await repo.git('add', 'secrets/untracked');
    const files = [path.join(repo.dir, 'secrets/acme'), path.join(repo.dir, 'secrets/untracked')];

    const inIndex = await trackedFiles(repository, files);
    const atCommit = await trackedFiles(repository, files, first);

    expect([...inIndex]).toEqual([path.join(repo.dir, 'secrets/untracked')]);
    expect([...atCommit]).toEqual([path.join(repo.dir, 'secrets/acme')]);
  });

  it('asks git nothing when no file is inside the work tree, and refuses a ref name for a commit id', async () => {
    const repo = await setUp();
    const repository = (await openGitRepository(repo.dir))!;

    expect(await trackedFiles(repository, [])).toEqual(new Set());
    await expect(trackedFiles(repository, [], 'main')).rejects.toThrow(TypeError);
  });
});
