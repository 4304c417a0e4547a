export {
  contractIdOfFile,
  parseStateRecord,
  serialiseStateRecord,
  STATE_FILE_VERSION,
  StateFormatError,
  stateFileName,
  type StateRecord,
} from './file-format.ts';
export { fileStateStore } from './file-store.ts';
export { emptyStateStore, memoryStateStore, readKnownState } from './memory-store.ts';
export type { KnownContract, KnownContracts, KnownSource, KnownState, StateStore } from './types.ts';
