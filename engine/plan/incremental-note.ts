/** The line a plan's readers get about an incremental plan: what it planned, since when, and how to plan everything. Pure. */
import { plural } from '../plural.ts';
import type { PlanSource } from './types.ts';

/** At most this many tenant names in a list; the rest are counted (a fleet has hundreds). */
const NAMED = 5;

function names(tenants: readonly string[]): string {
  return tenants.length <= NAMED ? tenants.join(', ') : `${tenants.slice(0, NAMED - 1).join(', ')} and ${plural(tenants.length - NAMED + 1, 'more tenant')}`;
}

/** The tenants of `entries` by `keyOf`, in the order met. */
function tenantsBy<T extends { readonly tenant: string }>(entries: readonly T[], keyOf: (entry: T) => string): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const entry of entries) {
    const key = keyOf(entry);
    const tenants = grouped.get(key) ?? [];
    grouped.set(key, tenants);
    tenants.push(entry.tenant);
  }
  return grouped;
}

/**
 * `Planned the contracts changed since the last applied commit abc1234 (acme, globex); --full
 * plans every contract.`, or undefined for a plan of every contract.
 */
export function incrementalNote(source: PlanSource): string | undefined {
  const { incremental } = source;
  if (incremental === undefined || incremental.tenants.length === 0) return undefined;
  const byCommit = tenantsBy(incremental.tenants, (entry) => entry.since);
  const commits = [...byCommit].map(([commit, tenants]) => `${commit.slice(0, 7)} (${names(tenants)})`);
  const since = commits.length === 1 ? `the last applied commit ${commits[0]!}` : `the last applied commits ${commits.join(', ')}`;
  const pending = incremental.tenants.reduce((sum, entry) => sum + entry.pending, 0);
  const unfinished = pending === 0 ? '' : `, and ${plural(pending, 'contract')} an earlier run did not finish`;
  const byReason = tenantsBy(incremental.full, (entry) => entry.reason);
  const full = [...byReason].map(([reason, tenants]) => ` ${names(tenants)}: every contract planned (${reason}).`).join('');
  return `Planned the contracts changed since ${since}${unfinished}; --full plans every contract.${full}`;
}
