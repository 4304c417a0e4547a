export {
  contractIdOfFile,
  isTempFileName,
  LOCK_FILE_NAME,
  parseLockFile,
  parseRunRecord,
  parseStateRecord,
  RUN_FILE_NAME,
  serialiseLockFile,
  serialiseRunRecord,
  serialiseStateRecord,
  STATE_FILE_VERSION,
  STATE_FORMAT_VERSION,
  RUN_RECORD_VERSION,
  StateFormatError,
  stateFileName,
  stateRecordOf,
  tempFileName,
  type LockFileContent,
  type RunRecordFile,
  type StateRecord,
} from './file-format.ts';
export { DEFAULT_POLL_MS, DEFAULT_STALE_LOCK_MS, type FileStateStoreOptions, type IntervalTimers } from './file-store-options.ts';
export { fileStateStore, openFileStateStore } from './file-store.ts';
export { emptyStateStore, memoryStateStore, readKnownState, type MemoryStateStore, type MemoryStateStoreOptions, type TimeoutTimers } from './memory-store.ts';
export {
  checkHistoryEntry,
  selectHistory,
  startedByFromEnv,
  type HistoryCommand,
  type HistoryTenant,
  type RunHistoryEntry,
  type StartedBy,
} from './history.ts';
export type { LockHolder } from './lock-timeout-message.ts';
export { LastAppliedChangedError, LockLostError, LockTimeoutError } from './types.ts';
export type {
  AppliedContract,
  DriftKeyChanges,
  DriftKeys,
  HistoryQuery,
  StoredContract,
  KnownContract,
  KnownContracts,
  KnownSource,
  KnownState,
  LockOptions,
  StateStore,
  TenantLock,
  TenantRunRecord,
  WriteGuard,
} from './types.ts';
