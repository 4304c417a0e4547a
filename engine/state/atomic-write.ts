/** Adapter: crash-safe file writes for the file backend (format: file-format.ts). */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { tempFileName } from './file-format.ts';

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * fsyncs a directory, so that the names created or renamed in it survive a power loss.
 * Windows cannot open a directory, and some network filesystems refuse to fsync one: there the
 * rename is still atomic, only its durability is up to the filesystem.
 */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
  } catch (error) {
    if (errorCode(error) === 'EISDIR' || errorCode(error) === 'EPERM') return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (errorCode(error) !== 'EINVAL' && errorCode(error) !== 'EPERM') throw error;
  } finally {
    await handle.close();
  }
}

/** Creates `directory` (and its parents) if needed; the new names are durable when it resolves. */
export async function ensureDirectory(directory: string): Promise<void> {
  const first = await mkdir(directory, { recursive: true });
  if (first === undefined) return;
  // Each created directory's name lives in its parent: fsync from the deepest parent up to the
  // parent of the first one created.
  let created = path.resolve(directory);
  const top = path.resolve(first);
  for (;;) {
    const parent = path.dirname(created);
    await syncDirectory(parent);
    if (created === top || parent === created) return;
    created = parent;
  }
}

/**
 * Writes `directory/name` so that a crash at any point leaves either the old content or the new,
 * and the new content is on disk when the promise resolves. `directory` must exist.
 */
export async function writeFileDurably(directory: string, name: string, content: string, randomId: string): Promise<void> {
  const target = path.join(directory, name);
  const temp = path.join(directory, tempFileName(name, randomId));
  // 'wx': a temporary name is never shared with another writer, even on a random collision.
  const handle = await open(temp, 'wx');
  try {
    try {
      await handle.writeFile(content, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(directory);
}
