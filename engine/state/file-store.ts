/**
 * Adapter: the file backend (format: file-format.ts). Contract records and the run record are
 * written atomically and durably (atomic-write.ts); the per-tenant lock is file-lock.ts.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { ensureDirectory, syncDirectory, writeFileDurably } from './atomic-write.ts';
import {
  contractIdOfFile,
  parseRunRecord,
  parseStateRecord,
  RUN_FILE_NAME,
  serialiseRunRecord,
  serialiseStateRecord,
  stateFileName,
  stateRecordOf,
  StateFormatError,
  type StateRecord,
} from './file-format.ts';
import { acquireFileLock, forceRemoveFileLock, readFileLockHolder } from './file-lock.ts';
import { checkHistoryEntry, checkHistoryQuery, selectHistory, type RunHistoryEntry } from './history.ts';
import type { LockHolder } from './lock-timeout-message.ts';
import { fingerprint } from '../plan/fingerprint.ts';
import { resolveFileStoreOptions, type FileStateStoreOptions } from './file-store-options.ts';
import { checkLockOptions } from './lock-options.ts';
import { checkApplied, checkContractId, checkRunRecord, checkTenant } from './store-input.ts';
import type { AppliedContract, HistoryQuery, KnownContract, KnownContracts, LockOptions, StateStore, StoredContract, TenantLock, TenantRunRecord } from './types.ts';

/** The run history's directory inside the state directory: a dot name, never a tenant's. */
export const HISTORY_DIR_NAME = '.history';

// Files read at once: enough to hide latency, few enough to stay far from the open-file limit.
const CONCURRENCY = 64;

/** The text of a file, or undefined when there is none. */
async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A contract's record, or undefined when it has none (never applied). */
async function readRecord(tenantDir: string, tenant: string, contractId: string): Promise<StateRecord | undefined> {
  const file = path.join(tenantDir, stateFileName(contractId));
  const text = await readIfPresent(file);
  return text === undefined ? undefined : parseStateRecord(text, file, tenant, contractId);
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Directory entries, or none when the directory does not exist. */
async function entriesOf(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

function storedOf(record: StateRecord): StoredContract {
  return {
    contractId: record.contractId,
    fields: record.fields,
    fingerprint: record.fingerprint ?? fingerprint(record.fields),
    ...(record.appliedAt === undefined ? {} : { appliedAt: record.appliedAt }),
    ...(record.commit === undefined ? {} : { commit: record.commit }),
  };
}

function parseHistoryEntry(text: string, file: string): RunHistoryEntry {
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch (error) {
    throw new StateFormatError(file, `not JSON (${(error as Error).message})`);
  }
  try {
    checkHistoryEntry(entry as RunHistoryEntry);
  } catch (error) {
    throw new StateFormatError(file, (error as Error).message);
  }
  return entry as RunHistoryEntry;
}

export function fileStateStore(directory: string, options: FileStateStoreOptions = {}): StateStore {
  const settings = resolveFileStoreOptions(options);

  function tenantDirOf(tenant: string): string {
    checkTenant(tenant);
    return path.join(directory, tenant);
  }

  return {
    async readTenant(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts> {
      const tenantDir = tenantDirOf(tenant);
      let ids: string[];
      if (only !== undefined) {
        for (const id of only) checkContractId(id);
        ids = [...only];
      } else {
        try {
          ids = (await readdir(tenantDir)).flatMap((name) => contractIdOfFile(name) ?? []);
        } catch (error) {
          // Nothing applied yet for this tenant.
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
          throw error;
        }
      }
      ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const known = new Map<string, KnownContract>();
      for (let start = 0; start < ids.length; start += CONCURRENCY) {
        const batch = ids.slice(start, start + CONCURRENCY);
        const records = await Promise.all(batch.map((id) => readRecord(tenantDir, tenant, id)));
        for (const record of records) if (record !== undefined) known.set(record.contractId, { fields: record.fields, from: 'state' });
      }
      return known;
    },

    async writeContract(tenant: string, applied: AppliedContract): Promise<void> {
      const tenantDir = tenantDirOf(tenant);
      checkApplied(applied);
      await ensureDirectory(tenantDir);
      const text = serialiseStateRecord(stateRecordOf(tenant, applied));
      await writeFileDurably(tenantDir, stateFileName(applied.contractId), text, settings.randomId());
    },

    async readRun(tenant: string): Promise<TenantRunRecord | undefined> {
      const file = path.join(tenantDirOf(tenant), RUN_FILE_NAME);
      const text = await readIfPresent(file);
      return text === undefined ? undefined : parseRunRecord(text, file, tenant);
    },

    async writeRun(tenant: string, record: TenantRunRecord): Promise<void> {
      const tenantDir = tenantDirOf(tenant);
      checkRunRecord(record);
      await ensureDirectory(tenantDir);
      await writeFileDurably(tenantDir, RUN_FILE_NAME, serialiseRunRecord(tenant, record), settings.randomId());
    },

    async lock(tenant: string, lockOptions: LockOptions): Promise<TenantLock> {
      const tenantDir = tenantDirOf(tenant);
      checkLockOptions(lockOptions);
      return acquireFileLock(tenant, tenantDir, lockOptions, settings);
    },

    async listTenants(): Promise<string[]> {
      const tenants: string[] = [];
      for (const name of (await entriesOf(directory)).sort(byName)) {
        if (name.startsWith('.')) continue;
        const names = await entriesOf(path.join(directory, name)).catch((error: unknown) => {
          // A file where a tenant's directory would be: not a tenant.
          if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
          throw error;
        });
        if (names.some((entry) => entry === RUN_FILE_NAME || contractIdOfFile(entry) !== undefined)) tenants.push(name);
      }
      return tenants;
    },

    async listRecords(tenant: string): Promise<StoredContract[]> {
      const tenantDir = tenantDirOf(tenant);
      const ids = (await entriesOf(tenantDir)).flatMap((name) => contractIdOfFile(name) ?? []).sort(byName);
      const records: StoredContract[] = [];
      for (let start = 0; start < ids.length; start += CONCURRENCY) {
        const batch = await Promise.all(ids.slice(start, start + CONCURRENCY).map((id) => readRecord(tenantDir, tenant, id)));
        for (const record of batch) if (record !== undefined) records.push(storedOf(record));
      }
      return records;
    },

    async readRecord(tenant: string, contractId: string): Promise<StoredContract | undefined> {
      const tenantDir = tenantDirOf(tenant);
      checkContractId(contractId);
      const record = await readRecord(tenantDir, tenant, contractId);
      return record === undefined ? undefined : storedOf(record);
    },

    async removeRecord(tenant: string, contractId: string): Promise<boolean> {
      const tenantDir = tenantDirOf(tenant);
      checkContractId(contractId);
      const file = path.join(tenantDir, stateFileName(contractId));
      if ((await readIfPresent(file)) === undefined) return false;
      await rm(file, { force: true });
      await syncDirectory(tenantDir);
      return true;
    },

    async lockHolder(tenant: string): Promise<LockHolder | undefined> {
      return readFileLockHolder(tenantDirOf(tenant));
    },

    async forceUnlock(tenant: string): Promise<LockHolder | undefined> {
      return forceRemoveFileLock(tenantDirOf(tenant), settings.randomId());
    },

    async appendHistory(entry: RunHistoryEntry): Promise<void> {
      checkHistoryEntry(entry);
      const historyDir = path.join(directory, HISTORY_DIR_NAME);
      await ensureDirectory(historyDir);
      await writeFileDurably(historyDir, `${entry.runId}.json`, `${JSON.stringify(entry, null, 2)}\n`, settings.randomId());
    },

    async readHistory(query: HistoryQuery = {}): Promise<RunHistoryEntry[]> {
      if (query.tenant !== undefined) checkTenant(query.tenant);
      checkHistoryQuery(query);
      const historyDir = path.join(directory, HISTORY_DIR_NAME);
      const entries: RunHistoryEntry[] = [];
      for (const name of await entriesOf(historyDir)) {
        // Skips what a crashed write left (`.<name>.<random>.tmp`).
        if (name.startsWith('.') || !name.endsWith('.json')) continue;
        const file = path.join(historyDir, name);
        const text = await readIfPresent(file);
        if (text !== undefined) entries.push(parseHistoryEntry(text, file));
      }
      return selectHistory(entries, query);
    },

    async close(): Promise<void> {},
  };
}
