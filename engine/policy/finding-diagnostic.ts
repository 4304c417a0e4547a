/**
 * A policy finding as validate shows it: a diagnostic at the contract's `file:line:column`, so that
 * its text, JSON and GitHub formats (an annotation on the contract in the pull request) carry it
 * with one renderer. Pure.
 */
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { findingCounts, type Finding } from '../diagnostic/finding.ts';

// A warning's text already starts with `warning:`; a deny or an override says which it is.
const VERDICT = { deny: 'denied: ', override: 'needs an override: ', warn: '' } as const;

/** `(excepted until 2027-01-31: owner being appointed; jane@example.com, CMS-123)`, or the same as expired. */
export function describeException(finding: Finding): string {
  const { exception } = finding;
  if (exception === undefined) return '';
  const who = [exception.owner, ...(exception.ticket === undefined ? [] : [exception.ticket])].join(', ');
  const state = exception.state === 'excepted' ? `excepted until ${exception.expires}` : `exception expired on ${exception.expires}, the finding counts`;
  return ` (${state}: ${exception.reason}; ${who})`;
}

/**
 * A counting deny or override is an error; a warning, and anything an unexpired exception covers,
 * a warning. `column` is the contract's (a finding names its line).
 */
export function findingAsDiagnostic(finding: Finding, column = 1): Diagnostic {
  return {
    severity: findingFails(finding) ? 'error' : 'warning',
    code: `policy-${finding.action}`,
    file: finding.file ?? '',
    line: finding.line ?? 1,
    column,
    field: `policy ${finding.check}`,
    message: `${VERDICT[finding.action]}${finding.message}${describeException(finding)}`,
    tenant: finding.tenant,
    ...(finding.contractId === undefined ? {} : { contractId: finding.contractId }),
  };
}

/** Whether a finding fails validate and plan: a deny or an override that no unexpired exception covers. */
export function findingFails(finding: Finding): boolean {
  return finding.action !== 'warn' && findingCounts(finding);
}
