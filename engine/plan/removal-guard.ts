/**
 * The removal guard of apply and drift --fix: a tenant whose plan removes many collection members,
 * or every member of a collection that had several, is refused unless the run allows it. A
 * desired-state file emptied by mistake, or a collection mode switched to authoritative, then
 * stops at one refused tenant instead of emptying contracts on the service. Pure.
 */
import { getField, isCollectionField, type CollectionFieldName } from '../model/fields.ts';
import { plural } from '../text/plural.ts';
import type { PlanContract } from './types.ts';

export const DEFAULT_MAX_REMOVALS = 25;
/** A collection with at least this many members is never emptied without --allow-removals. */
export const WHOLE_COLLECTION_MIN = 3;

export interface RemovalLimits {
  /** More removals than this in one tenant refuse it (`--max-removals`, `safety.maxRemovals`). */
  readonly maxRemovals: number;
  /** `--allow-removals`: nothing is refused. */
  readonly allow: boolean;
}

/** A collection the plan empties: every member the known state holds is removed. */
export interface EmptiedCollection {
  readonly contractId: string;
  readonly field: CollectionFieldName;
  readonly members: number;
}

export interface TenantRemovals {
  readonly tenant: string;
  /** Members removed and not added again (a member removed to be re-added changed; it is not a removal). */
  readonly removals: number;
  /** Collections of WHOLE_COLLECTION_MIN or more members that the plan empties (only when the known sizes are given). */
  readonly emptied: readonly EmptiedCollection[];
}

export type RemovalVerdict =
  { readonly kind: 'allowed'; readonly removals: TenantRemovals } | { readonly kind: 'refused'; readonly removals: TenantRemovals; readonly reason: string };

/** How many members a contract's known state holds in `field`; undefined when the known state is not at hand (a saved plan). */
export type KnownSize = (contractId: string, field: CollectionFieldName) => number | undefined;

/** The removals of one tenant's contracts to be sent. */
export function countRemovals(tenant: string, contracts: readonly PlanContract[], knownSize?: KnownSize): TenantRemovals {
  let removals = 0;
  const emptied: EmptiedCollection[] = [];
  for (const contract of contracts) {
    if (contract.action !== 'update') continue;
    const byField = new Map<CollectionFieldName, number>();
    for (const change of contract.changes) {
      const field = getField(change.field);
      if (field === undefined || !isCollectionField(field) || change.after !== null) continue;
      const name = field.name as CollectionFieldName;
      byField.set(name, (byField.get(name) ?? 0) + 1);
      removals += 1;
    }
    for (const [field, removed] of byField) {
      const members = knownSize?.(contract.id, field);
      if (members !== undefined && members >= WHOLE_COLLECTION_MIN && removed >= members) emptied.push({ contractId: contract.id, field, members });
    }
  }
  return { tenant, removals, emptied };
}

/** Trips the guard: more removals than the limit, or an emptied collection of WHOLE_COLLECTION_MIN or more members. */
export function exceedsLimits(removals: TenantRemovals, maxRemovals: number): boolean {
  return removals.removals > maxRemovals || removals.emptied.length > 0;
}

/** Whether the tenant may be sent; when not, why, naming the count, the tenant and the flag. */
export function judgeRemovals(removals: TenantRemovals, limits: RemovalLimits): RemovalVerdict {
  if (limits.allow || !exceedsLimits(removals, limits.maxRemovals)) return { kind: 'allowed', removals };
  const { tenant } = removals;
  const what: string[] = [];
  if (removals.removals > limits.maxRemovals) {
    what.push(`removes ${plural(removals.removals, 'collection member')}, more than the limit of ${limits.maxRemovals} (--max-removals, safety.maxRemovals)`);
  }
  const [first, ...more] = removals.emptied;
  if (first !== undefined) {
    const others = more.length === 0 ? '' : ` and ${plural(more.length, 'other collection')}`;
    what.push(`removes every member of ${first.field} of contract ${first.contractId} (${plural(first.members, 'member')})${others}`);
  }
  return {
    kind: 'refused',
    removals,
    reason: `removal guard: the plan of tenant ${tenant} ${what.join(', and ')}; nothing sent for ${tenant}. Check the desired state, or pass --allow-removals to send it anyway.`,
  };
}
