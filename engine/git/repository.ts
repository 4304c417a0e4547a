/** Adapter: one git repository, run through simple-git. Commands run in `dir`, so paths are relative to it. */
import { stat } from 'node:fs/promises';
import type { SimpleGit } from 'simple-git';
import { CatFileProcess } from './cat-file-process.ts';
import { GitError, redactUrls } from './errors.ts';

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
  readonly git: SimpleGit;
  /** The git executable, for the commands simple-git cannot drive (batch reads over stdin). */
  readonly binary: string;
  /** `git cat-file --batch-check`, started on first use: what objects and revisions are, without content. */
  readonly objectInfo: CatFileProcess;
  /** `git cat-file --batch`, started on first use: objects with their content. */
  readonly objectContents: CatFileProcess;
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
  // Loaded on use: a command that reads only the working tree (validate) never pays for it.
  const { simpleGit } = await import('simple-git');
  const git = simpleGit({ baseDir: dir, binary, trimmed: false });
  try {
    // `true\n<prefix>\n`, where the prefix may hold a line feed too.
    const answer = await git.raw(['rev-parse', '--is-inside-work-tree', '--show-prefix']);
    if (!answer.startsWith('true\n') || !answer.endsWith('\n')) return undefined;
    const prefix = answer.slice('true\n'.length, -1);
    return {
      dir,
      prefix,
      git,
      binary,
      objectInfo: new CatFileProcess(binary, dir, false),
      objectContents: new CatFileProcess(binary, dir, true),
      commitDiffs: new Map(),
    };
  } catch {
    // "not a git repository": the only failure expected here.
    return undefined;
  }
}

/**
 * Ends the repository's long-lived git processes. Optional (an idle one does not keep node running)
 * but tidy; the repository stays usable: a later question starts them again.
 */
export function closeGitRepository(repo: GitRepository): void {
  repo.objectInfo.close();
  repo.objectContents.close();
}

/**
 * Runs `git ...args` and returns its stdout. A failure becomes a GitError quoting git's first line
 * of complaint. simple-git resolves (empty output) when git exits non-zero without writing to
 * stderr, as `rev-parse --verify --quiet` and `merge-base` do for "not found".
 */
export async function runGit(repo: GitRepository, args: readonly string[]): Promise<string> {
  try {
    return await repo.git.raw([...args]);
  } catch (error) {
    const detail = redactUrls(
      String((error as Error).message ?? error)
        .trim()
        .split('\n')[0] ?? '',
    );
    // No `cause`: simple-git's error carries git's whole stderr, which may quote a remote URL.
    throw new GitError('git-failed', `git ${args[0] ?? ''} failed in ${repo.dir}: ${detail}`);
  }
}
