/**
 * What a drift run says about audit events it could not use: one warning per cause per run (per
 * setting the answer did not fit, per status the reads were answered), never one per contract, so
 * that a wrong pointer is one clear line, not a hundred. Pure: the reads' outcomes in, warnings out.
 */
import type { AuditRead } from '../api/audit.ts';
import { plural } from '../text/plural.ts';

/** One contract's read: what it gave, or why it failed (an ApiError, an AuditShapeError naming its setting). */
export type AuditReadOutcome =
  | { readonly tenant: string; readonly contractId: string; readonly read: AuditRead }
  | { readonly tenant: string; readonly contractId: string; readonly error: Error & { readonly setting?: string; readonly status?: number | null } };

export interface AuditWarning {
  readonly code: 'audit-events';
  /** The setting to look at, when the answer did not fit one. */
  readonly setting?: string;
  readonly message: string;
}

export function auditWarnings(outcomes: readonly AuditReadOutcome[]): AuditWarning[] {
  const groups = new Map<string, { setting?: string; message: string; contracts: Set<string>; events: number }>();
  function add(key: string, setting: string | undefined, message: string, contract: string, events = 0): void {
    const group = groups.get(key) ?? { ...(setting === undefined ? {} : { setting }), message, contracts: new Set<string>(), events: 0 };
    group.contracts.add(contract);
    group.events += events;
    groups.set(key, group);
  }
  for (const outcome of outcomes) {
    const contract = `${outcome.tenant}/${outcome.contractId}`;
    if ('error' in outcome) {
      const { setting, status } = outcome.error;
      add(setting ?? `status ${status ?? 'none'}`, setting, outcome.error.message, contract);
      continue;
    }
    for (const problem of outcome.read.problems) add(problem.setting, problem.setting, `${problem.setting}: ${problem.message}`, contract, problem.events);
  }
  return [...groups.values()].map((group) => {
    const scope =
      group.events > 0
        ? `${plural(group.events, 'event')} of ${plural(group.contracts.size, 'contract')} left out`
        : `${plural(group.contracts.size, 'contract')}: fields unattributed`;
    return {
      code: 'audit-events',
      ...(group.setting === undefined ? {} : { setting: group.setting }),
      message: `audit events: ${group.message} (${scope}, e.g. ${[...group.contracts][0]})`,
    };
  });
}
