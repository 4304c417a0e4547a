/**
 * Adapter: the file backend's format marker, `DIR/.format.json` (format: file-format.ts). Checked
 * before a store's first operation; written, if absent, before its first write.
 */
import { link, open, rm } from 'node:fs/promises';
import { readRegularText } from '../io/bounded-read.ts';
import path from 'node:path';
import { ensureDirectory, syncDirectory } from './atomic-write.ts';
import { checkFormatMarker, FORMAT_FILE_NAME, serialiseFormatMarker, tempFileName } from './file-format.ts';

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Refuses the directory's marker when it names another format; true when there is one. */
export async function checkStateDirectory(directory: string): Promise<boolean> {
  const file = path.join(directory, FORMAT_FILE_NAME);
  let text: string;
  try {
    text = await readRegularText(file);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return false;
    throw error;
  }
  checkFormatMarker(text, file);
  return true;
}

/**
 * Checks the marker, and writes this binary's when there is none: durably, and never over one
 * another writer put there meanwhile (link() fails when the name exists; that one is checked).
 */
export async function markStateDirectory(directory: string, randomId: string): Promise<void> {
  if (await checkStateDirectory(directory)) return;
  await ensureDirectory(directory);
  const temp = path.join(directory, tempFileName(FORMAT_FILE_NAME, randomId));
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(serialiseFormatMarker(), 'utf8');
    await handle.datasync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path.join(directory, FORMAT_FILE_NAME));
    await syncDirectory(directory);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    await checkStateDirectory(directory);
  } finally {
    await rm(temp, { force: true });
  }
}
