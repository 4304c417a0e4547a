import type { Config } from '../config/types.ts';
import { readDesiredFiles } from './read-files.ts';
import type { DesiredStateResult } from './types.ts';
import { validateDesiredState } from './validate.ts';

/** Reads the desired-state files of a working tree and validates them. */
export async function loadDesiredState(repoDir: string, config: Pick<Config, 'tenants' | 'desired'>): Promise<DesiredStateResult> {
  const files = await readDesiredFiles(repoDir, config.desired.paths);
  return validateDesiredState(files, config);
}
