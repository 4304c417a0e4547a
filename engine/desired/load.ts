import type { Config } from '../config/types.ts';
import { workingTreeSource, type DesiredSource } from './read-files.ts';
import type { DesiredStateResult } from './types.ts';
import { validateDesiredState } from './validate.ts';

export interface LoadDesiredOptions {
  /** Where the files come from; default: the working tree at `repoDir`. */
  readonly source?: DesiredSource;
  /** Read only these repository-relative files (incremental apply); cross-file checks then see only them. */
  readonly only?: ReadonlySet<string>;
}

/** Reads the desired-state files (of the working tree, or of `options.source`) and validates them. */
export async function loadDesiredState(
  repoDir: string,
  config: Pick<Config, 'tenants' | 'desired'>,
  options: LoadDesiredOptions = {},
): Promise<DesiredStateResult> {
  const source = options.source ?? workingTreeSource(repoDir);
  const files = await source.readFiles(config.desired.paths, options.only ? { only: options.only } : {});
  return validateDesiredState(files, config);
}
