/**
 * Adapter: one git repository, its commands run with node:child_process (git's own command line, as
 * CatFileProcess runs its batch processes). Commands run in `dir`, so paths are relative to it.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { GitObjects } from './objects.ts';
import { firstComplaint, GitError } from './errors.ts';

export type ChangeStatus = 'added' | 'modified' | 'deleted';

export interface ChangedFile {
  /** Relative to the repository's `dir`. */
  readonly path: string;
  readonly status: ChangeStatus;
}

export interface GitRepository {
  /** Absolute; may be a subdirectory of the work tree. Every path in and out is relative to it. */
  readonly dir: string;
  /** `dir` relative to the top of the work tree, ending in `/` (`''` at the top): where its files are in a commit's trees. */
  readonly prefix: string;
  /** The git executable. */
  readonly binary: string;
  /** Object questions (revisions, trees, sizes, blobs) to long-lived `git cat-file` processes, started on first use. */
  readonly objects: GitObjects;
  /**
   * changedFiles between two commits, by `from to`: one run asks the same question more than once
   * (an incremental plan's last applied commit is often its pull request's merge base). Commits do
   * not change; the working tree does, and is never remembered.
   */
  readonly commitDiffs: Map<string, Promise<readonly ChangedFile[]>>;
}

export interface OpenGitOptions {
  readonly binary?: string;
}

/**
 * The repository `dir` is in, or undefined when `dir` is not inside a git work tree (or does not
 * exist): a plain directory of YAML files is a valid working tree source too. closeGitRepository
 * ends the git processes it starts on use.
 */
export async function openGitRepository(dir: string, options: OpenGitOptions = {}): Promise<GitRepository | undefined> {
  const isDirectory = await stat(dir).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  if (!isDirectory) return undefined;
  const binary = options.binary ?? 'git';
  try {
    // `true\n<prefix>\n`, where the prefix may hold a line feed too. "not a git repository" (exit
    // 128) is the only failure expected here.
    const { stdout: answer, code } = await execGit(binary, dir, ['rev-parse', '--is-inside-work-tree', '--show-prefix']);
    if (code !== 0 || !answer.startsWith('true\n') || !answer.endsWith('\n')) return undefined;
    const prefix = answer.slice('true\n'.length, -1);
    return {
      dir,
      prefix,
      binary,
      objects: new GitObjects(binary, dir),
      commitDiffs: new Map(),
    };
  } catch {
    // No git to run.
    return undefined;
  }
}

/**
 * Ends the repository's long-lived git processes. Optional (an idle one does not keep node running)
 * but tidy; the repository stays usable: a later question starts them again.
 */
export function closeGitRepository(repo: GitRepository): void {
  repo.objects.close();
}

interface GitOutput {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit code; null when a signal ended git. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Runs `binary ...args` in `dir` to its end. Rejects only when it cannot be started (no such binary). */
function execGit(binary: string, dir: string, args: readonly string[]): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // 'error' (not started) or 'close' (ended, its output read to the end): whichever comes first settles.
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8'), code, signal }),
    );
  });
}

/**
 * Runs `git ...args` and returns its stdout. A failure becomes a GitError quoting git's first line
 * of complaint (never git's whole stderr, which may quote a remote URL). Git exiting non-zero
 * without a word on stderr is an answer, not a failure: `rev-parse --verify --quiet` and
 * `merge-base` say "not found" so, with empty output.
 */
export async function runGit(repo: GitRepository, args: readonly string[]): Promise<string> {
  const command = `git ${args[0] ?? ''}`;
  const output = await execGit(repo.binary, repo.dir, args).catch((error: NodeJS.ErrnoException) => {
    throw new GitError('git-failed', `cannot run ${repo.binary} for ${command} in ${repo.dir} (${error.code ?? error.message})`);
  });
  if (output.signal !== null) throw new GitError('git-failed', `${command} was ended by ${output.signal} in ${repo.dir}`);
  if (output.code !== 0 && output.stderr.trim() !== '') {
    throw new GitError('git-failed', `${command} failed in ${repo.dir}: ${firstComplaint(output.stderr)}`);
  }
  return output.stdout;
}
