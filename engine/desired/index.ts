export { loadDesiredState, type LoadDesiredOptions } from './load.ts';
export { parseDesiredFile, type ParsedFile } from './parse-file.ts';
export {
  desiredPathMatcher,
  listDesiredPaths,
  patternRoots,
  readDesiredFiles,
  workingTreeSource,
  type DesiredSource,
  type ReadDesiredOptions,
} from './read-files.ts';
export type { ContractSet, DesiredContract, DesiredFile, DesiredStateResult } from './types.ts';
export { validateDesiredState } from './validate.ts';
