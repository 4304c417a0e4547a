/**
 * A repository's object questions, through as few git processes as the git in use allows: one
 * `cat-file --batch-command` (git 2.36 and later) for every question, with content or without; on
 * an older git, which refuses that option, a `--batch-check` and a `--batch`, each started on
 * first use. A pull request's plan asks both kinds, so a recent git saves it a process.
 */
import { BatchCommandUnsupportedError, CatFileProcess, type ObjectAnswer } from './cat-file-process.ts';

export class GitObjects {
  readonly #binary: string;
  readonly #dir: string;
  /** Until git refuses it; then undefined for good, and the two processes below answer. */
  #commands: CatFileProcess | undefined;
  #info: CatFileProcess | undefined;
  #contents: CatFileProcess | undefined;

  constructor(binary: string, dir: string) {
    this.#binary = binary;
    this.#dir = dir;
    this.#commands = new CatFileProcess(binary, dir, 'commands');
  }

  /** The answers for `names` (object ids or revisions), in order; with `withContent`, each found object's content. */
  async ask(names: readonly string[], withContent: boolean): Promise<ObjectAnswer[]> {
    const commands = this.#commands;
    if (commands !== undefined) {
      try {
        return await commands.ask(names, withContent);
      } catch (error) {
        if (!(error instanceof BatchCommandUnsupportedError)) throw error;
        if (this.#commands === commands) this.#commands = undefined;
      }
    }
    const process = withContent
      ? (this.#contents ??= new CatFileProcess(this.#binary, this.#dir, 'contents'))
      : (this.#info ??= new CatFileProcess(this.#binary, this.#dir, 'info'));
    return process.ask(names);
  }

  /** Ends the processes (git exits at the end of its input); a later question starts them again. */
  close(): void {
    this.#commands?.close();
    this.#info?.close();
    this.#contents?.close();
  }
}
