/**
 * What an incremental plan with --refresh read, said plainly: it read live only the contracts it
 * planned, not every contract, so "No changes" there is not "no drift". Pure.
 */
import type { PlanDocument } from './types.ts';
import { plural } from '../text/plural.ts';

/** The line, or undefined for a plan of every contract (all of them were read). */
export function refreshNote(plan: PlanDocument): string | undefined {
  if (plan.source.incremental === undefined || plan.source.incremental.tenants.length === 0) return undefined;
  const read = plan.summary.contracts;
  if (read === 0) {
    return (
      'Read live: no contract. None changed in git since the last applied commit, and contracts unchanged in git were not read, ' +
      'so this plan does not show changes made on the service; contract-sync drift (or plan --full --refresh) reads every contract.'
    );
  }
  return `Read live: ${plural(read, 'contract')}, those this plan covers; contracts unchanged in git were not read (contract-sync drift, or plan --full --refresh, reads every contract).`;
}
