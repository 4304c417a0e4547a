/** Real temporary git repositories for tests, with fixed identities and dates so commit ids are reproducible. */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeTree } from '../helpers/files.ts';

const exec = promisify(execFile);

export interface TestRepo {
  readonly dir: string;
  /** `git ...args` in the repository; stdout. */
  git(...args: string[]): Promise<string>;
  /** Writes `files` (path -> content; null deletes), then commits everything. Returns the commit id. */
  commit(message: string, files?: Readonly<Record<string, string | null>>): Promise<string>;
  /** Writes (or with null deletes) files in the working tree without committing. */
  write(files: Readonly<Record<string, string | null>>): Promise<void>;
  cleanup(): Promise<void>;
}

let tick = 0;

/** Environment for every git command of a test: no user or system config, fixed author and dates. */
function gitEnv(): NodeJS.ProcessEnv {
  tick += 1;
  // Dates move forward per command so that history has an order; fixed across runs.
  const date = `${1_767_225_600 + tick * 60} +0000`;
  return {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
}

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', args, { cwd, env: gitEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Resets the date counter, so that a test that builds the same history gets the same commit ids. */
export function resetGitClock(): void {
  tick = 0;
}

async function writeFiles(dir: string, files: Readonly<Record<string, string | null>>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(dir, relative);
    if (content === null) {
      await rm(file, { force: true });
      continue;
    }
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/** A new repository on branch `main` holding `files`, committed when there are any. */
export async function createRepo(files: Readonly<Record<string, string>> = {}): Promise<TestRepo> {
  const { dir, cleanup } = await writeTree({});
  await git(dir, 'init', '-q', '-b', 'main');
  const repo: TestRepo = {
    dir,
    git: (...args) => git(dir, ...args),
    async commit(message, changes = {}) {
      await writeFiles(dir, changes);
      await git(dir, 'add', '-A');
      await git(dir, 'commit', '-q', '--allow-empty', '-m', message);
      return (await git(dir, 'rev-parse', 'HEAD')).trim();
    },
    write: (changes) => writeFiles(dir, changes),
    cleanup,
  };
  if (Object.keys(files).length > 0) await repo.commit('initial', files);
  return repo;
}

/** `git clone --depth` of `source` (file:// so that --depth takes effect) into a new temporary directory. */
export async function shallowClone(source: string, args: readonly string[]): Promise<TestRepo> {
  const { dir, cleanup } = await writeTree({});
  await git(dir, 'clone', '-q', ...args, `file://${source}`, 'clone');
  const cloneDir = path.join(dir, 'clone');
  return {
    dir: cloneDir,
    git: (...gitArgs) => git(cloneDir, ...gitArgs),
    commit: () => Promise.reject(new Error('not for clones')),
    write: (changes) => writeFiles(cloneDir, changes),
    cleanup,
  };
}

export interface LoggingGit {
  /** A wrapper around git, for openGitRepository's `binary`: it logs every call, then runs git. */
  readonly binary: string;
  /** The calls since the last `clear`, one a line: the arguments joined by spaces. */
  calls(): Promise<string[]>;
  clear(): Promise<void>;
  cleanup(): Promise<void>;
}

/**
 * A git that logs its calls: for tests that count the git processes a reading costs. `before`:
 * shell lines run after the logging and before git, e.g. to answer some calls as another git would.
 */
export async function loggingGit(before = ''): Promise<LoggingGit> {
  const { dir, cleanup } = await writeTree({});
  const log = path.join(dir, 'calls.log');
  const binary = path.join(dir, 'git-wrapper');
  await writeFile(binary, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\n${before}exec git "$@"\n`);
  await chmod(binary, 0o755);
  await writeFile(log, '');
  return {
    binary,
    calls: async () => (await readFile(log, 'utf8')).split('\n').filter((line) => line !== ''),
    clear: () => writeFile(log, ''),
    cleanup,
  };
}
