/**
 * How a command says what kept a run from starting (its input unread, the desired state invalid):
 * on stderr, where it cannot end up in a pull-request comment, with the exit code.
 */
import { renderDesiredProblems, renderUnread } from '../run/render-problems.ts';
import type { DesiredProblems, RunUnread } from '../run/types.ts';
import { EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';

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
