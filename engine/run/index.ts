export { readBaseChanges, type BaseChanges, type BaseChangesOptions } from './base-changes.ts';
export { gitCommitSource, readFileAtCommit } from './git-source.ts';
export { readPlannedKnownState } from './known-state.ts';
export { historyEntryOf, recordRunHistory } from './record-history.ts';
