/** The state store a config names, opened for a command. */
import { READ_LIMITS, readTextBounded } from '../io/bounded-read.ts';
import path from 'node:path';
import { describeSecretRef, resolveSecret, SecretError } from '../config/secrets.ts';
import type { Config } from '../config/types.ts';
import type { Redactor } from '../log/logger.ts';
import { openFileStateStore } from '../state/file-store.ts';
import type { StateStore } from '../state/types.ts';
import type { RunPlace } from './types.ts';

/**
 * The configured state store, or a one-line message saying why there is none. The PostgreSQL store
 * is connected (and its tables migrated) here, before the command sends anything. The caller calls
 * close() on the store when done. `redactor` learns the database URL and its password.
 */
export async function openStateStore(config: Config, repoDir: string, place: RunPlace, redactor?: Pick<Redactor, 'add'>): Promise<StateStore | string> {
  const state = config.state;
  if (state.backend === 'file') return openFileStateStore(path.resolve(repoDir, state.path));
  let url: string;
  try {
    url = await resolveSecret(state.url, { env: place.env, readFile: (file) => readTextBounded(path.resolve(place.cwd, file), READ_LIMITS.secret) });
  } catch (error) {
    const reason = error instanceof SecretError ? error.message : `${describeSecretRef(state.url)} cannot be read`;
    return `state.url cannot be resolved: ${reason}`;
  }
  redactor?.add(url);
  redactor?.add(passwordOf(url));
  return openPostgres(url, state.schema);
}

/** A PostgreSQL store (connected, its tables migrated), or its one-line problem. */
export async function openPostgres(url: string, schema: string | undefined): Promise<StateStore | string> {
  // Loaded here only: validate, --help and the file backend never load the driver.
  const { openPostgresStateStore, PostgresStateError } = await import('../state/postgres/index.ts');
  try {
    return await openPostgresStateStore({ url, ...(schema === undefined ? {} : { schema }) });
  } catch (error) {
    if (error instanceof PostgresStateError) return error.message;
    throw error;
  }
}

function passwordOf(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}
