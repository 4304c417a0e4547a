/**
 * The confirmation of apply and drift --fix, Terraform's way: on an interactive terminal the plan
 * is shown and the run goes on only when the answer is exactly `yes`. Reads the CliIo's stdin, so
 * tests answer through a stream.
 */
import type { CliIo } from './io.ts';

/**
 * A person can answer: stdin is a terminal, whatever stdout is (`apply > out.txt` and `apply | tee
 * log` at a terminal still ask, as Terraform asks whenever it can read an answer). In CI (no
 * terminal) nothing is asked.
 */
export function isInteractive(io: CliIo): boolean {
  return io.stdin?.isTTY === true;
}

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
