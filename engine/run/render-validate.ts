/** The last line of a text validate: errors and warnings counted, and what was valid where. Pure. */
import { isError } from '../diagnostic/diagnostic.ts';
import { findingCounts, type Finding } from '../diagnostic/finding.ts';
import { shortCommit } from '../plan/render-common.ts';
import { plural } from '../text/plural.ts';
import type { RunUnread } from './types.ts';
import type { ValidateRunOutcome } from './validate.ts';

/** An invalid config (nothing else was checked), or the whole desired state checked. */
export function renderValidateSummary(
  result: Extract<RunUnread, { readonly kind: 'invalid-config' }> | Extract<ValidateRunOutcome, { readonly kind: 'validated' }>,
): string {
  if (result.kind === 'invalid-config') return `\n${summary(result.diagnostics.filter(isError).length, 0)} in ${result.configFile}\n`;
  const { configWarnings, errors, warnings, source, policyDiagnostics } = result;
  const policyErrors = policyDiagnostics.filter(isError).length;
  const counts =
    summary(errors.length + policyErrors, warnings.length + configWarnings.length + policyDiagnostics.length - policyErrors) + policySummary(result.findings);
  const at = source.ref !== null && source.commit !== null ? ` at ${source.ref} (${shortCommit(source.commit)})` : '';
  const shown = configWarnings.length + errors.length + warnings.length + policyDiagnostics.length > 0;
  return `${shown ? '\n' : ''}${counts}; ${plural(result.contracts, 'valid contract')} in ${plural(result.files, 'file')}${at}\n`;
}

/** ` (policies: 1 denied, 1 needs an override, 2 warned, 1 excepted)`; nothing without findings. */
function policySummary(findings: readonly Finding[]): string {
  if (findings.length === 0) return '';
  const counting = findings.filter(findingCounts);
  const denied = counting.filter((finding) => finding.action === 'deny').length;
  const override = counting.filter((finding) => finding.action === 'override').length;
  const warned = counting.filter((finding) => finding.action === 'warn').length;
  const excepted = findings.length - counting.length;
  const parts = [
    denied > 0 ? `${denied} denied` : '',
    override > 0 ? `${override} ${override === 1 ? 'needs' : 'need'} an override` : '',
    warned > 0 ? `${warned} warned` : '',
    excepted > 0 ? `${excepted} excepted` : '',
  ];
  return ` (policies: ${parts.filter((part) => part !== '').join(', ')})`;
}

function summary(errors: number, warnings: number): string {
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
