/**
 * The confirmation of apply and drift --fix, Terraform's way: on an interactive terminal the plan
 * is shown and the run goes on only when the answer is exactly `yes`. Reads the CliIo's stdin, so
 * tests answer through a stream.
 */
import type { RunView } from '../output/run-view.ts';
import { wrapToWidth } from '../output/progress.ts';
import { beforeQuestion, type Sending, type ShownPlan } from '../run/render-run.ts';
import type { ApplyPreview, RunEffects } from '../run/types.ts';
import { clockOf, isInteractive, type CliIo } from './io.ts';
import { runEffects } from './run-effects.ts';

/**
 * Where the question (and what is said just above it) goes: stdout on a terminal; with stdout
 * redirected or piped, stderr when that is the terminal, so the person answering sees it.
 */
export function promptStream(io: CliIo): CliIo['stderr'] {
  return io.stdout.isTTY === true || io.stderr.isTTY !== true ? io.stdout : io.stderr;
}

/** Ask only a person, only when something would be sent, and not after --auto-approve. */
export function shouldAsk(io: CliIo, run: { readonly autoApprove: boolean; readonly ops: number }): boolean {
  return !run.autoApprove && run.ops > 0 && isInteractive(io);
}

/**
 * Writes `question` and reads one line: true only for `yes` (surrounding spaces aside). Any other
 * answer, the end of input (Ctrl-D) or no stdin at all is no.
 */
export async function askYes(io: CliIo, question: string): Promise<boolean> {
  const { stdin } = io;
  const prompt = promptStream(io);
  prompt.write(question);
  if (stdin === undefined) return false;
  // Loaded here: only a question needs it, and every plan and apply loads this module.
  const { createInterface } = await import('node:readline');
  return new Promise((resolve) => {
    // Not a readline terminal: the terminal's own line editing and echo serve, and Ctrl-C stays the process's.
    const lines = createInterface({ input: stdin, terminal: false });
    let answered = false;
    lines.once('line', (line) => {
      answered = true;
      lines.close();
      resolve(line.trim() === 'yes');
    });
    lines.once('close', () => {
      if (answered) return;
      // The line of an unanswered question ends here, so that what follows starts a line.
      prompt.write('\n');
      resolve(false);
    });
  });
}

/** How long the question waits for a pipe's reader to print the plan (a terminal's reader prints in well under this). */
const PIPE_SETTLE_MS = 200;

export interface Question {
  /** Shows the plan before the question (drift --fix shows it only when it asks): what it showed. */
  readonly before?: (preview: ApplyPreview) => ShownPlan;
  readonly text: (sending: Sending) => string;
}

/**
 * The effects of a run that may send: its events rendered by `view`, and the question asked only
 * of a person (stdin a terminal), only when something would be sent, not after --auto-approve.
 * What is said just above the question, and the question, fit the terminal's width.
 */
export function sendingEffects(io: CliIo, view: RunView, autoApprove: boolean, question: Question): Promise<RunEffects> {
  return runEffects(io, {
    logs: true,
    onEvent: view.onEvent,
    async confirm(preview) {
      if (!shouldAsk(io, { autoApprove, ops: preview.sending.ops })) return true;
      const shown = question.before?.(preview) ?? view.shown();
      for (const { reason } of preview.refused) io.stdout.write(`\n${reason}\n`);
      const prompt = promptStream(io);
      // The plan went into a pipe (`apply | tee log`): give its reader a moment to print it, so the
      // question comes below the plan on the terminal, not in the middle of it.
      if (prompt !== io.stdout) await clockOf(io).sleep(PIPE_SETTLE_MS);
      const again = beforeQuestion(shown, io.stdout);
      if (again !== undefined) prompt.write(`\n${wrapToWidth(again, prompt.columns)}`);
      prompt.write('\n');
      return askYes(io, wrapToWidth(question.text(preview.sending), prompt.columns));
    },
  });
}
