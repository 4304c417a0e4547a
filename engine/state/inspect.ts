/** What `contract-sync state` shows of a state store: a summary per tenant, and its text renderings. */
import type { HistoryPolicy, RunHistoryEntry } from './history.ts';
import { holderParts, type LockHolder } from './lock-timeout-message.ts';
import type { StateStore, StoredContract } from './types.ts';
import { hostname as osHostname } from 'node:os';
import { plural } from '../text/plural.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import { isProcessAlive } from './file-store-options.ts';

export interface TenantSummary {
  readonly tenant: string;
  readonly records: number;
  readonly lastAppliedCommit: string | null;
  readonly pending: number;
  /** Absent when nobody holds the tenant's lock. */
  readonly lock?: LockHolder;
  /** The lock's holder is gone: on this host, its process is not running (the next run takes the lock over). */
  readonly lockStale?: true;
}

/** Where `state list` runs: a lock taken on this host by a process that is not running is stale. */
export interface LockJudge {
  readonly hostname: string;
  readonly isProcessAlive: (pid: number) => boolean;
}

function holderGone(holder: LockHolder, judge: LockJudge): boolean {
  return holder.hostname === judge.hostname && holder.pid !== undefined && holder.pid > 0 && !judge.isProcessAlive(holder.pid);
}

/** Reads the summary of every tenant in the store, or of `tenant` alone. */
export async function readStateSummary(
  store: StateStore,
  tenant?: string,
  judge: LockJudge = { hostname: osHostname(), isProcessAlive },
): Promise<TenantSummary[]> {
  const tenants = tenant === undefined ? await store.listTenants() : [tenant];
  const summary: TenantSummary[] = [];
  for (const name of tenants) {
    const [records, run, lock] = await Promise.all([store.listRecords(name), store.readRun(name), store.lockHolder(name)]);
    summary.push({
      tenant: name,
      records: records.length,
      lastAppliedCommit: run?.lastAppliedCommit ?? null,
      pending: run?.pending.length ?? 0,
      ...(lock === undefined ? {} : { lock }),
      ...(lock !== undefined && holderGone(lock, judge) ? { lockStale: true as const } : {}),
    });
  }
  return summary;
}

/** Who holds a lock, as the lock says (escaped for a terminal: a lock file is anyone's to write). */
export function describeLockHolder(holder: LockHolder): string {
  if (holder.owner === undefined)
    return holder.modifiedAt === undefined ? 'an unknown run' : `an unknown run (lock last modified ${escapeForTerminal(holder.modifiedAt)})`;
  return holderParts(holder).join(', ');
}

export function renderSummaryText(summary: readonly TenantSummary[]): string {
  if (summary.length === 0) return 'The state store holds no tenant yet.\n';
  const lines = summary.map((tenant) => {
    const commit = tenant.lastAppliedCommit === null ? 'no applied commit' : `last applied commit ${tenant.lastAppliedCommit.slice(0, 12)}`;
    const lock =
      tenant.lock === undefined
        ? 'unlocked'
        : tenant.lockStale
          ? `stale lock (its process ${tenant.lock.pid} is not running on this host; the next run takes it over) of ${describeLockHolder(tenant.lock)}`
          : `locked by ${describeLockHolder(tenant.lock)}`;
    return `${escapeForTerminal(tenant.tenant)}: ${plural(tenant.records, 'record')}, ${escapeForTerminal(commit)}, ${tenant.pending} pending, ${lock}`;
  });
  return `${lines.join('\n')}\n`;
}

/** A record as text: what the store holds (ids, commit, fields) escaped for a terminal, line by line. */
export function renderRecordText(tenant: string, record: StoredContract): string {
  return [
    `tenant:      ${tenant}`,
    `contract:    ${record.contractId}`,
    `applied at:  ${record.appliedAt ?? 'not recorded'}`,
    `commit:      ${record.commit ?? 'none'}`,
    `fingerprint: ${record.fingerprint}`,
    `fields:`,
    ...JSON.stringify(record.fields, null, 2).split('\n'),
    '',
  ]
    .map(escapeForTerminal)
    .join('\n');
}

/** `3 findings: 1 denied, 2 warned` (the counts that are not 0). */
function policyCounts(policy: HistoryPolicy): string {
  const counts = (['denied', 'needsOverride', 'warned', 'overridden', 'excepted', 'expired'] as const)
    .filter((key) => policy[key] > 0)
    .map((key) => `${policy[key]} ${key === 'needsOverride' ? 'needing an override' : key}`);
  return `${plural(policy.findings, 'finding')}${counts.length > 0 ? `: ${counts.join(', ')}` : ''}`;
}

/** The run history as text. What came from CI variables, workers' names and the service (actor, URL, worker, error) is escaped for a terminal. */
export function renderHistoryText(entries: readonly RunHistoryEntry[]): string {
  if (entries.length === 0) return 'No run recorded.\n';
  const lines: string[] = [];
  for (const entry of entries) {
    const who = escapeForTerminal([entry.startedBy.actor, entry.startedBy.url].filter((part) => part !== undefined).join(' '));
    lines.push(`${entry.finishedAt}  ${entry.command}  run ${entry.runId}  commit ${entry.commit?.slice(0, 12) ?? 'none'}${who === '' ? '' : `  by ${who}`}`);
    for (const tenant of entry.tenants) {
      const unknown = tenant.unknown === undefined ? '' : ` (${tenant.unknown} unknown: may have been applied, not counted; the next run settles them)`;
      const from = (tenant.takenOverFrom ?? []).map(escapeForTerminal);
      const takenOver = from.length === 0 ? '' : `, taken over from ${from.length === 1 ? 'worker' : 'workers'} ${from.join(', ')}`;
      const worker = tenant.worker === undefined ? '' : ` (worker ${escapeForTerminal(tenant.worker)}${takenOver})`;
      lines.push(
        `  ${escapeForTerminal(tenant.tenant)}: ${tenant.changed} changed, ${tenant.applied} applied, ${tenant.failed} failed${unknown}${worker}${tenant.error === undefined ? '' : `; ${escapeForTerminal(tenant.error)}`}`,
      );
    }
    if (entry.policy !== undefined) lines.push(`  policy: ${policyCounts(entry.policy)}`);
    for (const lifted of entry.overrides ?? []) {
      const where = lifted.contractId === undefined ? lifted.tenant : `${lifted.tenant}/${lifted.contractId}`;
      lines.push(`  overridden: ${escapeForTerminal(`${lifted.policy} on ${where} by ${lifted.by}: ${lifted.reason}`)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
