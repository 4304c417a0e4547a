/**
 * The stores' checks on what callers hand them. Names become paths, so a tenant or ContractId must
 * not escape its directory; a record must be one a reader will accept. Failing either is a
 * programming error: TypeError.
 */
import { CONTRACT_ID_RULE, isContractId, TENANT_PATTERN } from '../model/json-schemas.ts';
import { isJsonObject } from '../model/normalise.ts';
import { isPendingOutcome } from './file-format.ts';
import type { AppliedContract, TenantRunRecord } from './types.ts';

const TENANT = new RegExp(TENANT_PATTERN);

/** Whether `name` is a tenant's name (as the config and the plan allow them). */
export function isTenantName(name: string): boolean {
  return TENANT.test(name);
}

export function checkTenant(tenant: string): void {
  if (typeof tenant !== 'string' || !TENANT.test(tenant))
    throw new TypeError(`tenant: expected a name matching ${TENANT_PATTERN}, got ${JSON.stringify(tenant)}`);
}

export function checkContractId(contractId: string): void {
  if (!isContractId(contractId)) {
    throw new TypeError(`contractId: ${CONTRACT_ID_RULE}; got ${JSON.stringify(contractId)}`);
  }
}

export function checkApplied(applied: AppliedContract): void {
  checkContractId(applied.contractId);
  const { contractId, fields, fingerprint, appliedAt, commit } = applied;
  if (!isJsonObject(fields)) throw new TypeError(`applied ${contractId}: "fields" must be an object`);
  if (typeof fingerprint !== 'string') throw new TypeError(`applied ${contractId}: "fingerprint" must be a string, got ${String(fingerprint)}`);
  if (typeof appliedAt !== 'string') throw new TypeError(`applied ${contractId}: "appliedAt" must be a string, got ${String(appliedAt)}`);
  if (commit !== null && typeof commit !== 'string') throw new TypeError(`applied ${contractId}: "commit" must be a string or null, got ${String(commit)}`);
  if (applied.runId !== undefined && (typeof applied.runId !== 'string' || applied.runId === ''))
    throw new TypeError(`applied ${contractId}: "runId" must be a non-empty string when given, got ${JSON.stringify(applied.runId)}`);
}

export function checkRunRecord(record: TenantRunRecord): void {
  const { lastAppliedCommit, pending, updatedAt } = record;
  if (lastAppliedCommit !== null && typeof lastAppliedCommit !== 'string')
    throw new TypeError(`run record: "lastAppliedCommit" must be a string or null, got ${String(lastAppliedCommit)}`);
  if (typeof updatedAt !== 'string') throw new TypeError(`run record: "updatedAt" must be a string, got ${String(updatedAt)}`);
  if (!Array.isArray(pending)) throw new TypeError('run record: "pending" must be an array');
  for (const entry of pending) {
    if (
      !isJsonObject(entry) ||
      typeof entry.contractId !== 'string' ||
      typeof entry.reason !== 'string' ||
      typeof entry.since !== 'string' ||
      !isPendingOutcome(entry.outcome)
    ) {
      throw new TypeError('run record: every "pending" entry must have string "contractId", "reason" and "since", and an "outcome"');
    }
  }
}
