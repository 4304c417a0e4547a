/**
 * Adapter: the file backend (format: file-format.ts). Contract records and the run record are
 * written atomically and durably (atomic-write.ts); the per-tenant lock is file-lock.ts.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureDirectory, writeFileDurably } from './atomic-write.ts';
import {
  contractIdOfFile,
  parseRunRecord,
  parseStateRecord,
  RUN_FILE_NAME,
  serialiseRunRecord,
  serialiseStateRecord,
  stateFileName,
  stateRecordOf,
  type StateRecord,
} from './file-format.ts';
import { acquireFileLock } from './file-lock.ts';
import { resolveFileStoreOptions, type FileStateStoreOptions } from './file-store-options.ts';
import { checkLockOptions } from './lock-options.ts';
import { checkApplied, checkContractId, checkRunRecord, checkTenant } from './store-input.ts';
import type { AppliedContract, KnownContract, KnownContracts, LockOptions, StateStore, TenantLock, TenantRunRecord } from './types.ts';

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

    async close(): Promise<void> {},
  };
}
