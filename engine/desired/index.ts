export { loadDesiredState } from './load.ts';
export { parseDesiredFile, type ParsedFile } from './parse-file.ts';
export { listDesiredPaths, readDesiredFiles } from './read-files.ts';
export type { ContractSet, DesiredContract, DesiredFile, DesiredStateResult } from './types.ts';
export { validateDesiredState } from './validate.ts';
