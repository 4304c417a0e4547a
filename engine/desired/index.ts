export { loadDesiredState, type LoadDesiredOptions } from './load.ts';
export { parseDesiredFile, type ParsedFile } from './parse-file.ts';
export {
  desiredPathMatcher,
  listDesiredFiles,
  listDesiredPaths,
  patternRoots,
  readDesiredFiles,
  workingTreeSource,
  type DesiredSource,
  type ReadDesiredOptions,
} from './read-files.ts';
export type { ContractSet, DesiredContract, DesiredFile, DesiredFileList, DesiredStateResult } from './types.ts';
export { validateDesiredState } from './validate.ts';
export { MAX_FLOW_WIDTH, renderDesiredFile, type RenderedFile, type RenderFileInput, type RenderNote } from './render-file.ts';
