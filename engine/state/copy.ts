/**
 * Copies a whole state store into another (`contract-sync state push` / `pull`): every contract
 * record, run record, history entry and the drift notifications' memory (so that a drift already
 * told of is not told again from the new store), then reads the copy back and compares it with the source.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StateStore, StoredContract } from './types.ts';
import { plural } from '../text/plural.ts';

export interface CopyCounts {
  readonly tenants: number;
  readonly records: number;
  readonly runs: number;
  readonly history: number;
  /** Contracts whose drift was last notified (the drift memory), over every tenant. */
  readonly driftKeys: number;
}

export interface CopyResult {
  readonly copied: CopyCounts;
  /** One line per difference found reading the copy back; empty when the copy is exact. */
  readonly mismatches: readonly string[];
}

// The owner named in both stores' locks while a tenant is copied.
const COPY_OWNER = 'contract-sync state copy';

function recordKey(record: StoredContract): string {
  return `${record.fingerprint} ${record.appliedAt ?? ''} ${record.commit ?? ''}`;
}

/** Every tenant `store` holds anything of: records, a run record, or only the drift memory (a `drift` that ran before the first apply). */
async function tenantsOf(store: StateStore): Promise<string[]> {
  const [held, drift] = await Promise.all([store.listTenants(), store.listDriftTenants()]);
  return [...new Set([...held, ...drift])].sort();
}

/** What of `from` is missing or different in `to`. */
async function compare(from: StateStore, to: StateStore): Promise<string[]> {
  const mismatches: string[] = [];
  const tenants = await tenantsOf(from);
  const copiedTenants = new Set(await tenantsOf(to));
  for (const tenant of tenants) {
    if (!copiedTenants.has(tenant)) mismatches.push(`tenant ${tenant}: missing from the copy`);
    const source = await from.listRecords(tenant);
    const copy = new Map((await to.listRecords(tenant)).map((record) => [record.contractId, record]));
    if (copy.size !== source.length) mismatches.push(`tenant ${tenant}: ${plural(source.length, 'record')}, the copy holds ${copy.size}`);
    for (const record of source) {
      const copied = copy.get(record.contractId);
      if (copied === undefined || recordKey(copied) !== recordKey(record) || !isDeepStrictEqual(copied.fields, record.fields)) {
        mismatches.push(
          `tenant ${tenant} contract ${record.contractId}: the copy differs (fingerprint ${record.fingerprint}, copy ${copied?.fingerprint ?? 'absent'})`,
        );
      }
    }
    const [run, copiedRun] = await Promise.all([from.readRun(tenant), to.readRun(tenant)]);
    if (!isDeepStrictEqual(run, copiedRun)) mismatches.push(`tenant ${tenant}: the run record differs in the copy`);
    const [keys, copiedKeys] = await Promise.all([from.readDriftKeys(tenant), to.readDriftKeys(tenant)]);
    for (const [contractId, key] of Object.entries(keys))
      if (copiedKeys[contractId] !== key) mismatches.push(`tenant ${tenant} contract ${contractId}: the drift memory differs in the copy`);
  }
  const history = await from.readHistory();
  const copiedHistory = new Map((await to.readHistory()).map((entry) => [entry.runId, entry]));
  for (const entry of history) {
    if (!isDeepStrictEqual(copiedHistory.get(entry.runId), entry)) mismatches.push(`run ${entry.runId}: missing or different in the copy's history`);
  }
  return mismatches;
}

/**
 * Copies `from` into `to`, each tenant under its lock in both stores (taken at once or not at all:
 * a run in progress makes the copy fail with LockTimeoutError), then verifies the copy.
 */
export async function copyState(from: StateStore, to: StateStore): Promise<CopyResult> {
  let records = 0;
  let runs = 0;
  let driftKeys = 0;
  const tenants = await tenantsOf(from);
  for (const tenant of tenants) {
    const source = await from.lock(tenant, { timeoutMs: 0, owner: COPY_OWNER });
    try {
      const target = await to.lock(tenant, { timeoutMs: 0, owner: COPY_OWNER });
      try {
        for (const record of await from.listRecords(tenant)) {
          // A record written before appliedAt and commit were recorded keeps them unknown.
          await to.writeContract(tenant, { ...record, appliedAt: record.appliedAt ?? '', commit: record.commit ?? null });
          records += 1;
        }
        const run = await from.readRun(tenant);
        if (run !== undefined) {
          await to.writeRun(tenant, run);
          runs += 1;
        }
        const keys = await from.readDriftKeys(tenant);
        if (Object.keys(keys).length > 0) {
          await to.writeDriftKeys(tenant, keys);
          driftKeys += Object.keys(keys).length;
        }
      } finally {
        await target.release();
      }
    } finally {
      await source.release();
    }
  }
  const history = await from.readHistory();
  for (const entry of history) await to.appendHistory(entry);
  return { copied: { tenants: tenants.length, records, runs, history: history.length, driftKeys }, mismatches: await compare(from, to) };
}
