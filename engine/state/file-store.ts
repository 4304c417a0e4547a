/**
 * Adapter: the file backend (formats: file-format.ts, journal-format.ts). A tenant's contract
 * records are one append-only journal (tenant-journal.ts), read with one file read and compacted
 * by the tenant's lock holder before it lets the lock go; the run record is written atomically and
 * durably (atomic-write.ts); the per-tenant lock is file-lock.ts.
 */
import { readRegularTextSync } from '../io/bounded-read.ts';
import path from 'node:path';
import { compareText } from '../text/compare-text.ts';
import { ensureDirectory, writeFileDurably } from './atomic-write.ts';
import { contractIdOfFile, parseRunRecord, RUN_FILE_NAME, serialiseRunRecord, stateRecordOf, StateFormatError, type StateRecord } from './file-format.ts';
import { acquireFileLock, fileLockLostReason, forceRemoveFileLock, readFileLockHolder, type HeldFileLock } from './file-lock.ts';
import { applyDriftKeyChanges, checkDriftKeyChanges } from './drift-memory.ts';
import { checkHistoryEntry, checkHistoryQuery, selectHistory, type RunHistoryEntry } from './history.ts';
import { JOURNAL_FILE_NAME, journalRecordLine, journalRemovalLine } from './journal-format.ts';
import type { LockHolder } from './lock-timeout-message.ts';
import { fingerprint } from '../model/fingerprint.ts';
import { checkStateDirectory, markStateDirectory } from './format-marker.ts';
import { resolveFileStoreOptions, type FileStateStoreOptions } from './file-store-options.ts';
import { checkLockOptions } from './lock-options.ts';
import { checkApplied, checkContractId, checkRunRecord, checkTenant, isTenantName } from './store-input.ts';
import { entriesOf, readTenantRecords, tenantJournal, type TenantJournal } from './tenant-journal.ts';
import {
  LockLostError,
  type AppliedContract,
  type HistoryQuery,
  type KnownContract,
  type KnownContracts,
  type LockOptions,
  type StateStore,
  type StoredContract,
  type TenantLock,
  type TenantRunRecord,
  type WriteGuard,
  type DriftKeyChanges,
  type DriftKeys,
} from './types.ts';
import { checkLastApplied } from './write-guard.ts';

/** The run history's directory inside the state directory: a dot name, never a tenant's. */
export const HISTORY_DIR_NAME = '.history';

/** The drift notifications' memory inside the state directory: one file per tenant, `<tenant>.json`. */
export const DRIFT_KEYS_DIR_NAME = '.drift-notified';
const DRIFT_KEYS_VERSION = 1;

function parseDriftKeys(text: string, file: string, tenant: string): DriftKeys {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new StateFormatError(file, `not JSON (${(error as Error).message})`);
  }
  const content = parsed as { version?: unknown; tenant?: unknown; drift?: unknown };
  if (typeof parsed !== 'object' || parsed === null || content.version !== DRIFT_KEYS_VERSION || content.tenant !== tenant) {
    throw new StateFormatError(file, `expected {"version": ${DRIFT_KEYS_VERSION}, "tenant": "${tenant}", "drift": {...}}`);
  }
  const drift = content.drift as Record<string, string | null>;
  try {
    checkDriftKeyChanges(drift);
  } catch (error) {
    throw new StateFormatError(file, (error as Error).message);
  }
  if (Object.values(drift).includes(null)) throw new StateFormatError(file, 'a drift key is null');
  return drift as DriftKeys;
}

/**
 * The text of a small file (a tenant's run record, a history entry: a few hundred bytes), or
 * undefined when there is none. Read synchronously: a plan reads every tenant's run record at its
 * start, and fs/promises' open, stat, read and close are four trips through the thread pool each
 * (100 run records: 7-10 ms of CPU, against 0.8 ms read synchronously, on Node 24).
 */
function readIfPresent(file: string): string | undefined {
  try {
    // A FIFO or device put in the state directory is refused, naming it, instead of blocking the process.
    return readRegularTextSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
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
  // One per tenant this instance wrote to or locked: its appends and compactions, one at a time.
  const journals = new Map<string, TenantJournal>();
  // The format marker (file-format.ts), checked once per instance before its first read, and made
  // sure of before its first write. A failed check is not cached: the next call checks again.
  let checked: Promise<unknown> | undefined;
  let marked: Promise<void> | undefined;
  function readable(): Promise<unknown> {
    checked ??= checkStateDirectory(directory).catch((error: unknown) => {
      checked = undefined;
      throw error;
    });
    return checked;
  }
  function writable(): Promise<void> {
    marked ??= markStateDirectory(directory, settings.randomId()).catch((error: unknown) => {
      marked = undefined;
      throw error;
    });
    return marked;
  }

  function tenantDirOf(tenant: string): string {
    checkTenant(tenant);
    return path.join(directory, tenant);
  }

  function journalOf(tenant: string): TenantJournal {
    let journal = journals.get(tenant);
    if (journal === undefined) {
      journal = tenantJournal(tenantDirOf(tenant), tenant, { compactRatio: settings.compactRatio, randomId: settings.randomId });
      journals.set(tenant, journal);
    }
    return journal;
  }

  // One write at a time per tenant's drift memory in this instance: each reads what the one before wrote.
  const driftWrites = new Map<string, Promise<void>>();

  // The locks this instance handed out, to fire their `lost` signal when a write is refused for one.
  const held = new WeakMap<TenantLock, HeldFileLock>();

  /** Fencing: refuses the write of a lock that no longer holds the tenant (see fileLockLostReason). */
  async function checkFence(tenant: string, tenantDir: string, guard: WriteGuard | undefined): Promise<void> {
    const lock = guard?.lock;
    if (lock === undefined) return;
    if (lock.tenant !== tenant) throw new TypeError(`a lock of tenant ${lock.tenant} cannot guard a write to tenant ${tenant}`);
    const why = (await fileLockLostReason(tenantDir, lock.fence)) ?? (lock.lost.aborted ? 'its heartbeat was lost earlier' : undefined);
    if (why === undefined) return;
    throw held.get(lock)?.lose(why) ?? new LockLostError(tenant, why);
  }

  async function readRunRecord(tenant: string): Promise<TenantRunRecord | undefined> {
    await readable();
    const file = path.join(tenantDirOf(tenant), RUN_FILE_NAME);
    const text = readIfPresent(file);
    return text === undefined ? undefined : parseRunRecord(text, file, tenant);
  }

  /** Still ours when the run lets go: a lock taken away (`state unlock --force`) is not compacted under. */
  async function stillHeld(tenant: string, owner: string): Promise<boolean> {
    const holder = await readFileLockHolder(tenantDirOf(tenant));
    return holder?.owner === owner && holder.pid === settings.pid && holder.hostname === settings.hostname;
  }

  return {
    async readTenant(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts> {
      const tenantDir = tenantDirOf(tenant);
      if (only !== undefined) {
        for (const id of only) checkContractId(id);
        if (only.size === 0) return new Map();
      }
      await readable();
      const { records } = await readTenantRecords(tenantDir, tenant, only);
      const known = new Map<string, KnownContract>();
      for (const [id, record] of records) known.set(id, { fields: record.fields, from: 'state' });
      return known;
    },

    async writeContract(tenant: string, applied: AppliedContract, guard?: WriteGuard): Promise<void> {
      const tenantDir = tenantDirOf(tenant);
      checkApplied(applied);
      await writable();
      await checkFence(tenant, tenantDir, guard);
      await journalOf(tenant).append(journalRecordLine(stateRecordOf(tenant, applied)));
    },

    readRun: readRunRecord,

    async writeRun(tenant: string, record: TenantRunRecord, guard?: WriteGuard): Promise<void> {
      const tenantDir = tenantDirOf(tenant);
      checkRunRecord(record);
      await writable();
      await checkFence(tenant, tenantDir, guard);
      // A compare-and-set between lock holders: the lock keeps other runs' writes out meanwhile.
      if (guard?.lastAppliedCommit !== undefined) checkLastApplied(tenant, guard, await readRunRecord(tenant));
      await ensureDirectory(tenantDir);
      await writeFileDurably(tenantDir, RUN_FILE_NAME, serialiseRunRecord(tenant, record), settings.randomId());
    },

    async lock(tenant: string, lockOptions: LockOptions): Promise<TenantLock> {
      const tenantDir = tenantDirOf(tenant);
      checkLockOptions(lockOptions);
      // Checked, not written: a lock leaves nothing behind once released, and a run that only
      // locks (cancelled at its confirmation) writes no state.
      await readable();
      const lock = await acquireFileLock(tenant, tenantDir, lockOptions, settings);
      const journal = journalOf(tenant);
      try {
        await journal.hold();
      } catch (error) {
        await lock.release();
        throw error;
      }
      let released: Promise<void> | undefined;
      async function release(): Promise<void> {
        try {
          // The end of a run: the journal is compacted before another run may take the tenant.
          // A failed compaction leaves it as it was, only longer to read; the next holder tries again.
          await journal.letGo(() => stillHeld(tenant, lockOptions.owner)).catch(() => undefined);
        } finally {
          await lock.release();
        }
      }
      const handle: TenantLock = {
        tenant,
        lost: lock.lost,
        fence: lock.fence,
        release(): Promise<void> {
          released ??= release();
          return released;
        },
      };
      held.set(handle, lock);
      return handle;
    },

    async listTenants(): Promise<string[]> {
      await readable();
      const tenants: string[] = [];
      for (const name of (await entriesOf(directory)).sort(compareText)) {
        if (name.startsWith('.')) continue;
        const names: string[] = await entriesOf(path.join(directory, name)).catch((error: unknown) => {
          // A file where a tenant's directory would be: not a tenant.
          if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
          throw error;
        });
        if (names.some((entry) => entry === RUN_FILE_NAME || contractIdOfFile(entry) !== undefined)) tenants.push(name);
        // A journal whose every record was removed is no tenant's.
        else if (names.includes(JOURNAL_FILE_NAME) && (await readTenantRecords(path.join(directory, name), name)).records.size > 0) tenants.push(name);
      }
      return tenants;
    },

    async listRecords(tenant: string): Promise<StoredContract[]> {
      await readable();
      const { records } = await readTenantRecords(tenantDirOf(tenant), tenant);
      return [...records.values()].map(storedOf);
    },

    async readRecord(tenant: string, contractId: string): Promise<StoredContract | undefined> {
      const tenantDir = tenantDirOf(tenant);
      checkContractId(contractId);
      await readable();
      const record = (await readTenantRecords(tenantDir, tenant, new Set([contractId]))).records.get(contractId);
      return record === undefined ? undefined : storedOf(record);
    },

    async removeRecord(tenant: string, contractId: string): Promise<boolean> {
      const tenantDir = tenantDirOf(tenant);
      checkContractId(contractId);
      await readable();
      if (!(await readTenantRecords(tenantDir, tenant, new Set([contractId]))).records.has(contractId)) return false;
      await writable();
      await journalOf(tenant).append(journalRemovalLine(contractId));
      return true;
    },

    async lockHolder(tenant: string): Promise<LockHolder | undefined> {
      await readable();
      return readFileLockHolder(tenantDirOf(tenant));
    },

    async forceUnlock(tenant: string): Promise<LockHolder | undefined> {
      await readable();
      return forceRemoveFileLock(tenantDirOf(tenant), settings.randomId());
    },

    async appendHistory(entry: RunHistoryEntry): Promise<void> {
      checkHistoryEntry(entry);
      await writable();
      const historyDir = path.join(directory, HISTORY_DIR_NAME);
      await ensureDirectory(historyDir);
      await writeFileDurably(historyDir, `${entry.runId}.json`, `${JSON.stringify(entry, null, 2)}\n`, settings.randomId());
    },

    async readHistory(query: HistoryQuery = {}): Promise<RunHistoryEntry[]> {
      if (query.tenant !== undefined) checkTenant(query.tenant);
      checkHistoryQuery(query);
      await readable();
      const historyDir = path.join(directory, HISTORY_DIR_NAME);
      const entries: RunHistoryEntry[] = [];
      for (const name of await entriesOf(historyDir)) {
        // Skips what a crashed write left (`.<name>.<random>.tmp`).
        if (name.startsWith('.') || !name.endsWith('.json')) continue;
        const file = path.join(historyDir, name);
        const text = readIfPresent(file);
        if (text !== undefined) entries.push(parseHistoryEntry(text, file));
      }
      return selectHistory(entries, query);
    },

    async readDriftKeys(tenant: string): Promise<DriftKeys> {
      checkTenant(tenant);
      await readable();
      const file = path.join(directory, DRIFT_KEYS_DIR_NAME, `${tenant}.json`);
      const text = readIfPresent(file);
      return text === undefined ? {} : parseDriftKeys(text, file, tenant);
    },

    async listDriftTenants(): Promise<string[]> {
      await readable();
      const dir = path.join(directory, DRIFT_KEYS_DIR_NAME);
      const tenants: string[] = [];
      for (const name of (await entriesOf(dir).catch(() => [] as string[])).sort(compareText)) {
        const tenant = name.endsWith('.json') ? name.slice(0, -'.json'.length) : undefined;
        // A file another program left there is no tenant's; a memory whose every key was forgotten holds nothing.
        if (tenant === undefined || !isTenantName(tenant)) continue;
        const file = path.join(dir, name);
        const text = readIfPresent(file);
        if (text !== undefined && Object.keys(parseDriftKeys(text, file, tenant)).length > 0) tenants.push(tenant);
      }
      return tenants;
    },

    async writeDriftKeys(tenant: string, changes: DriftKeyChanges): Promise<void> {
      checkTenant(tenant);
      checkDriftKeyChanges(changes);
      const dir = path.join(directory, DRIFT_KEYS_DIR_NAME);
      const file = path.join(dir, `${tenant}.json`);
      const write = (driftWrites.get(tenant) ?? Promise.resolve())
        .catch(() => undefined)
        .then(async () => {
          await writable();
          const text = readIfPresent(file);
          const drift = applyDriftKeyChanges(text === undefined ? {} : parseDriftKeys(text, file, tenant), changes);
          await ensureDirectory(dir);
          await writeFileDurably(dir, `${tenant}.json`, `${JSON.stringify({ version: DRIFT_KEYS_VERSION, tenant, drift }, null, 2)}\n`, settings.randomId());
        });
      driftWrites.set(tenant, write);
      return write;
    },

    async close(): Promise<void> {},
  };
}

/**
 * The file store of `directory`, its format marker checked first (file-format.ts): a command opening
 * it is refused before it plans or sends anything. The one-line reason when the marker names
 * another format.
 */
export async function openFileStateStore(directory: string, options: FileStateStoreOptions = {}): Promise<StateStore | string> {
  try {
    await checkStateDirectory(directory);
  } catch (error) {
    if (error instanceof StateFormatError) return error.message;
    throw error;
  }
  return fileStateStore(directory, options);
}
