/**
 * What kept a run from starting (its input unread, the desired state invalid), as text for
 * stderr, where it cannot end up in a pull-request comment (engine/cli/run-problems.ts writes it).
 * Pure.
 */
import { formatDiagnostics } from '../diagnostic/diagnostic-format.ts';
import { plural } from '../text/plural.ts';
import type { DesiredProblems, RunUnread } from './types.ts';

/** A run that could not be read (git, the config). `outcome` says what did not happen, e.g. "no plan written". */
export function renderUnread(command: string, outcome: string, unread: Exclude<RunUnread, { readonly kind: 'bad-request' }>): string {
  if (unread.kind === 'git-error') return `contract-sync ${command}: ${unread.message}\n`;
  return `${formatDiagnostics(unread.diagnostics, 'text')}invalid config: ${outcome}\n`;
}

/**
 * The desired state's errors and warnings and the targets' problems: `stop` when the run must
 * stop (else only warnings were said).
 */
export function renderDesiredProblems(command: string, outcome: string, problems: DesiredProblems): { readonly text: string; readonly stop: boolean } {
  const { configDiagnostics, errors, warnings, baseError, targeting } = problems;
  if (errors.length > 0) {
    return {
      text: `${formatDiagnostics([...configDiagnostics, ...errors, ...warnings], 'text')}${plural(errors.length, 'error')} in the desired state: ${outcome}\n`,
      stop: true,
    };
  }
  if (baseError) return { text: `contract-sync ${command}: ${baseError.message}\n`, stop: true };
  let text = configDiagnostics.length + warnings.length > 0 ? formatDiagnostics([...configDiagnostics, ...warnings], 'text') : '';
  if (targeting && targeting.unmatchedTargets.length > 0) {
    for (const target of targeting.unmatchedTargets) text += `contract-sync ${command}: --target ${target} matches no contract declared in the desired state\n`;
    text += `${targeting.unmatchedTargets.length === 1 ? '1 target matches' : `${targeting.unmatchedTargets.length} targets match`} no contract: ${outcome}\n`;
    return { text, stop: true };
  }
  for (const exclude of targeting?.unmatchedExcludes ?? []) text += `contract-sync ${command}: warning: --exclude ${exclude} matches no contract\n`;
  return { text, stop: false };
}
