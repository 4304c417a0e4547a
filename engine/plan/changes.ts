/** Ops -> changes for people ({field, before, after}); the plan stores both. Pure. */
import { getField, type CollectionFieldSpec, type FieldName } from '../model/fields.ts';
import { memberIdentity } from '../model/normalise.ts';
import type { ContractFields, Op } from '../model/types.ts';
import type { PlanChange } from './types.ts';

function fieldOf(op: Op): FieldName {
  return op.path.slice('/Contract/'.length) as FieldName;
}

/**
 * One change per Replace and per member; a Remove followed by an Add of the same identity (a
 * changed member) is one change with both sides. Order follows the ops.
 */
export function describeChanges(known: ContractFields | undefined, ops: readonly Op[]): PlanChange[] {
  // Nothing known: no Remove to pair, nothing before; one change per op.
  if (known === undefined) return ops.map((op) => ({ field: fieldOf(op), before: null, after: op.value }));
  // Nothing to send (most contracts of a plan with known state): no pairing map.
  if (ops.length === 0) return [];
  const changes: { field: FieldName; before: unknown; after: unknown }[] = [];
  // field + identity -> the change of a Remove that an Add of the same member may complete
  const removed = new Map<string, { field: FieldName; before: unknown; after: unknown }>();
  for (const op of ops) {
    const field = fieldOf(op);
    if (op.op === 'Replace') {
      changes.push({ field, before: (known as Record<string, unknown> | undefined)?.[field] ?? null, after: op.value });
      continue;
    }
    const key = `${field} ${memberIdentity(getField(field) as CollectionFieldSpec, op.value)}`;
    if (op.op === 'Remove') {
      const change = { field, before: op.value, after: null };
      removed.set(key, change);
      changes.push(change);
      continue;
    }
    const pending = removed.get(key);
    if (pending) {
      pending.after = op.value;
      removed.delete(key);
      continue;
    }
    changes.push({ field, before: null, after: op.value });
  }
  return changes;
}
