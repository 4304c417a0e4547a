/** The words a plan's readers get about an incremental plan: what it covers, since when, what it assumes of the rest, and how to plan everything. Pure. */
import { plural } from '../text/plural.ts';
import type { PlanSource } from './types.ts';

/** At most this many tenant names in a list; the rest are counted (a fleet has hundreds). */
const NAMED = 5;

/** How the note's pieces are written: `code` for a command, `text` for names and reasons (escaping for markdown). */
export interface NoteFormat {
  readonly code: (text: string) => string;
  readonly text: (text: string) => string;
}

const PLAIN: NoteFormat = { code: (text) => text, text: (text) => text };

function names(tenants: readonly string[], format: NoteFormat): string {
  const shown = tenants.length <= NAMED ? tenants : tenants.slice(0, NAMED - 1);
  const rest = tenants.length - shown.length;
  const listed = shown.map(format.text);
  if (rest > 0) return `${listed.join(', ')} and ${plural(rest, 'more tenant')}`;
  return listed.length === 1 ? listed[0]! : `${listed.slice(0, -1).join(', ')} and ${listed.at(-1)!}`;
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
 * `Only the contracts whose YAML changed since the last apply (commit abc1234, for acme and
 * globex) are planned here. The others are assumed to be as that apply left them; to plan every
 * contract, run contract-sync plan --full.`, or undefined for a plan of every contract.
 */
export function incrementalNote(source: PlanSource, format: NoteFormat = PLAIN): string | undefined {
  const { incremental } = source;
  if (incremental === undefined || incremental.tenants.length === 0) return undefined;
  const byCommit = [...tenantsBy(incremental.tenants, (entry) => entry.since)];
  const since =
    byCommit.length === 1
      ? `commit ${byCommit[0]![0].slice(0, 7)}, for ${names(byCommit[0]![1], format)}`
      : `commits ${byCommit.map(([commit, tenants]) => `${commit.slice(0, 7)} for ${names(tenants, format)}`).join(', ')}`;
  const pending = incremental.tenants.reduce((sum, entry) => sum + entry.pending, 0);
  const unfinished = pending === 0 ? '' : `, and ${plural(pending, 'contract')} an earlier apply did not finish`;
  const full = [...tenantsBy(incremental.full, (entry) => entry.reason)]
    .map(([reason, tenants]) => ` Every contract of ${names(tenants, format)} is planned: ${format.text(reason)}.`)
    .join('');
  return (
    `Only the contracts whose YAML changed since the last apply (${since}) are planned here${unfinished}. ` +
    `The others are assumed to be as that apply left them; to plan every contract, run ${format.code('contract-sync plan --full')}.${full}`
  );
}
