/**
 * The state store of a run, opened at the first step that needs it and closed once at the end. A
 * store that cannot be opened is a message kept for the step that must report it: a run plans from
 * no run record (every contract) rather than failing before the desired state's own errors are said.
 */
import type { Config } from '../config/types.ts';
import type { Redactor } from '../log/logger.ts';
import type { StateStore } from '../state/types.ts';
import { openStateStore } from './open-store.ts';
import type { RunPlace } from './types.ts';

export interface LazyStore {
  /**
   * The store, or why it cannot be opened (one line). Opened once, on the first call; `redactor`
   * learns the secrets the store was opened with (a database URL and its password).
   */
  get(redactor?: Redactor): Promise<StateStore | string>;
  close(): Promise<void>;
}

export function lazyStore(config: Config, repoDir: string, place: RunPlace): LazyStore {
  let opening: Promise<StateStore | string> | undefined;
  const secrets: string[] = [];
  const learn = { add: (secret: string | undefined) => void (secret === undefined || secrets.push(secret)) };
  return {
    async get(redactor) {
      opening ??= openStateStore(config, repoDir, place, learn);
      const opened = await opening;
      if (redactor) for (const secret of secrets) redactor.add(secret);
      return opened;
    },
    async close() {
      const opened = await opening;
      if (opened !== undefined && typeof opened !== 'string') await opened.close();
    },
  };
}
