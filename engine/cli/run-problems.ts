/**
 * How a command says what kept a run from starting (its input unread, the desired state invalid):
 * on stderr, where it cannot end up in a pull-request comment, with the exit code; and how it says
 * a run's outcome (engine/run/render-outcome.ts).
 */
import { writeOutputFile } from '../output/output-file.ts';
import type { OutcomeView } from '../run/render-outcome.ts';
import { renderDesiredProblems, renderUnread } from '../run/render-problems.ts';
import type { DesiredProblems, RunUnread } from '../run/types.ts';
import { EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';

/** Says a run's outcome in its order, the JSON report into `reportFile` (--report): the exit code. */
export async function sayOutcome(io: CliIo, { said, exit }: OutcomeView, reportFile?: string): Promise<ExitCode> {
  for (const { on, text } of said) {
    if (on !== 'report') io[on].write(text);
    else if (reportFile !== undefined) await writeOutputFile({ flag: '--report', name: reportFile, cwd: io.cwd }, text);
  }
  return EXIT[exit];
}

/** A run that could not be read (git, the config), said on stderr: the exit code. `outcome` says what did not happen, e.g. "no plan written". */
export function reportUnread(io: CliIo, command: string, outcome: string, unread: RunUnread): ExitCode {
  if (unread.kind === 'bad-request') throw new UsageError(unread.message);
  io.stderr.write(renderUnread(command, outcome, unread));
  return EXIT.error;
}

/**
 * The desired state's errors and warnings and the targets' problems: the exit code when the run
 * must stop, else undefined (warnings said).
 */
export function reportDesired(io: CliIo, command: string, outcome: string, problems: DesiredProblems): ExitCode | undefined {
  const { text, stop } = renderDesiredProblems(command, outcome, problems);
  if (text !== '') io.stderr.write(text);
  return stop ? EXIT.error : undefined;
}
