/**
 * The file backend's per-tenant journal, `DIR/<tenant>/.records.jsonl`: every contract record of
 * the tenant in one file, so that a plan reads a tenant with one file read. Pure.
 *
 * One entry per line, UTF-8: `<crc> <json>\n`, where `<crc>` is the CRC-32 of the JSON's bytes in
 * 8 lowercase hex digits, and the JSON one of
 *   a record:  {"v":1,"id":"4711","appliedAt":"...","commit":"<git sha>" | null,
 *               "fingerprint":"sha256:...","fields":{ ...ContractFields }}
 *   a removal: {"v":1,"id":"4711","removed":true}
 * - A later line for an id replaces the earlier one; a removal forgets the id. The journal is read
 *   on top of the per-contract files of the layout before it (`<ContractId>.json`, file-format.ts),
 *   which it overrides: a store written by an older engine reads unchanged, and is migrated into
 *   the journal by the first compaction.
 * - Writers append whole lines, each batch preceded by `\n`, and fsync before a write is
 *   acknowledged. A line whose CRC does not match is what a crash left torn mid-append: never
 *   acknowledged, it is skipped wherever it is (the next batch's leading `\n` ends it, so it cannot
 *   swallow a later line). A last line whose CRC matches counts, newline or not: all of it was
 *   written, and it reads the same once the next batch's `\n` ends it. Empty lines are skipped.
 * - A line with a matching CRC that is not a record this engine reads (an unknown `v`, a bad field)
 *   is refused (StateFormatError), like a per-contract file.
 * - `v` and `id` come first, in this order, so that a reader looking for a few ids skips the other
 *   lines without parsing them (an id JSON writes with an escape, `\"` or `\\`, is told by parsing
 *   its line; an id beyond ASCII is read as the UTF-8 it is).
 */
import { crc32 } from 'node:zlib';
import { checkedStateRecord, STATE_FILE_VERSION, StateFormatError, type StateRecord } from './file-format.ts';

export const JOURNAL_FILE_NAME = '.records.jsonl';

const NEWLINE = 0x0a;
const SPACE = 0x20;
const CRC_DIGITS = 8;
// The start of every entry this engine writes.
const ENTRY_START = `{"v":${STATE_FILE_VERSION},"id":"`;

function lineOf(json: string): string {
  return `${crc32(json).toString(16).padStart(CRC_DIGITS, '0')} ${json}\n`;
}

/** The journal line that records `record` (its tenant is the journal's). */
export function journalRecordLine(record: StateRecord): string {
  const { contractId, appliedAt, commit, fingerprint, fields } = record;
  return lineOf(
    JSON.stringify({
      v: STATE_FILE_VERSION,
      id: contractId,
      ...(appliedAt === undefined ? {} : { appliedAt }),
      ...(commit === undefined ? {} : { commit }),
      ...(fingerprint === undefined ? {} : { fingerprint }),
      fields,
    }),
  );
}

/** The journal line that forgets `contractId`'s record. */
export function journalRemovalLine(contractId: string): string {
  return lineOf(JSON.stringify({ v: STATE_FILE_VERSION, id: contractId, removed: true }));
}

/** What a journal holds. */
export interface JournalReplay {
  /** By ContractId, in the order first seen: the last record, or null when the last entry removed it. */
  readonly entries: Map<string, StateRecord | null>;
  /** Bytes of the lines that still count (the last entry of each id read). */
  readonly liveBytes: number;
  /** Lines skipped as torn (a CRC that does not match). */
  readonly torn: number;
}

/**
 * The id an entry's JSON names at its start, read without parsing it; undefined when it is not at
 * the start or holds an escape (`\\`): then only JSON.parse can tell it.
 */
function idOf(json: string): string | undefined {
  if (!json.startsWith(ENTRY_START)) return undefined;
  const idEnd = json.indexOf('"', ENTRY_START.length);
  if (idEnd === -1) return undefined;
  const id = json.slice(ENTRY_START.length, idEnd);
  return id.includes('\\') ? undefined : id;
}

function isWhole(bytes: Buffer, start: number, end: number): boolean {
  if (end - start < CRC_DIGITS + 2 || bytes[start + CRC_DIGITS] !== SPACE) return false;
  const expected = Number.parseInt(bytes.toString('latin1', start, start + CRC_DIGITS), 16);
  return !Number.isNaN(expected) && crc32(bytes.subarray(start + CRC_DIGITS + 1, end)) === expected;
}

/** The entry a whole line holds, its `v` and `id` checked; `where` names the line in errors. */
function entryOf(json: string, where: string): Record<string, unknown> & { readonly id: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new StateFormatError(where, `not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new StateFormatError(where, 'expected a JSON object');
  const entry = value as Record<string, unknown>;
  if (entry.v !== STATE_FILE_VERSION) {
    throw new StateFormatError(where, `state version ${JSON.stringify(entry.v)} is not supported (this contract-sync reads version ${STATE_FILE_VERSION})`);
  }
  if (typeof entry.id !== 'string') throw new StateFormatError(where, '"id" must be a string');
  return entry as Record<string, unknown> & { readonly id: string };
}

/**
 * Reads a journal's bytes; `file` names it in errors. With `wanted`, only entries of those ids are
 * parsed and returned.
 */
export function replayJournal(bytes: Buffer, file: string, tenant: string, wanted?: ReadonlySet<string>): JournalReplay {
  const entries = new Map<string, StateRecord | null>();
  const sizes = new Map<string, number>();
  let torn = 0;
  let lineNumber = 0;
  for (let start = 0; start < bytes.length;) {
    lineNumber += 1;
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    const next = end + 1;
    if (end === start) {
      start = next;
      continue;
    }
    // The line's JSON, decoded once: its id is looked at, then it is parsed if its CRC matches.
    const json = bytes.toString('utf8', start + CRC_DIGITS + 1, end);
    if (wanted !== undefined) {
      const id = idOf(json);
      if (id !== undefined && !wanted.has(id)) {
        start = next;
        continue;
      }
    }
    if (!isWhole(bytes, start, end)) {
      torn += 1;
      start = next;
      continue;
    }
    const where = `${file}:${lineNumber}`;
    const entry = entryOf(json, where);
    const { id } = entry;
    // Checked wanted or not: a whole line parsed (its id not told by its start) that this engine cannot read is refused.
    const record = entry.removed === true ? null : checkedStateRecord(entry, where, tenant, id);
    if (wanted === undefined || wanted.has(id)) {
      entries.set(id, record);
      sizes.set(id, next - start);
    }
    start = next;
  }
  let liveBytes = 0;
  for (const [id, record] of entries) if (record !== null) liveBytes += sizes.get(id)!;
  return { entries, liveBytes, torn };
}

/** The whole lines of `bytes` whose CRC matches, as they are: what a compaction carries over. */
export function wholeLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  for (let start = 0; start < bytes.length;) {
    const newline = bytes.indexOf(NEWLINE, start);
    if (newline === -1) break;
    if (newline > start && isWhole(bytes, start, newline)) lines.push(bytes.subarray(start, newline + 1));
    start = newline + 1;
  }
  return lines;
}
