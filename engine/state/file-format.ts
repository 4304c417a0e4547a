/**
 * The file backend's format (`state: { backend: file, path: DIR }`), defined here for every reader
 * and writer. Pure.
 *
 *   DIR/.format.json                 which layout the directory holds, written at the first write:
 *   { "format": "contract-sync-file-state", "version": 2 }
 *                                    version 2: the journal layout below. Version 1, the layout of
 *                                    per-contract files only, had no marker: a directory without
 *                                    one is read as written by either. Every operation refuses a
 *                                    marker of another version, naming it, before reading or
 *                                    writing anything else.
 *   DIR/<tenant>/.records.jsonl      the tenant's contract records, one journal (journal-format.ts);
 *                                    read on top of the older layout's per-contract files:
 *   DIR/<tenant>/<ContractId>.json   one file per contract (written before the journal), UTF-8 JSON:
 *   { "version": 1, "tenant": "acme", "contractId": "4711",
 *     "appliedAt": "2027-01-01T00:00:00.000Z", "commit": "<git sha>" | null,
 *     "fingerprint": "sha256:...", "fields": { ...ContractFields } }
 *   DIR/<tenant>/.run.json           the tenant's run record (TenantRunRecord), UTF-8 JSON:
 *   { "version": 2, "tenant": "acme", "lastAppliedCommit": "<git sha>" | null,
 *     "planningFingerprint": "sha256:...",
 *     "pending": [{ "contractId": "4712", "outcome": "failed" | "unknown" | "interrupted",
 *                   "reason": "...", "since": "...", "file": "contracts/acme.yaml" }],
 *     "updatedAt": "..." }
 *   DIR/<tenant>/.lock               held while a run applies to the tenant (file-lock.ts):
 *   { "owner": "...", "pid": 4242, "hostname": "ci-7", "acquiredAt": "...", "heartbeatAt": "...",
 *     "lockId": "<random>" }
 *
 * - `fields` is the contract's known state after the last successful PATCH: the fields as the
 *   service holds them, keyed like a desired-state contract (no wrapper, no id). `fingerprint` is
 *   fingerprint(fields), `appliedAt` when the PATCH succeeded, `commit` the git commit the desired
 *   state came from. Writers always write these three; readers accept records without them
 *   (written before they existed), so the version stays 1.
 * - The per-contract files are this engine's older layout: it still reads them (the journal
 *   overrides them) and its first compaction migrates them; it writes records only to the journal.
 * - The run record and a compacted journal are written atomically and durably (atomic-write.ts):
 *   write `.<name>.<random>.tmp` in the same directory, fsync it, rename it over `<name>`, fsync
 *   the directory. A reader sees the old file or the new one, never a torn one. A crash leaves at
 *   most a `.tmp` file, which readers skip and the next lock holder removes.
 * - Tenant names are safe file names: their pattern starts with a letter or digit and allows no
 *   `/` (specs/contracts.schema.json); the stores refuse any other name. ContractIds may be any id
 *   the service could have (`/`, `..` included), so they never name a file: records are written to
 *   the journal only, and a per-contract file of the older layout is read by the id its name gives
 *   (from the directory listing), never by a path built from an id asked for.
 * - Readers ignore names starting with `.` (temporary files, the run record, the lock) and names
 *   not ending in `.json`.
 * - A contract with no file was never applied; a tenant with no `.run.json` never ran. Readers
 *   refuse versions they do not know.
 * - The lock file is never written in place: its content is written to `..lock.<random>.tmp`
 *   and linked to `.lock` (taking it), and each heartbeat renames a new temporary file over it,
 *   so a reader sees a whole lock or none (file-lock.ts). It is still read leniently: an empty or
 *   unreadable lock (left by an older engine version, which created it before writing it) is judged
 *   by its modification time. A lock being removed is first renamed to `.lock.<random>.stale`; a
 *   crash at that instant leaves one behind, harmless (and not removed automatically: another run
 *   may be checking the one it just moved).
 * - In the run record, `planningFingerprint` and each pending entry's `file` are written when
 *   known; readers accept records without them (written before they existed).
 */
import type { ContractFields } from '../model/types.ts';
import type { AppliedContract, PendingContract, TenantRunRecord } from './types.ts';

export const STATE_FILE_VERSION = 1;

/**
 * The run record's version: written as 2 since the journal layout (read: 1 and 2, the same shape).
 * A contract-sync older than the format marker checks this version when it reads a run record (every
 * apply does, and incremental runs), so it refuses a directory whose records it would not see.
 */
export const RUN_RECORD_VERSION = 2;
const RUN_RECORD_VERSIONS: readonly unknown[] = [1, 2];

/** The marker's name in the state directory (a dot name: never a tenant's). */
export const FORMAT_FILE_NAME = '.format.json';
export const STATE_FORMAT = 'contract-sync-file-state';
/** The layout this binary reads and writes (see the header). */
export const STATE_FORMAT_VERSION = 2;

export function serialiseFormatMarker(): string {
  return `${JSON.stringify({ format: STATE_FORMAT, version: STATE_FORMAT_VERSION })}\n`;
}

/** Refuses a marker this binary cannot work with; `file` names it in the error. */
export function checkFormatMarker(text: string, file: string): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const { format, version } = (value ?? {}) as Record<string, unknown>;
  if (format !== STATE_FORMAT || !Number.isSafeInteger(version)) {
    throw new StateFormatError(
      file,
      `not a contract-sync state format marker (expected ${serialiseFormatMarker().trim()}); refusing to read or write this state directory`,
    );
  }
  if (version === STATE_FORMAT_VERSION) return;
  const which = (version as number) > STATE_FORMAT_VERSION ? 'newer than the one this contract-sync reads' : 'not one this contract-sync reads';
  const hint = (version as number) > STATE_FORMAT_VERSION ? '; a newer contract-sync wrote this state: upgrade contract-sync to use it' : '';
  throw new StateFormatError(file, `the state directory is in format version ${String(version)}, ${which} (version ${STATE_FORMAT_VERSION})${hint}`);
}

/** The run record's name inside a tenant's directory: a dot-file, so contract readers skip it. */
export const RUN_FILE_NAME = '.run.json';

/** The lock's name inside a tenant's directory. */
export const LOCK_FILE_NAME = '.lock';

export interface StateRecord {
  readonly version: typeof STATE_FILE_VERSION;
  readonly tenant: string;
  readonly contractId: string;
  /** Absent in records written before apply recorded it. */
  readonly appliedAt?: string;
  readonly commit?: string | null;
  readonly fingerprint?: string;
  readonly fields: ContractFields;
}

export interface RunRecordFile extends TenantRunRecord {
  readonly version: typeof RUN_RECORD_VERSION;
  readonly tenant: string;
}

/** What `.lock` holds: who holds the tenant, and since when. */
export interface LockFileContent {
  readonly owner: string;
  readonly pid: number;
  readonly hostname: string;
  readonly acquiredAt: string;
  readonly heartbeatAt: string;
  /** Random, unique per acquisition: tells this holder's lock from a later one at the same path. */
  readonly lockId: string;
}

export class StateFormatError extends Error {
  readonly code = 'state-format';
  readonly file: string;
  constructor(file: string, message: string) {
    super(`${file}: ${message}`);
    this.file = file;
  }
}

/** The file name of a contract's record inside its tenant's directory. */
export function stateFileName(contractId: string): string {
  return `${contractId}.json`;
}

/** The ContractId a directory entry holds, or undefined for an entry readers skip. */
export function contractIdOfFile(name: string): string | undefined {
  if (name.startsWith('.') || !name.endsWith('.json')) return undefined;
  return name.slice(0, -'.json'.length);
}

/** The temporary name `name` is written under before it is renamed into place. */
export function tempFileName(name: string, randomId: string): string {
  return `.${name}.${randomId}.tmp`;
}

/** True for what a crashed write leaves behind. */
export function isTempFileName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/** The record a writer stores for `applied`: metadata first, so that a person reading it sees it. */
export function stateRecordOf(tenant: string, applied: AppliedContract): StateRecord {
  return {
    version: STATE_FILE_VERSION,
    tenant,
    contractId: applied.contractId,
    appliedAt: applied.appliedAt,
    commit: applied.commit,
    fingerprint: applied.fingerprint,
    fields: applied.fields,
  };
}

export function serialiseStateRecord(record: StateRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

function parseObject(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateFormatError(file, `not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new StateFormatError(file, 'expected a JSON object');
  return value as Record<string, unknown>;
}

function checkVersion(record: Record<string, unknown>, file: string): void {
  if (record.version !== STATE_FILE_VERSION) {
    throw new StateFormatError(
      file,
      `state version ${JSON.stringify(record.version)} is not supported (this contract-sync reads version ${STATE_FILE_VERSION})`,
    );
  }
}

/** Parses one record; `file` names it in errors, and the record must say the tenant and id its path says. */
export function parseStateRecord(text: string, file: string, tenant: string, contractId: string): StateRecord {
  const record = parseObject(text, file);
  checkVersion(record, file);
  if (record.tenant !== tenant || record.contractId !== contractId) {
    throw new StateFormatError(
      file,
      `holds tenant ${JSON.stringify(record.tenant)} contract ${JSON.stringify(record.contractId)}, but its path says ${tenant} ${contractId}`,
    );
  }
  return checkedStateRecord(record, file, tenant, contractId);
}

/** The record `record` holds for `tenant` and `contractId`, its fields checked; `file` names it in errors. */
export function checkedStateRecord(record: Record<string, unknown>, file: string, tenant: string, contractId: string): StateRecord {
  const { fields, appliedAt, commit, fingerprint } = record;
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new StateFormatError(file, '"fields" must be an object');
  if (appliedAt !== undefined && typeof appliedAt !== 'string') throw new StateFormatError(file, '"appliedAt" must be a string');
  if (commit !== undefined && commit !== null && typeof commit !== 'string') throw new StateFormatError(file, '"commit" must be a string or null');
  if (fingerprint !== undefined && typeof fingerprint !== 'string') throw new StateFormatError(file, '"fingerprint" must be a string');
  // What every writer writes (all three), built without the spreads below: every record a plan reads comes here.
  if (appliedAt !== undefined && commit !== undefined && fingerprint !== undefined) {
    return { version: STATE_FILE_VERSION, tenant, contractId, appliedAt, commit, fingerprint, fields: fields as ContractFields };
  }
  return {
    version: STATE_FILE_VERSION,
    tenant,
    contractId,
    ...(appliedAt === undefined ? {} : { appliedAt }),
    ...(commit === undefined ? {} : { commit }),
    ...(fingerprint === undefined ? {} : { fingerprint }),
    fields: fields as ContractFields,
  };
}

export const PENDING_OUTCOMES: readonly PendingContract['outcome'][] = ['failed', 'unknown', 'interrupted'];

export function isPendingOutcome(value: unknown): value is PendingContract['outcome'] {
  return (PENDING_OUTCOMES as readonly unknown[]).includes(value);
}

export function serialiseRunRecord(tenant: string, record: TenantRunRecord): string {
  const file: RunRecordFile = {
    version: RUN_RECORD_VERSION,
    tenant,
    lastAppliedCommit: record.lastAppliedCommit,
    ...(record.planningFingerprint === undefined ? {} : { planningFingerprint: record.planningFingerprint }),
    pending: record.pending.map(({ contractId, outcome, reason, since, file }) => ({
      contractId,
      outcome,
      reason,
      since,
      ...(file === undefined ? {} : { file }),
    })),
    updatedAt: record.updatedAt,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Parses a tenant's `.run.json`; `file` names it in errors. */
export function parseRunRecord(text: string, file: string, tenant: string): TenantRunRecord {
  const record = parseObject(text, file);
  if (!RUN_RECORD_VERSIONS.includes(record.version)) {
    throw new StateFormatError(
      file,
      `state version ${JSON.stringify(record.version)} is not supported (this contract-sync reads run record versions ${RUN_RECORD_VERSIONS.join(' and ')})`,
    );
  }
  if (record.tenant !== tenant) throw new StateFormatError(file, `holds tenant ${JSON.stringify(record.tenant)}, but its path says ${tenant}`);
  const { lastAppliedCommit, planningFingerprint, pending, updatedAt } = record;
  if (lastAppliedCommit !== null && typeof lastAppliedCommit !== 'string') throw new StateFormatError(file, '"lastAppliedCommit" must be a string or null');
  if (planningFingerprint !== undefined && typeof planningFingerprint !== 'string') throw new StateFormatError(file, '"planningFingerprint" must be a string');
  if (typeof updatedAt !== 'string') throw new StateFormatError(file, '"updatedAt" must be a string');
  if (!Array.isArray(pending)) throw new StateFormatError(file, '"pending" must be an array');
  const entries: PendingContract[] = [];
  for (const [index, entry] of pending.entries()) {
    const { contractId, outcome, reason, since, file: contractFile } = (entry ?? {}) as Record<string, unknown>;
    if (typeof contractId !== 'string' || typeof reason !== 'string' || typeof since !== 'string' || !isPendingOutcome(outcome)) {
      throw new StateFormatError(
        file,
        `"pending[${index}]" must be an object with string "contractId", "reason" and "since", and "outcome" one of ${PENDING_OUTCOMES.map((o) => JSON.stringify(o)).join(', ')}`,
      );
    }
    if (contractFile !== undefined && typeof contractFile !== 'string') throw new StateFormatError(file, `"pending[${index}].file" must be a string`);
    entries.push({ contractId, outcome, reason, since, ...(contractFile === undefined ? {} : { file: contractFile }) });
  }
  return { lastAppliedCommit, ...(planningFingerprint === undefined ? {} : { planningFingerprint }), pending: entries, updatedAt };
}

export function serialiseLockFile(content: LockFileContent): string {
  return `${JSON.stringify(content)}\n`;
}

/**
 * The lock's content, or undefined when it is empty or unreadable. This engine never leaves such a
 * lock, but older versions created the file before writing it, and a waiter must not fail on one.
 */
export function parseLockFile(text: string): LockFileContent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const { owner, pid, hostname, acquiredAt, heartbeatAt, lockId } = value as Record<string, unknown>;
  if (typeof owner !== 'string' || typeof hostname !== 'string' || typeof acquiredAt !== 'string') return undefined;
  if (typeof heartbeatAt !== 'string' || typeof lockId !== 'string' || !Number.isSafeInteger(pid)) return undefined;
  return { owner, pid: pid as number, hostname, acquiredAt, heartbeatAt, lockId };
}
