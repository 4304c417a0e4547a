/**
 * Adapter: a tenant's contract records in the file backend, `DIR/<tenant>/.records.jsonl` on top of
 * the per-contract files of the older layout (format: journal-format.ts, file-format.ts).
 *
 * Crash safety, the way a reader sees it:
 * - An append is acknowledged only after its bytes are fsynced (and, for a new journal, the
 *   directory). A kill mid-append leaves a torn last line, which readers skip and the next batch's
 *   leading newline closes off: every acknowledged line stays readable.
 * - A compaction writes the live records to a temporary file, fsyncs it, renames it over the
 *   journal and fsyncs the directory (atomic-write.ts): a crash leaves the old journal or the new,
 *   whole, plus at most a `.tmp` file the next lock holder removes. Older per-contract files it
 *   migrated are deleted only after that; until then the journal, which overrides them, already
 *   holds their records (and a removal for each one no longer live).
 * - Only the tenant's lock holder compacts, so two compactions never race. A store writing without
 *   the lock (`state rm`, tests) may append while another compacts: the compaction carries over
 *   every whole line appended to the old journal after it read it, and an appender that finds, after
 *   its fsync, that the journal was replaced meanwhile appends again to the new one. A line is
 *   therefore never left only in a replaced journal; carried twice it is harmless (the same entry).
 */
import { constants } from 'node:fs';
import { readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { openRegular, readRegularFile, readRegularText } from '../io/bounded-read.ts';
import path from 'node:path';
import { compareText } from '../text/compare-text.ts';
import { ensureDirectory, syncDirectory, writeFileDurably } from './atomic-write.ts';
import { contractIdOfFile, parseStateRecord, stateFileName, type StateRecord } from './file-format.ts';
import { JOURNAL_FILE_NAME, journalRecordLine, journalRemovalLine, replayJournal, wholeLines } from './journal-format.ts';

// Older per-contract files read at once: enough to hide latency, few enough to stay far from the open-file limit.
const CONCURRENCY = 64;
// A journal is not compacted during a run before it has grown by this much.
const MIN_GROWTH_BYTES = 1024 * 1024;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Directory entries, or none when the directory does not exist. */
export async function entriesOf(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
}

async function readTextIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readRegularText(file);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** The records of the older layout, one file per contract (those of `wanted` only, with it). */
async function readLegacyRecords(
  tenantDir: string,
  tenant: string,
  entries: readonly string[],
  wanted?: ReadonlySet<string>,
): Promise<Map<string, StateRecord>> {
  const ids = entries.flatMap((name) => contractIdOfFile(name) ?? []).filter((id) => wanted === undefined || wanted.has(id));
  const records = new Map<string, StateRecord>();
  for (let start = 0; start < ids.length; start += CONCURRENCY) {
    const batch = await Promise.all(
      ids.slice(start, start + CONCURRENCY).map(async (id) => {
        const file = path.join(tenantDir, stateFileName(id));
        // Gone since the directory was listed: a compaction migrated it into the journal, read next.
        const text = await readTextIfPresent(file);
        return text === undefined ? undefined : parseStateRecord(text, file, tenant, id);
      }),
    );
    for (const record of batch) if (record !== undefined) records.set(record.contractId, record);
  }
  return records;
}

/** The tenant's records, and what a compaction needs to know of the journal they came from. */
export interface TenantRecords {
  /** By ContractId, sorted. */
  readonly records: Map<string, StateRecord>;
  /** Per-contract files of the older layout that were read. */
  readonly legacyIds: ReadonlySet<string>;
  /** The journal's size, and the bytes of its lines that still count. */
  readonly journalBytes: number;
  readonly liveBytes: number;
}

function sortedById<T>(map: Map<string, T>): Map<string, T> {
  let previous: string | undefined;
  for (const id of map.keys()) {
    if (previous !== undefined && compareText(previous, id) > 0) return new Map([...map].sort(([a], [b]) => compareText(a, b)));
    previous = id;
  }
  return map;
}

/**
 * Reads the tenant's records: the older per-contract files first, then the journal, which
 * overrides them (read in this order, a compaction that migrates them meanwhile loses nothing).
 */
export async function readTenantRecords(tenantDir: string, tenant: string, wanted?: ReadonlySet<string>): Promise<TenantRecords> {
  const entries = await entriesOf(tenantDir);
  const legacy = await readLegacyRecords(tenantDir, tenant, entries, wanted);
  const file = path.join(tenantDir, JOURNAL_FILE_NAME);
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    return { records: sortedById(legacy), legacyIds: new Set(legacy.keys()), journalBytes: 0, liveBytes: 0 };
  }
  const replay = replayJournal(bytes, file, tenant, wanted);
  const records = legacy;
  for (const [id, record] of replay.entries) {
    if (record === null) records.delete(id);
    else records.set(id, record);
  }
  return { records: sortedById(records), legacyIds: new Set(legacy.keys()), journalBytes: bytes.length, liveBytes: replay.liveBytes };
}

/**
 * Appends `text` (whole journal lines) durably. Each batch starts with a newline, which ends a line
 * a crash left torn. When a compaction replaced the journal while this append went to the old one,
 * appends again to the new one.
 */
async function appendDurably(tenantDir: string, text: string): Promise<number> {
  const file = path.join(tenantDir, JOURNAL_FILE_NAME);
  const batch = `\n${text}`;
  for (;;) {
    const handle = await openRegular(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
    let written;
    try {
      written = await handle.stat({ bigint: true });
      await handle.writeFile(batch, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    // Perhaps a new journal: its name must survive a crash too.
    if (written.size === 0n) await syncDirectory(tenantDir);
    const current = await stat(file, { bigint: true }).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (current !== undefined && current.dev === written.dev && current.ino === written.ino) return Buffer.byteLength(batch);
  }
}

/** The bytes of `handle` from `position` to its end. */
async function readFrom(handle: FileHandle, position: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (let at = position; ;) {
    const chunk = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, at);
    if (bytesRead === 0) return Buffer.concat(chunks);
    chunks.push(chunk.subarray(0, bytesRead));
    at += bytesRead;
  }
}

/** What a compaction found, and whether it rewrote the journal. */
interface Compaction {
  readonly compacted: boolean;
  /** The journal's size afterwards. */
  readonly journalBytes: number;
}

/**
 * Rewrites the journal with the live records only, when it holds more than `ratio` times their
 * size or older per-contract files are left to migrate. Only the tenant's lock holder calls it.
 */
async function compact(tenantDir: string, tenant: string, ratio: number, randomId: string): Promise<Compaction> {
  const file = path.join(tenantDir, JOURNAL_FILE_NAME);
  let handle: FileHandle | undefined;
  try {
    handle = await openRegular(file, constants.O_RDONLY);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
  try {
    const bytes = handle === undefined ? Buffer.alloc(0) : await handle.readFile();
    const replay = replayJournal(bytes, file, tenant);
    const legacy = await readLegacyRecords(tenantDir, tenant, await entriesOf(tenantDir));
    if (legacy.size === 0 && bytes.length <= ratio * replay.liveBytes) return { compacted: false, journalBytes: bytes.length };
    const merged = new Map<string, StateRecord | null>(legacy);
    for (const [id, record] of replay.entries) merged.set(id, record);
    const lines: string[] = [];
    for (const id of [...merged.keys()].sort(compareText)) {
      const record = merged.get(id)!;
      // A removal outlives the older file it hides until that file is gone (deleted below).
      if (record !== null) lines.push(journalRecordLine(record));
      else if (legacy.has(id)) lines.push(journalRemovalLine(id));
    }
    const text = lines.join('');
    await writeFileDurably(tenantDir, JOURNAL_FILE_NAME, text, randomId);
    let journalBytes = Buffer.byteLength(text);
    if (handle !== undefined) {
      const carried = wholeLines(await readFrom(handle, bytes.length));
      if (carried.length > 0) journalBytes += await appendDurably(tenantDir, Buffer.concat(carried).toString('utf8'));
    }
    if (legacy.size > 0) {
      for (const id of legacy.keys()) await rm(path.join(tenantDir, stateFileName(id)), { force: true });
      await syncDirectory(tenantDir);
    }
    return { compacted: true, journalBytes };
  } finally {
    await handle?.close();
  }
}

interface Waiting {
  readonly text: string;
  resolve(): void;
  reject(error: unknown): void;
}

/** While this store holds the tenant's lock: how far the journal may grow before it is compacted. */
interface Holding {
  baseBytes: number;
  appendedBytes: number;
}

export interface TenantJournal {
  /** Appends `text` durably; concurrent appends share one write and one fsync. */
  append(text: string): Promise<void>;
  /** This store took the tenant's lock: it may compact from now on. */
  hold(): Promise<void>;
  /** Before the lock goes: compacts if the journal is worth it, and stops compacting. */
  letGo(shouldCompact: () => Promise<boolean>): Promise<void>;
}

export interface TenantJournalOptions {
  readonly compactRatio: number;
  readonly randomId: () => string;
}

/** One tenant's journal as one store instance writes it: appends and compactions one at a time. */
export function tenantJournal(tenantDir: string, tenant: string, options: TenantJournalOptions): TenantJournal {
  let tail: Promise<void> = Promise.resolve();
  let open: Waiting[] | undefined;
  let holding: Holding | undefined;

  function serially(task: () => Promise<void>): Promise<void> {
    const result = tail.then(task);
    tail = result.catch(() => undefined);
    return result;
  }

  async function compactNow(): Promise<void> {
    const { journalBytes } = await compact(tenantDir, tenant, options.compactRatio, options.randomId());
    if (holding !== undefined) holding = { baseBytes: journalBytes, appendedBytes: 0 };
  }

  async function flush(batch: Waiting[]): Promise<void> {
    open = undefined;
    try {
      await ensureDirectory(tenantDir);
      const bytes = await appendDurably(tenantDir, batch.map((waiting) => waiting.text).join(''));
      for (const waiting of batch) waiting.resolve();
      if (holding === undefined) return;
      holding.appendedBytes += bytes;
      // Grown past compactRatio times its size when this run took the lock (or last compacted it).
      if (holding.appendedBytes > Math.max(MIN_GROWTH_BYTES, (options.compactRatio - 1) * holding.baseBytes)) {
        // A failed compaction leaves the journal as it was: only longer to read.
        void serially(compactNow).catch(() => undefined);
      }
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }

  return {
    append(text: string): Promise<void> {
      return new Promise((resolve, reject) => {
        if (open === undefined) {
          const batch: Waiting[] = [];
          open = batch;
          void serially(() => flush(batch));
        }
        open.push({ text, resolve, reject });
      });
    },

    hold(): Promise<void> {
      return serially(async () => {
        const size = await stat(path.join(tenantDir, JOURNAL_FILE_NAME)).then(
          (stats) => stats.size,
          () => 0,
        );
        holding = { baseBytes: size, appendedBytes: 0 };
      });
    },

    letGo(shouldCompact: () => Promise<boolean>): Promise<void> {
      return serially(async () => {
        try {
          if (await shouldCompact()) await compactNow();
        } finally {
          holding = undefined;
        }
      });
    },
  };
}
