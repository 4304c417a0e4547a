/**
 * The file backend's format (`state: { backend: file, path: DIR }`), defined here for every reader
 * and writer. Pure.
 *
 *   DIR/<tenant>/<ContractId>.json   one file per contract, UTF-8 JSON:
 *   { "version": 1, "tenant": "acme", "contractId": "4711", "fields": { ...ContractFields } }
 *
 * - `fields` is the contract's known state after the last successful PATCH: the fields as the
 *   service holds them, keyed like a desired-state contract (no wrapper, no id).
 * - One file per contract, so that a writer records each contract as soon as its PATCH succeeds,
 *   atomically (write `.<ContractId>.json.tmp` in the same directory, fsync, rename over the file).
 * - Tenant names and ContractIds are safe file names: both patterns start with a letter or digit
 *   and allow no `/` (specs/contracts.schema.json).
 * - Readers ignore names starting with `.` (temporary files, locks) and names not ending in `.json`.
 * - A contract with no file was never applied. Readers refuse versions they do not know.
 */
import type { ContractFields } from '../model/types.ts';

export const STATE_FILE_VERSION = 1;

export interface StateRecord {
  readonly version: typeof STATE_FILE_VERSION;
  readonly tenant: string;
  readonly contractId: string;
  readonly fields: ContractFields;
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

export function serialiseStateRecord(record: StateRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** Parses one record; `file` names it in errors, and the record must say the tenant and id its path says. */
export function parseStateRecord(text: string, file: string, tenant: string, contractId: string): StateRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateFormatError(file, `not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new StateFormatError(file, 'expected a JSON object');
  const record = value as Record<string, unknown>;
  if (record.version !== STATE_FILE_VERSION) {
    throw new StateFormatError(file, `state version ${JSON.stringify(record.version)} is not supported (this contract-sync reads version ${STATE_FILE_VERSION})`);
  }
  if (record.tenant !== tenant || record.contractId !== contractId) {
    throw new StateFormatError(file, `holds tenant ${JSON.stringify(record.tenant)} contract ${JSON.stringify(record.contractId)}, but its path says ${tenant} ${contractId}`);
  }
  const fields = record.fields;
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new StateFormatError(file, '"fields" must be an object');
  return { version: STATE_FILE_VERSION, tenant, contractId, fields: fields as ContractFields };
}
