/**
 * Adapter: the file backend's per-tenant lock, `DIR/<tenant>/.lock` (format: file-format.ts).
 *
 * - Never seen empty or half-written: the content (holder, pid, host, times, lockId) is written and
 *   fsynced to a temporary file `..lock.<random>.tmp` first, then linked to `.lock`. link() fails
 *   when `.lock` exists, so of two runs exactly one takes the lock, and `.lock` appears with its
 *   whole content. A kill at any moment leaves no lock, or a lock naming a process that is gone
 *   (recovered at once on its host), plus at most a `.tmp` file the next holder removes.
 * - The holder refreshes `heartbeatAt` every `heartbeatMs` the same way: the new content in a
 *   temporary file, renamed over `.lock` only after checking that `.lock` is still its own (device,
 *   inode, lockId), so that a long run is not taken for a crashed one. What remains: a lock judged
 *   stale (its holder paused for longer than `staleLockMs`) and retaken by another run in the
 *   microseconds between that check and the rename would be replaced by the paused holder's.
 * - Stale when its process is gone (same host, `kill(pid, 0)` says ESRCH) or its heartbeat is
 *   older than `staleLockMs` (any host); an empty or unreadable lock (left by an engine version
 *   that created the file before writing it) is judged by its mtime.
 * - Removing a lock (a stale one, or our own on release) is race-safe: rename it to a unique name,
 *   check that the renamed file is the very lock judged (device, inode, lockId and, for a lock
 *   without content, mtime), delete it if so, else put it back with link(), which never replaces
 *   a lock created meanwhile. Two waiters recovering one stale lock therefore never remove the
 *   lock the first of them took. What remains: a third run's link landing in the microseconds the
 *   wrongly moved lock is away; putting it back then fails and two runs hold the tenant.
 */
import { constants } from 'node:fs';
import { link, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { openRegular } from '../io/bounded-read.ts';
import path from 'node:path';
import { ensureDirectory } from './atomic-write.ts';
import { isTempFileName, LOCK_FILE_NAME, parseLockFile, serialiseLockFile, tempFileName, type LockFileContent } from './file-format.ts';
import type { FileStoreSettings } from './file-store-options.ts';
import { lockTimeoutMessage, type LockHolder } from './lock-timeout-message.ts';
import { LockTimeoutError, type LockLostError, type LockOptions, type TenantLock } from './types.ts';
import { lossSignal } from './write-guard.ts';

/** One look at a lock file: what identifies it, and what it says. */
interface LockSighting {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly mtimeMs: number;
  readonly content: LockFileContent | undefined;
}

/** A lock this run wrote: its content is known. */
type HeldSighting = LockSighting & { readonly content: LockFileContent };

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

async function sight(handle: FileHandle): Promise<LockSighting> {
  const stats = await handle.stat({ bigint: true });
  const text = await handle.readFile('utf8');
  return { dev: stats.dev, ino: stats.ino, mtimeNs: stats.mtimeNs, mtimeMs: Number(stats.mtimeMs), content: parseLockFile(text) };
}

/** The lock at `file`, or undefined when there is none. */
async function inspectLock(file: string): Promise<LockSighting | undefined> {
  let handle: FileHandle;
  try {
    // A FIFO or device where the lock file should be is refused, naming it, rather than waited on.
    handle = await openRegular(file, constants.O_RDONLY);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return await sight(handle);
  } finally {
    await handle.close();
  }
}

function sameLock(judged: LockSighting, actual: LockSighting): boolean {
  if (judged.dev !== actual.dev || judged.ino !== actual.ino) return false;
  // An inode number is reused once its file is deleted: the lockId tells two locks apart, and
  // the mtime two locks without content.
  if (judged.content === undefined) return actual.content === undefined && judged.mtimeNs === actual.mtimeNs;
  return judged.content.lockId === actual.content?.lockId;
}

/** Removes the lock at `file` if it is still `judged`; true when it did. */
async function removeLockIf(file: string, judged: LockSighting, randomId: string): Promise<boolean> {
  const aside = `${file}.${randomId}.stale`;
  try {
    await rename(file, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  const moved = await inspectLock(aside);
  if (moved === undefined) return false;
  if (sameLock(judged, moved)) {
    await rm(aside, { force: true });
    return true;
  }
  // Another run took the lock since we judged it: give it back without replacing a newer one.
  try {
    await link(aside, file);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') {
      await rm(aside, { force: true });
      return false;
    }
    // A filesystem without hard links: a plain rename back is the best left.
    await rename(aside, file);
    return false;
  }
  await rm(aside, { force: true });
  return false;
}

function isStale(sighting: LockSighting, settings: FileStoreSettings): boolean {
  const { content } = sighting;
  const now = settings.now();
  if (content === undefined) return now - sighting.mtimeMs > settings.staleLockMs;
  if (content.hostname === settings.hostname && content.pid > 0 && !settings.isProcessAlive(content.pid)) return true;
  const heartbeat = Date.parse(content.heartbeatAt);
  const lastSign = Number.isNaN(heartbeat) ? sighting.mtimeMs : heartbeat;
  return now - lastSign > settings.staleLockMs;
}

/**
 * Removes what crashed writes left in the tenant's directory; only the lock holder writes records
 * there. A waiter's lock not yet linked may go too: its link() then fails and it looks again.
 */
async function removeTempFiles(tenantDir: string): Promise<void> {
  for (const name of await readdir(tenantDir)) {
    if (isTempFileName(name)) await rm(path.join(tenantDir, name), { force: true });
  }
}

/** Writes `content` to a new temporary file in `tenantDir`, durably; what it wrote, and where. */
async function writeLockTemp(tenantDir: string, content: LockFileContent, randomId: string): Promise<{ temp: string; sighting: HeldSighting }> {
  const temp = path.join(tenantDir, tempFileName(LOCK_FILE_NAME, randomId));
  // 'wx': a temporary name is never shared with another run, even on a random collision.
  const handle = await open(temp, 'wx');
  let stats;
  try {
    try {
      await handle.writeFile(serialiseLockFile(content), 'utf8');
      await handle.datasync();
      stats = await handle.stat({ bigint: true });
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return { temp, sighting: { dev: stats.dev, ino: stats.ino, mtimeNs: stats.mtimeNs, mtimeMs: Number(stats.mtimeMs), content } };
}

/** Links a lock with `content` into place; undefined when another run holds the tenant. */
async function tryTake(tenantDir: string, file: string, content: LockFileContent, randomId: string): Promise<HeldSighting | undefined> {
  const { temp, sighting } = await writeLockTemp(tenantDir, content, randomId);
  try {
    await link(temp, file);
    return sighting;
  } catch (error) {
    // EEXIST: another run's lock is in place. ENOENT: a new holder removing what crashed writes
    // left took our temporary file before we linked it.
    if (errorCode(error) === 'EEXIST' || errorCode(error) === 'ENOENT') return undefined;
    throw error;
  } finally {
    // Only the name goes: once linked, the lock lives on as `.lock`. One left behind is removed by the next holder.
    await rm(temp, { force: true }).catch(() => undefined);
  }
}

function holderOf(sighting: LockSighting): LockHolder {
  if (sighting.content === undefined) return { modifiedAt: isoTime(sighting.mtimeMs) };
  const { owner, pid, hostname, acquiredAt, heartbeatAt } = sighting.content;
  return { owner, pid, hostname, acquiredAt, heartbeatAt };
}

/** A lock this process holds; `lose` fires its `lost` signal (the file store does on a write refused for it). */
export interface HeldFileLock extends TenantLock {
  lose(why: string): LockLostError;
}

/**
 * Why the lock of `fence` (a lockId) does not hold `tenantDir` now, or undefined when it does: the
 * fencing check of a lock holder's write. A lock taken away between this check and the write is
 * not seen (the file system offers no conditional write); the heartbeat notices it within one beat.
 */
export async function fileLockLostReason(tenantDir: string, fence: string): Promise<string | undefined> {
  const current = await inspectLock(path.join(tenantDir, LOCK_FILE_NAME));
  if (current === undefined) return 'its lock file is gone (judged stale, or state unlock --force)';
  if (current.content?.lockId !== fence) return `another run (${current.content?.owner ?? 'unknown'}) holds it now`;
  return undefined;
}

function holdLock(tenant: string, tenantDir: string, file: string, taken: HeldSighting, settings: FileStoreSettings): HeldFileLock {
  let held = taken;
  let beating: Promise<void> | undefined;
  let released: Promise<void> | undefined;
  const loss = lossSignal(tenant);
  // The last time the lock was seen to be ours: past staleLockMs, another run may judge it stale.
  let confirmedAt = settings.now();

  async function beat(): Promise<void> {
    const { temp, sighting } = await writeLockTemp(tenantDir, { ...held.content, heartbeatAt: isoTime(settings.now()) }, settings.randomId());
    try {
      const current = await inspectLock(file);
      // Gone or another's: a waiter judged it stale (this process paused for longer than
      // staleLockMs) or it was taken away. A run's own lock is never moved otherwise.
      if (current === undefined || !sameLock(held, current)) {
        loss.lose(current === undefined ? 'its lock file is gone (judged stale, or state unlock --force)' : 'its lock file was replaced by another run');
        return;
      }
      await rename(temp, file);
      held = sighting;
      confirmedAt = settings.now();
    } finally {
      await rm(temp, { force: true });
    }
  }

  const timer = settings.timers.setInterval(() => {
    if (beating !== undefined || released !== undefined || loss.signal.aborted) return;
    // A missed heartbeat only brings the stale age nearer; the next one tries again, unless the
    // lock is old enough for another run to recover it.
    beating = beat()
      .catch(() => {
        if (settings.now() - confirmedAt >= settings.staleLockMs)
          loss.lose(`its heartbeat could not be written for ${settings.staleLockMs} ms, so another run may take it`);
      })
      .finally(() => {
        beating = undefined;
      });
  }, settings.heartbeatMs);
  // The heartbeat alone must not keep a process alive that has nothing else to do.
  (timer as { unref?: () => void } | undefined)?.unref?.();

  async function release(): Promise<void> {
    settings.timers.clearInterval(timer);
    await beating;
    await removeLockIf(file, held, settings.randomId());
  }

  return {
    tenant,
    lost: loss.signal,
    fence: taken.content.lockId,
    lose: (why) => loss.lose(why),
    release(): Promise<void> {
      released ??= release();
      return released;
    },
  };
}

/** Waits for and takes `tenantDir`'s lock (see the file header). */
export async function acquireFileLock(tenant: string, tenantDir: string, options: LockOptions, settings: FileStoreSettings): Promise<HeldFileLock> {
  await ensureDirectory(tenantDir);
  const file = path.join(tenantDir, LOCK_FILE_NAME);
  const started = settings.now();
  const deadline = started + options.timeoutMs;
  for (;;) {
    const holder = await inspectLock(file);
    if (holder === undefined) {
      const now = isoTime(settings.now());
      const content: LockFileContent = {
        owner: options.owner,
        pid: settings.pid,
        hostname: settings.hostname,
        acquiredAt: now,
        heartbeatAt: now,
        lockId: settings.randomId(),
      };
      const taken = await tryTake(tenantDir, file, content, settings.randomId());
      // Another run took it first: look at that run's lock.
      if (taken === undefined) continue;
      const lock = holdLock(tenant, tenantDir, file, taken, settings);
      try {
        await removeTempFiles(tenantDir);
      } catch (error) {
        await lock.release();
        throw error;
      }
      return lock;
    }
    if (isStale(holder, settings)) {
      await removeLockIf(file, holder, settings.randomId());
      continue;
    }
    const remaining = deadline - settings.now();
    if (remaining <= 0) {
      throw new LockTimeoutError(tenant, lockTimeoutMessage(tenant, holderOf(holder), settings.now() - started, file));
    }
    await settings.sleep(Math.min(settings.pollMs, remaining));
  }
}

/** Who holds `tenantDir`'s lock, or undefined when nobody does. */
export async function readFileLockHolder(tenantDir: string): Promise<LockHolder | undefined> {
  const sighting = await inspectLock(path.join(tenantDir, LOCK_FILE_NAME));
  return sighting === undefined ? undefined : holderOf(sighting);
}

/**
 * Removes `tenantDir`'s lock whoever holds it (`state unlock --force`), the race-safe way stale
 * locks go: only the very lock looked at is removed, never one another run took meanwhile. What
 * was known of its holder, or undefined when there was no lock (or another run replaced it first).
 */
export async function forceRemoveFileLock(tenantDir: string, randomId: string): Promise<LockHolder | undefined> {
  const file = path.join(tenantDir, LOCK_FILE_NAME);
  const sighting = await inspectLock(file);
  if (sighting === undefined) return undefined;
  return (await removeLockIf(file, sighting, randomId)) ? holderOf(sighting) : undefined;
}
