/**
 * The state command's runs: the configured store opened from the repository's config, the other
 * store of a push or pull, and a copy between them. The command renders what they return.
 */
import path from 'node:path';
import type { Diagnostic } from '../diagnostic.ts';
import { copyState, type CopyResult } from '../state/copy.ts';
import { openFileStateStore } from '../state/file-store.ts';
import type { StateStore } from '../state/types.ts';
import { readRepoConfig } from './config.ts';
import { openPostgres, openStateStore } from './open-store.ts';
import type { RunPlace, RunWhere } from './types.ts';

/** The store the repository's config names; the config's diagnostics when it has errors; a one-line message when it cannot be opened. */
export async function openConfiguredStore(place: RunPlace, where: RunWhere): Promise<StateStore | { readonly diagnostics: readonly Diagnostic[] } | string> {
  const { repoDir, config, diagnostics } = await readRepoConfig(place, where);
  if (config === undefined) return { diagnostics };
  return openStateStore(config, repoDir, place);
}

/** Where push copies to, or pull copies from. */
export type OtherStore =
  { readonly backend: 'file'; readonly path: string } | { readonly backend: 'postgres'; readonly urlEnv: string; readonly schema?: string };

export async function openOtherStore(place: RunPlace, other: OtherStore): Promise<StateStore | string> {
  if (other.backend === 'file') return openFileStateStore(path.resolve(place.cwd, other.path));
  const url = place.env[other.urlEnv];
  if (url === undefined || url === '') return `--url-env ${other.urlEnv}: the variable is not set`;
  return openPostgres(url, other.schema);
}

/** Copies `from` into `to`, unless `to` holds state already and `force` is not given; read back and compared. */
export async function copyStore(
  from: StateStore,
  to: StateStore,
  force: boolean,
): Promise<{ readonly kind: 'held' } | ({ readonly kind: 'copied' } & CopyResult)> {
  const held = (await to.listTenants()).length + (await to.readHistory({ limit: 1 })).length;
  if (held > 0 && !force) return { kind: 'held' };
  return { kind: 'copied', ...(await copyState(from, to)) };
}
