/**
 * How a command says what kept a run from starting (its input unread, the desired state invalid):
 * on stderr, where it cannot end up in a pull-request comment, with the exit code.
 */
import { plural } from '../plural.ts';
import type { DesiredProblems, RunUnread } from '../run/types.ts';
import { formatDiagnostics } from '../diagnostic-format.ts';
import { EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';

/** A run that could not be read (git, the config), said on stderr: the exit code. `outcome` says what did not happen, e.g. "no plan written". */
export function reportUnread(io: CliIo, command: string, outcome: string, unread: RunUnread): ExitCode {
  if (unread.kind === 'bad-request') throw new UsageError(unread.message);
  if (unread.kind === 'git-error') {
    io.stderr.write(`contract-sync ${command}: ${unread.message}\n`);
  } else {
    io.stderr.write(formatDiagnostics(unread.diagnostics, 'text'));
    io.stderr.write(`invalid config: ${outcome}\n`);
  }
  return EXIT.error;
}

/**
 * The desired state's errors and warnings and the targets' problems: the exit code when the run
 * must stop, else undefined (warnings said).
 */
export function reportDesired(io: CliIo, command: string, outcome: string, problems: DesiredProblems): ExitCode | undefined {
  const { configDiagnostics, errors, warnings, baseError, targeting } = problems;
  if (errors.length > 0) {
    io.stderr.write(formatDiagnostics([...configDiagnostics, ...errors, ...warnings], 'text'));
    io.stderr.write(`${plural(errors.length, 'error')} in the desired state: ${outcome}\n`);
    return EXIT.error;
  }
  if (baseError) {
    io.stderr.write(`contract-sync ${command}: ${baseError.message}\n`);
    return EXIT.error;
  }
  if (configDiagnostics.length + warnings.length > 0) io.stderr.write(formatDiagnostics([...configDiagnostics, ...warnings], 'text'));
  if (targeting && targeting.unmatchedTargets.length > 0) {
    for (const target of targeting.unmatchedTargets)
      io.stderr.write(`contract-sync ${command}: --target ${target} matches no contract declared in the desired state\n`);
    io.stderr.write(
      `${targeting.unmatchedTargets.length === 1 ? '1 target matches' : `${targeting.unmatchedTargets.length} targets match`} no contract: ${outcome}\n`,
    );
    return EXIT.error;
  }
  for (const exclude of targeting?.unmatchedExcludes ?? []) io.stderr.write(`contract-sync ${command}: warning: --exclude ${exclude} matches no contract\n`);
  return undefined;
}
