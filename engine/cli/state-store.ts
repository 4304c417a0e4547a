/** The state store a config names, opened for a command. */
import path from 'node:path';
import type { Config } from '../config/types.ts';
import { fileStateStore } from '../state/file-store.ts';
import type { StateStore } from '../state/types.ts';

/** The configured state store, or a message saying why there is none. */
export function openStateStore(config: Config, repoDir: string): StateStore | string {
  if (config.state.backend === 'postgres') return 'the postgres state backend is not available yet; use state: { backend: file }';
  return fileStateStore(path.resolve(repoDir, config.state.path));
}
