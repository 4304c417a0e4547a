/** The last line of a text validate: errors and warnings counted, and what was valid where. Pure. */
import { isError } from '../diagnostic/diagnostic.ts';
import { shortCommit } from '../plan/render-common.ts';
import { plural } from '../text/plural.ts';
import type { RunUnread } from './types.ts';
import type { ValidateRunOutcome } from './validate.ts';

/** An invalid config (nothing else was checked), or the whole desired state checked. */
export function renderValidateSummary(
  result: Extract<RunUnread, { readonly kind: 'invalid-config' }> | Extract<ValidateRunOutcome, { readonly kind: 'validated' }>,
): string {
  if (result.kind === 'invalid-config') return `\n${summary(result.diagnostics.filter(isError).length, 0)} in ${result.configFile}\n`;
  const { configWarnings, errors, warnings, source } = result;
  const counts = summary(errors.length, warnings.length + configWarnings.length);
  const at = source.ref !== null && source.commit !== null ? ` at ${source.ref} (${shortCommit(source.commit)})` : '';
  const shown = configWarnings.length + errors.length + warnings.length > 0;
  return `${shown ? '\n' : ''}${counts}; ${plural(result.contracts, 'valid contract')} in ${plural(result.files, 'file')}${at}\n`;
}

function summary(errors: number, warnings: number): string {
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
