/**
 * Adapter: the file backend's per-tenant lock, `DIR/<tenant>/.lock` (format: file-format.ts).
 *
 * - Taken by exclusive create (`open(..., 'wx')`): of two runs, exactly one creates the file.
 * - The holder rewrites `heartbeatAt` every `heartbeatMs` through the descriptor it created the
 *   file with, so that a long run is not taken for a crashed one. Writing through that descriptor
 *   never touches a lock another run created at the same path after ours was recovered.
 * - Stale when its process is gone (same host, `kill(pid, 0)` says ESRCH) or its heartbeat is
 *   older than `staleLockMs` (any host); an empty or unreadable lock is judged by its mtime.
 * - Removing a lock (a stale one, or our own on release) is race-safe: rename it to a unique name,
 *   check that the renamed file is the very lock judged (device, inode, lockId and, for a lock
 *   without content, mtime), delete it if so, else put it back with link(), which never replaces
 *   a lock created meanwhile. Two waiters recovering one stale lock therefore never remove the
 *   lock the first of them took. What remains: a third run's exclusive create landing in the
 *   microseconds the wrongly moved lock is away; link() then fails and two runs hold the tenant.
 */
import { link, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ensureDirectory } from './atomic-write.ts';
import { isTempFileName, LOCK_FILE_NAME, parseLockFile, serialiseLockFile, type LockFileContent } from './file-format.ts';
import type { FileStoreSettings } from './file-store-options.ts';
import { lockTimeoutMessage, type LockHolder } from './lock-timeout-message.ts';
import { LockTimeoutError, type LockOptions, type TenantLock } from './types.ts';

/** One look at a lock file: what identifies it, and what it says. */
interface LockSighting {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly mtimeMs: number;
  readonly content: LockFileContent | undefined;
}

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
    handle = await open(file, 'r');
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

/** Removes what crashed writes left in the tenant's directory; only the lock holder writes there. */
async function removeTempFiles(tenantDir: string): Promise<void> {
  for (const name of await readdir(tenantDir)) {
    if (isTempFileName(name)) await rm(path.join(tenantDir, name), { force: true });
  }
}

/** Creates the lock file; undefined when another run holds it. */
async function tryCreate(file: string, content: LockFileContent): Promise<{ handle: FileHandle; sighting: LockSighting & { content: LockFileContent } } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'wx');
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return undefined;
    throw error;
  }
  try {
    await handle.write(serialiseLockFile(content), 0, 'utf8');
    const stats = await handle.stat({ bigint: true });
    return { handle, sighting: { dev: stats.dev, ino: stats.ino, mtimeNs: stats.mtimeNs, mtimeMs: Number(stats.mtimeMs), content } };
  } catch (error) {
    await handle.close();
    await rm(file, { force: true });
    throw error;
  }
}

function holderOf(sighting: LockSighting): LockHolder {
  if (sighting.content === undefined) return { modifiedAt: isoTime(sighting.mtimeMs) };
  const { owner, pid, hostname, acquiredAt, heartbeatAt } = sighting.content;
  return { owner, pid, hostname, acquiredAt, heartbeatAt };
}

function holdLock(tenant: string, file: string, handle: FileHandle, sighting: LockSighting & { content: LockFileContent }, settings: FileStoreSettings): TenantLock {
  let content = sighting.content;
  let written = Buffer.byteLength(serialiseLockFile(content), 'utf8');
  let beating: Promise<void> | undefined;
  let released: Promise<void> | undefined;

  async function beat(): Promise<void> {
    content = { ...content, heartbeatAt: isoTime(settings.now()) };
    const buffer = Buffer.from(serialiseLockFile(content), 'utf8');
    await handle.write(buffer, 0, buffer.length, 0);
    if (buffer.length < written) await handle.truncate(buffer.length);
    written = buffer.length;
  }

  const timer = settings.timers.setInterval(() => {
    if (beating !== undefined || released !== undefined) return;
    // A missed heartbeat only brings the stale age nearer; the next one tries again.
    beating = beat()
      .catch(() => undefined)
      .finally(() => {
        beating = undefined;
      });
  }, settings.heartbeatMs);
  // The heartbeat alone must not keep a process alive that has nothing else to do.
  (timer as { unref?: () => void } | undefined)?.unref?.();

  async function release(): Promise<void> {
    settings.timers.clearInterval(timer);
    await beating;
    try {
      await removeLockIf(file, sighting, settings.randomId());
    } finally {
      await handle.close();
    }
  }

  return {
    tenant,
    release(): Promise<void> {
      released ??= release();
      return released;
    },
  };
}

/** Waits for and takes `tenantDir`'s lock (see the file header). */
export async function acquireFileLock(tenant: string, tenantDir: string, options: LockOptions, settings: FileStoreSettings): Promise<TenantLock> {
  await ensureDirectory(tenantDir);
  const file = path.join(tenantDir, LOCK_FILE_NAME);
  const started = settings.now();
  const deadline = started + options.timeoutMs;
  for (;;) {
    const now = isoTime(settings.now());
    const content: LockFileContent = { owner: options.owner, pid: settings.pid, hostname: settings.hostname, acquiredAt: now, heartbeatAt: now, lockId: settings.randomId() };
    const created = await tryCreate(file, content);
    if (created !== undefined) {
      const lock = holdLock(tenant, file, created.handle, created.sighting, settings);
      try {
        await removeTempFiles(tenantDir);
      } catch (error) {
        await lock.release();
        throw error;
      }
      return lock;
    }
    const holder = await inspectLock(file);
    // Released between our create and our look, or just recovered by another waiter: try again.
    if (holder === undefined) continue;
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
