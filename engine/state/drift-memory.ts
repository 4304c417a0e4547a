/**
 * The drift notifications' memory (engine/notify/dedupe.ts): per tenant, per contract, the key of
 * the drift last notified. A key is a hash of (tenant, contract, the ops that would correct it), so
 * the memory holds no contract data. The stores' check on what callers hand them, shared by every
 * backend: a failed check is a programming error (TypeError).
 */
import { compareText } from '../text/compare-text.ts';
import { checkContractId } from './store-input.ts';
import type { DriftKeyChanges, DriftKeys } from './types.ts';

const KEY = /^[0-9a-f]{16,128}$/;

export function checkDriftKeyChanges(changes: DriftKeyChanges): void {
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes))
    throw new TypeError('drift keys: expected an object of contract id -> key or null');
  for (const [contractId, key] of Object.entries(changes)) {
    checkContractId(contractId);
    if (key !== null && (typeof key !== 'string' || !KEY.test(key))) {
      throw new TypeError(`drift key of ${contractId}: expected lower-case hex (16 to 128 digits) or null, got ${JSON.stringify(key)}`);
    }
  }
}

/** `keys` with `changes` made: a new object, sorted by contract id so that a file reads the same however it was written. */
export function applyDriftKeyChanges(keys: DriftKeys, changes: DriftKeyChanges): Record<string, string> {
  // A Map, not assignment: a ContractId may be any string, `__proto__` included.
  const next = new Map(Object.entries(keys));
  for (const [contractId, key] of Object.entries(changes)) {
    if (key === null) next.delete(contractId);
    else next.set(contractId, key);
  }
  return Object.fromEntries([...next].sort(([a], [b]) => compareText(a, b)));
}
