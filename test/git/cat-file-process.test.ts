import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchCommandUnsupportedError, CatFileProcess } from '../../engine/git/cat-file-process.ts';
import { closeGitRepository, GitError, isObjectId, openGitRepository, readBlobs, resolveCommit, runGit, type GitRepository } from '../../engine/git/index.ts';
import { writeTree } from '../helpers/files.ts';
import { createRepo, loggingGit, type LoggingGit, type TestRepo } from './helpers.ts';

const exec = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
const processes: CatFileProcess[] = [];

afterEach(async () => {
  for (const process of processes.splice(0)) process.close();
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function repoWith(files: Record<string, string>): Promise<TestRepo> {
  const repo = await createRepo(files);
  cleanups.push(() => repo.cleanup());
  return repo;
}

async function logged(repo: TestRepo): Promise<{ repository: GitRepository; git: LoggingGit }> {
  const git = await loggingGit();
  const repository = (await openGitRepository(repo.dir, { binary: git.binary }))!;
  cleanups.push(async () => {
    closeGitRepository(repository);
    await git.cleanup();
  });
  await git.clear();
  return { repository, git };
}

function catFile(repo: TestRepo, withContent: boolean): CatFileProcess {
  const process = new CatFileProcess('git', repo.dir, withContent ? 'contents' : 'info');
  processes.push(process);
  return process;
}

async function oidOf(repo: TestRepo, name: string): Promise<string> {
  return (await repo.git('rev-parse', name)).trim();
}

describe('CatFileProcess', () => {
  it('answers in order, with content or without, and says which names it does not know', async () => {
    const big = 'x'.repeat(1_000_000);
    const repo = await repoWith({ 'a.txt': 'a\n', 'big.txt': big });
    const [a, bigOid, commit] = [await oidOf(repo, 'HEAD:a.txt'), await oidOf(repo, 'HEAD:big.txt'), await oidOf(repo, 'HEAD')];

    const contents = await catFile(repo, true).ask([a, 'HEAD:nothing.txt', bigOid, 'HEAD^{commit}']);
    const info = await catFile(repo, false).ask([bigOid, 'nothing^{commit}', 'HEAD^{commit}']);

    expect(contents.map((answer) => (answer.found ? [answer.oid, answer.type, answer.size] : answer.status))).toEqual([
      [a, 'blob', 2],
      'missing',
      [bigOid, 'blob', 1_000_000],
      [commit, 'commit', expect.any(Number)],
    ]);
    expect(contents[0]!.found && contents[0]!.content!.toString()).toBe('a\n');
    expect(contents[2]!.found && contents[2]!.content!.toString()).toBe(big);
    expect(info).toEqual([
      { found: true, oid: bigOid, type: 'blob', size: 1_000_000 },
      { found: false, status: 'missing' },
      { found: true, oid: commit, type: 'commit', size: expect.any(Number) },
    ]);
  });

  it('answers questions asked at once, each with its own answers', async () => {
    const repo = await repoWith({ 'a.txt': 'a', 'b.txt': 'b' });
    const [a, b] = [await oidOf(repo, 'HEAD:a.txt'), await oidOf(repo, 'HEAD:b.txt')];
    const process = catFile(repo, true);

    const [first, second] = await Promise.all([process.ask([a, b]), process.ask([b])]);

    expect(first.map((answer) => answer.found && answer.content!.toString())).toEqual(['a', 'b']);
    expect(second.map((answer) => answer.found && answer.content!.toString())).toEqual(['b']);
  });

  it('fails every open question when git dies, with its message, and starts again for the next', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const a = await oidOf(repo, 'HEAD:a.txt');
    const process = catFile(repo, false);

    const failure = await process.ask(['main@{upstream}']).catch((error: unknown) => error);
    const after = await process.ask([a]);

    expect(failure).toBeInstanceOf(GitError);
    expect((failure as GitError).message).toBe(`git cat-file failed in ${repo.dir} (exit 128): fatal: no upstream configured for branch 'main'`);
    expect(after).toEqual([{ found: true, oid: a, type: 'blob', size: 1 }]);
  });

  it('refuses a name git would read as two', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });

    expect(() => catFile(repo, false).ask(['HEAD\nmain'])).toThrow(TypeError);
  });

  it('does not keep node running while idle', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const { dir, cleanup } = await writeTree({});
    cleanups.push(cleanup);
    const script = path.join(dir, 'idle.mts');
    const module = path.resolve('engine/git/cat-file-process.ts');
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(
        script,
        `import { CatFileProcess } from ${JSON.stringify(module)};\nconst answers = await new CatFileProcess('git', ${JSON.stringify(repo.dir)}, 'contents').ask(['HEAD:a.txt']);\nprocess.stdout.write(String(answers[0].found));\n`,
      ),
    );

    const { stdout } = await exec(path.resolve('node_modules/.bin/tsx'), [script], { timeout: 15_000 });

    expect(stdout).toBe('true');
  });
});

/** A git older than 2.36, which refuses `cat-file --batch-command` as git 2.35 did (usage, exit 129), and logs its calls. */
async function oldGit(): Promise<LoggingGit> {
  const git = await loggingGit(
    `if [ "$1 $2" = "cat-file --batch-command" ]; then echo "error: unknown option \\\`batch-command'" >&2; echo "usage: git cat-file <type> <object>" >&2; exit 129; fi\n`,
  );
  cleanups.push(git.cleanup);
  return git;
}

describe('CatFileProcess --batch-command', () => {
  it('answers questions with content and without in one process, in the order asked', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const [a, commit] = [await oidOf(repo, 'HEAD:a.txt'), await oidOf(repo, 'HEAD')];
    const process = new CatFileProcess('git', repo.dir, 'commands');
    processes.push(process);

    const [contents, info, again] = await Promise.all([
      process.ask([a, 'HEAD:nothing.txt'], true),
      process.ask(['HEAD^{commit}', a], false),
      process.ask([a], true),
    ]);

    expect(contents.map((answer) => (answer.found ? [answer.type, answer.content?.toString()] : answer.status))).toEqual([['blob', 'a\n'], 'missing']);
    expect(info).toEqual([
      { found: true, oid: commit, type: 'commit', size: expect.any(Number) },
      { found: true, oid: a, type: 'blob', size: 2 },
    ]);
    expect(again[0]).toMatchObject({ found: true, oid: a });
  });

  it('fails with BatchCommandUnsupportedError on a git that refuses the option', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const git = await oldGit();
    const process = new CatFileProcess(git.binary, repo.dir, 'commands');
    processes.push(process);

    const failure = await process.ask(['HEAD'], false).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(BatchCommandUnsupportedError);
    expect(failure).toMatchObject({ code: 'git-failed', message: `${git.binary} has no cat-file --batch-command (git 2.36 and later have it)` });
  });

  it('refuses a question of the other kind in a one-kind process', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });

    expect(() => catFile(repo, false).ask(['HEAD'], true)).toThrow('CatFileProcess: a --batch-check process answers without content');
  });
});

describe('GitObjects', () => {
  it('asks a git older than 2.36 with --batch-check and --batch instead, from then on', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const a = await oidOf(repo, 'HEAD:a.txt');
    const git = await oldGit();
    const repository = (await openGitRepository(repo.dir, { binary: git.binary }))!;
    cleanups.push(async () => closeGitRepository(repository));

    const first = await Promise.all([resolveCommit(repository, 'HEAD'), readBlobs(repository, [a])]);
    const second = await Promise.all([resolveCommit(repository, 'main'), readBlobs(repository, [a])]);

    expect(first[0]).toBe(await oidOf(repo, 'HEAD'));
    expect([first[1], second[1]].flat().map((blob) => blob.toString())).toEqual(['a\n', 'a\n']);
    expect(second[0]).toBe(first[0]);
    expect((await git.calls()).filter((call) => call.startsWith('cat-file')).sort()).toEqual([
      'cat-file --batch',
      'cat-file --batch-check',
      'cat-file --batch-command',
    ]);
  });
});

describe('readBlobs', () => {
  it('reads through one cat-file process for the whole run, however many readings', async () => {
    const repo = await repoWith({ 'a.txt': 'a', 'b.txt': 'b' });
    const first = [await oidOf(repo, 'HEAD:a.txt')];
    await repo.commit('second', { 'a.txt': 'a2' });
    const second = [await oidOf(repo, 'HEAD:a.txt'), await oidOf(repo, 'HEAD:b.txt')];
    const { repository, git } = await logged(repo);

    const read = [...(await readBlobs(repository, first)), ...(await readBlobs(repository, second))];

    expect(read.map((blob) => blob.toString())).toEqual(['a', 'a2', 'b']);
    expect(await git.calls()).toEqual(['cat-file --batch-command']);
  });

  it('says which blob the repository lacks, and reads on after it', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const a = await oidOf(repo, 'HEAD:a.txt');
    const tree = await oidOf(repo, 'HEAD^{tree}');
    const absent = '0123456789012345678901234567890123456789';
    const { repository } = await logged(repo);

    const missing = await readBlobs(repository, [a, absent]).catch((error: unknown) => error);
    const notBlob = await readBlobs(repository, [tree]).catch((error: unknown) => error);
    const after = await readBlobs(repository, [a]);

    expect(missing).toMatchObject({ code: 'git-failed', message: `git cat-file has no blob ${absent} (missing): the repository may be incomplete` });
    expect((notBlob as GitError).message).toMatch(new RegExp(`^git cat-file has no blob ${tree} \\(tree \\d+\\): the repository may be incomplete$`));
    expect(after.map((blob) => blob.toString())).toEqual(['a']);
  });

  it('asks again in a process of its own when the shared one dies of another question', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const a = await oidOf(repo, 'HEAD:a.txt');
    const { repository, git } = await logged(repo);

    const [dead, read] = await Promise.all([repository.objects.ask(['main@{upstream}'], true).catch((error: unknown) => error), readBlobs(repository, [a])]);

    expect(dead).toBeInstanceOf(GitError);
    expect(read.map((blob) => blob.toString())).toEqual(['a']);
    expect(await git.calls()).toEqual(['cat-file --batch-command', 'cat-file --batch']);
  });
});

describe('closeGitRepository', () => {
  it('ends the processes; the repository stays usable and starts them again', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const a = await oidOf(repo, 'HEAD:a.txt');
    const { repository, git } = await logged(repo);

    const before = await readBlobs(repository, [a]);
    closeGitRepository(repository);
    const after = await readBlobs(repository, [a]);

    expect([...before, ...after].map((blob) => blob.toString())).toEqual(['a', 'a']);
    expect(await git.calls()).toEqual(['cat-file --batch-command', 'cat-file --batch-command']);
  });
});

describe('resolveCommit', () => {
  // Each answer is rev-parse's (`git rev-parse --verify --quiet --end-of-options REF^{commit}`),
  // which resolveCommit asked before it asked cat-file.
  const REFS = [
    'HEAD',
    'main',
    'feature',
    'annotated',
    'lightweight',
    'tree-tag',
    'twice',
    'HEAD~1',
    'HEAD~9',
    'main@{1}',
    '@{-1}',
    '@{-9}',
    'HEAD@{0}',
    ':/second',
    ':/no such message',
    'main^{/first}',
    'HEAD:a.txt',
    'HEAD^{tree}',
    'main feature',
    'main..feature',
    'main...feature',
    '^main',
    'main^!',
    'main^@',
    'nothing',
    'refs/heads/main',
    '@',
    '~',
    ':',
    'short-id',
    'full-id',
    'tree-id',
    'zero-id',
  ];

  it.each(REFS)('%s: as rev-parse --verify answers', async (name) => {
    const repo = await repoWith({ 'a.txt': 'first' });
    await repo.git('tag', 'lightweight');
    await repo.git('tag', 'twice');
    await repo.git('checkout', '-q', '-b', 'feature');
    await repo.commit('second', { 'a.txt': 'second' });
    await repo.git('branch', 'twice');
    await repo.git('checkout', '-q', 'main');
    await repo.git('tag', '-a', 'annotated', '-m', 'annotated');
    await repo.git('tag', 'tree-tag', 'HEAD^{tree}');
    const ids: Record<string, string> = {
      'short-id': (await oidOf(repo, 'feature')).slice(0, 9),
      'full-id': await oidOf(repo, 'feature'),
      'tree-id': await oidOf(repo, 'HEAD^{tree}'),
      'zero-id': '0'.repeat(40),
    };
    const ref = ids[name] ?? name;
    // What resolveCommit answered when it asked rev-parse.
    const plain = (await openGitRepository(repo.dir))!;
    const expected = await runGit(plain, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]).then(
      (output) => ({ commit: isObjectId(output.trim()) ? output.trim() : undefined }),
      (error: unknown) => ({ error: (error as Error).message }),
    );
    const repository = (await openGitRepository(repo.dir))!;
    cleanups.push(async () => closeGitRepository(repository));

    const answer = await resolveCommit(repository, ref).then(
      (commit) => ({ commit }),
      (error: unknown) => ({ error: (error as Error).message }),
    );

    expect(answer).toEqual(expected);
  });

  it('answers for many refs with one process', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const head = await oidOf(repo, 'HEAD');
    const { repository, git } = await logged(repo);

    const commits = await Promise.all(['HEAD', 'main', 'nothing', head].map((ref) => resolveCommit(repository, ref)));

    expect(commits).toEqual([head, head, undefined, head]);
    // A ref cat-file does not find is asked of rev-parse, for its answer or its error.
    expect(await git.calls()).toEqual(['cat-file --batch-command', 'rev-parse --verify --quiet --end-of-options nothing^{commit}']);
  });

  it('fails as rev-parse did where git gives up on a ref', async () => {
    const repo = await repoWith({ 'a.txt': 'a' });
    const { repository, git } = await logged(repo);

    const failure = await resolveCommit(repository, 'main@{upstream}').catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(GitError);
    expect((failure as GitError).message).toBe(`git rev-parse failed in ${repo.dir}: fatal: no upstream configured for branch 'main'`);
    expect(await git.calls()).toEqual(['cat-file --batch-command', 'rev-parse --verify --quiet --end-of-options main@{upstream}^{commit}']);
  });
});
