/**
 * One long-lived `git cat-file` process for a repository: a run asks it every object question
 * (refs, trees, sizes, blobs) over stdin instead of starting a git process for each. With
 * `--batch-command` (git 2.36 and later) one process answers both kinds of question, with content
 * or without; `--batch` and `--batch-check` answer one kind each.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { firstComplaint, GitError } from './errors.ts';

export type ObjectAnswer =
  /** `content` with `--batch` only. */
  | { readonly found: true; readonly oid: string; readonly type: string; readonly size: number; readonly content?: Buffer }
  /** git's word for it: `missing` (no such object or name) or `ambiguous` (a short id). */
  | { readonly found: false; readonly status: string };

/** `contents`: `--batch`; `info`: `--batch-check`; `commands`: `--batch-command`, either kind per question. */
export type CatFileMode = 'contents' | 'info' | 'commands';

const MODE_OPTIONS: Readonly<Record<CatFileMode, string>> = { contents: '--batch', info: '--batch-check', commands: '--batch-command' };

/** git's exit code for a usage error: what a git older than 2.36 answers `--batch-command` with. */
const USAGE_ERROR = 129;

/** The git in use has no `cat-file --batch-command`: ask with `--batch` and `--batch-check` instead. */
export class BatchCommandUnsupportedError extends GitError {
  constructor(binary: string) {
    super('git-failed', `${binary} has no cat-file --batch-command (git 2.36 and later have it)`);
    this.name = 'BatchCommandUnsupportedError';
  }
}

interface Question {
  readonly names: readonly string[];
  readonly withContent: boolean;
  readonly answers: ObjectAnswer[];
  readonly resolve: (answers: ObjectAnswer[]) => void;
  readonly reject: (error: GitError) => void;
}

// `<oid> <type> <size>`; a name git cannot answer for comes back as `<name> missing` (or ambiguous).
const FOUND = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([a-z]+) (\d+)$/;
const NOT_FOUND = / (missing|ambiguous)$/;

/** Bytes received and not parsed yet, kept as chunks: a large blob must not be copied once per chunk. */
class Received {
  #chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.length += chunk.length;
  }

  indexOfNewline(): number {
    let before = 0;
    for (const chunk of this.#chunks) {
      const index = chunk.indexOf(0x0a);
      if (index >= 0) return before + index;
      before += chunk.length;
    }
    return -1;
  }

  /** The first `count` bytes, removed. */
  take(count: number): Buffer {
    const joined = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    const rest = joined.subarray(count);
    this.#chunks = rest.length === 0 ? [] : [rest];
    this.length = rest.length;
    return joined.subarray(0, count);
  }
}

/** One spawned process and what it still owes. */
class Running {
  readonly child: ChildProcessWithoutNullStreams;
  readonly questions: Question[] = [];
  readonly received = new Received();
  readonly stderr: Buffer[] = [];
  /** The header of the answer whose content is still arriving. */
  header: { readonly oid: string; readonly type: string; readonly size: number } | undefined;
  /** Whether any answer came: a process that answered knows its option. */
  answered = false;

  constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
  }
}

export class CatFileProcess {
  readonly #binary: string;
  readonly #dir: string;
  readonly #mode: CatFileMode;
  #running: Running | undefined;

  constructor(binary: string, dir: string, mode: CatFileMode) {
    this.#binary = binary;
    this.#dir = dir;
    this.#mode = mode;
  }

  /**
   * The answers for `names` (object ids or revisions), in order, with their content or without
   * (`withContent` must be the mode's own unless the mode is `commands`). Rejects with a GitError
   * when the process fails (git dies on some names, e.g. `@{upstream}` without one); every
   * question still open fails with it, and the next one starts a new process. A `commands`
   * process that git refuses fails with BatchCommandUnsupportedError.
   */
  ask(names: readonly string[], withContent = this.#mode === 'contents'): Promise<ObjectAnswer[]> {
    for (const name of names) {
      // One name a line: git would read a line break as the end of the name.
      if (/[\n\r\0]/.test(name) || name === '') throw new TypeError(`CatFileProcess: cannot ask for ${JSON.stringify(name)}`);
    }
    if (this.#mode !== 'commands' && withContent !== (this.#mode === 'contents')) {
      throw new TypeError(`CatFileProcess: a ${MODE_OPTIONS[this.#mode]} process answers ${withContent ? 'without' : 'with'} content`);
    }
    if (names.length === 0) return Promise.resolve([]);
    const running = this.#running ?? this.#start();
    const command = this.#mode !== 'commands' ? '' : withContent ? 'contents ' : 'info ';
    return new Promise((resolve, reject) => {
      running.questions.push({ names, withContent, answers: [], resolve, reject });
      keepAlive(running, true);
      running.child.stdin.write(names.map((name) => `${command}${name}\n`).join(''));
    });
  }

  /** Ends the process (git exits at the end of its input); a later question starts a new one. */
  close(): void {
    const running = this.#running;
    this.#running = undefined;
    running?.child.stdin.end();
  }

  #start(): Running {
    const child = spawn(this.#binary, ['cat-file', MODE_OPTIONS[this.#mode]], { cwd: this.#dir, stdio: ['pipe', 'pipe', 'pipe'] });
    const running = new Running(child);
    this.#running = running;
    child.stdout.on('data', (chunk: Buffer) => {
      running.received.push(chunk);
      this.#parse(running);
    });
    child.stderr.on('data', (chunk: Buffer) => running.stderr.push(chunk));
    child.on('error', (error) =>
      this.#fail(running, new GitError('git-failed', `cannot run ${this.#binary} (${(error as NodeJS.ErrnoException).code ?? error.message})`)),
    );
    child.on('close', (code) => {
      if (this.#mode === 'commands' && code === USAGE_ERROR && !running.answered) {
        this.#fail(running, new BatchCommandUnsupportedError(this.#binary));
        return;
      }
      const detail = firstComplaint(Buffer.concat(running.stderr).toString('utf8'));
      this.#fail(running, new GitError('git-failed', `git cat-file failed in ${this.#dir} (exit ${String(code)}): ${detail}`));
    });
    // git exits early on a broken request; its exit code reports that, not the pipe.
    child.stdin.on('error', () => {});
    keepAlive(running, false);
    return running;
  }

  #parse(running: Running): void {
    const { received } = running;
    for (let question = running.questions[0]; question !== undefined; question = running.questions[0]) {
      if (running.header === undefined) {
        const newline = received.indexOfNewline();
        if (newline < 0) return;
        const line = received.take(newline + 1).toString('utf8', 0, newline);
        const found = FOUND.exec(line);
        if (!found) {
          const notFound = NOT_FOUND.exec(line);
          if (!notFound) {
            this.#fail(running, new GitError('git-failed', `git cat-file printed an answer it should not: ${JSON.stringify(line.slice(0, 200))}`));
            running.child.kill();
            return;
          }
          this.#answer(running, question, { found: false, status: notFound[1]! });
          continue;
        }
        const header = { oid: found[1]!, type: found[2]!, size: Number(found[3]) };
        if (!question.withContent) {
          this.#answer(running, question, { found: true, ...header });
          continue;
        }
        running.header = header;
      }
      const { header } = running;
      // The content, then a line feed.
      if (received.length < header.size + 1) return;
      const content = received.take(header.size + 1).subarray(0, header.size);
      running.header = undefined;
      this.#answer(running, question, { found: true, ...header, content });
    }
  }

  #answer(running: Running, question: Question, answer: ObjectAnswer): void {
    running.answered = true;
    question.answers.push(answer);
    if (question.answers.length < question.names.length) return;
    running.questions.shift();
    if (running.questions.length === 0) keepAlive(running, false);
    question.resolve(question.answers);
  }

  #fail(running: Running, error: GitError): void {
    if (this.#running === running) this.#running = undefined;
    for (const question of running.questions.splice(0)) question.reject(error);
    keepAlive(running, false);
  }
}

/**
 * An idle process must not keep node running: a command that forgets to close its repository
 * still exits, and git exits when its input closes with node.
 */
function keepAlive(running: Running, busy: boolean): void {
  const { child } = running;
  for (const handle of [child, child.stdout as Socket, child.stderr as Socket, child.stdin as Socket]) {
    if (busy) handle.ref();
    else handle.unref();
  }
}
