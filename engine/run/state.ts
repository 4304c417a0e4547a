/**
 * The state command's runs: the configured store opened from the repository's config, one
 * subcommand run on it (list, history, show, unlock, rm, or a push or pull with another store),
 * and the store closed. The command parses the arguments and renders what `runState` returns.
 */
import path from 'node:path';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { copyState, type CopyResult } from '../state/copy.ts';
import { openFileStateStore } from '../state/file-store.ts';
import type { RunHistoryEntry } from '../state/history.ts';
import { readStateSummary, type TenantSummary } from '../state/inspect.ts';
import type { LockHolder } from '../state/lock-timeout-message.ts';
import type { StateStore, StoredContract } from '../state/types.ts';
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

/** One subcommand of `contract-sync state`, on the store the repository's config names. */
export type StateRequest = { readonly where: RunWhere } & (
  | { readonly kind: 'list'; readonly tenant?: string }
  | { readonly kind: 'history'; readonly tenant?: string; readonly limit: number }
  | { readonly kind: 'show'; readonly tenant: string; readonly id: string }
  /** Without `force`: only who holds the lock. */
  | { readonly kind: 'unlock'; readonly tenant: string; readonly force: boolean }
  /** Without `force`: only the record that would be forgotten. */
  | { readonly kind: 'rm'; readonly tenant: string; readonly id: string; readonly force: boolean }
  /** push copies the configured store to `other`; pull copies `other` into it. Without `force`, not over state. */
  | { readonly kind: 'push' | 'pull'; readonly other: OtherStore; readonly force: boolean }
);

export type StateOutcome =
  | { readonly kind: 'invalid-config'; readonly diagnostics: readonly Diagnostic[] }
  /** A store that cannot be opened or read (an unreadable file, a database gone, a lock held): one line. */
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'list'; readonly tenants: readonly TenantSummary[] }
  | { readonly kind: 'history'; readonly runs: readonly RunHistoryEntry[] }
  | { readonly kind: 'show'; readonly tenant: string; readonly id: string; readonly record?: StoredContract }
  /** `forced` with a holder: the lock was removed; without `forced`: only who holds it. */
  | { readonly kind: 'unlock'; readonly tenant: string; readonly forced: boolean; readonly holder?: LockHolder }
  | { readonly kind: 'rm'; readonly tenant: string; readonly id: string; readonly record?: StoredContract; readonly removed: boolean }
  | { readonly kind: 'push' | 'pull'; readonly copy: Awaited<ReturnType<typeof copyStore>> };

/**
 * The store's own errors, said in one line, and a file in a file store's directory that is no
 * regular file or is too large to read (engine/io/bounded-read.ts); any other error is a defect and is thrown.
 */
const STORE_ERRORS: ReadonlySet<unknown> = new Set(['state-format', 'state-postgres', 'lock-timeout', 'ENOTREG', 'EISDIR', 'EFBIG']);

export async function runState(request: StateRequest, place: RunPlace): Promise<StateOutcome> {
  const store = await openConfiguredStore(place, request.where);
  if (typeof store === 'string') return { kind: 'failed', message: store };
  if ('diagnostics' in store) return { kind: 'invalid-config', diagnostics: store.diagnostics };
  try {
    return await runOn(store, request, place);
  } catch (error) {
    if (!STORE_ERRORS.has((error as { code?: unknown }).code)) throw error;
    return { kind: 'failed', message: (error as Error).message };
  } finally {
    await store.close();
  }
}

async function runOn(store: StateStore, request: StateRequest, place: RunPlace): Promise<StateOutcome> {
  switch (request.kind) {
    case 'list':
      return { kind: 'list', tenants: await readStateSummary(store, request.tenant) };
    case 'history':
      return { kind: 'history', runs: await store.readHistory({ ...(request.tenant === undefined ? {} : { tenant: request.tenant }), limit: request.limit }) };
    case 'show': {
      const record = await store.readRecord(request.tenant, request.id);
      return { kind: 'show', tenant: request.tenant, id: request.id, ...(record ? { record } : {}) };
    }
    case 'unlock': {
      const holder = request.force ? await store.forceUnlock(request.tenant) : await store.lockHolder(request.tenant);
      return { kind: 'unlock', tenant: request.tenant, forced: request.force, ...(holder ? { holder } : {}) };
    }
    case 'rm': {
      const record = await store.readRecord(request.tenant, request.id);
      const removed = record !== undefined && request.force;
      if (removed) await store.removeRecord(request.tenant, request.id);
      return { kind: 'rm', tenant: request.tenant, id: request.id, ...(record ? { record } : {}), removed };
    }
    case 'push':
    case 'pull': {
      const other = await openOtherStore(place, request.other);
      if (typeof other === 'string') return { kind: 'failed', message: other };
      try {
        const [from, to] = request.kind === 'push' ? [store, other] : [other, store];
        return { kind: request.kind, copy: await copyStore(from, to, request.force) };
      } finally {
        await other.close();
      }
    }
  }
}
