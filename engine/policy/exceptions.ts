/**
 * `policyExceptions:`: a finding of a rule on a contract an exception names is "excepted" while
 * the exception has not expired, and "expired" (counting as if there were none) from its expiry
 * date on. Judged on a date the caller gives (from the injected clock), so that every run on the
 * same day gives the same verdict. Pure.
 */
import type { PolicyExceptionConfig } from '../config/types.ts';
import type { Finding, FindingException } from '../diagnostic/finding.ts';

/** The UTC calendar date of an instant, `YYYY-MM-DD`: what `expires` is compared with. */
export function utcDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

function exceptionOf(exception: PolicyExceptionConfig, today: string): FindingException {
  return {
    state: today < exception.expires ? 'excepted' : 'expired',
    owner: exception.owner,
    reason: exception.reason,
    ...(exception.ticket === undefined ? {} : { ticket: exception.ticket }),
    expires: exception.expires,
  };
}

/**
 * The exception that matches `finding` (its rule, its `TENANT/ID`), an unexpired one first; the
 * finding unchanged when none does.
 */
export function withException(finding: Finding, exceptions: readonly PolicyExceptionConfig[], today: string): Finding {
  if (finding.contractId === undefined) return finding;
  const target = `${finding.tenant}/${finding.contractId}`;
  const matching = exceptions.filter((exception) => exception.policy === finding.check && exception.contracts.includes(target));
  if (matching.length === 0) return finding;
  const chosen = matching.find((exception) => today < exception.expires) ?? matching[0]!;
  return { ...finding, exception: exceptionOf(chosen, today) };
}
