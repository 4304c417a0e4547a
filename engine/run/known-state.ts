/** The known state a plan needs: the records of the contracts it plans, not of every contract of their tenants. */
import type { ContractSet } from '../desired/types.ts';
import type { KnownContracts, KnownState, StateStore } from '../state/types.ts';

/**
 * Per tenant of `contractSets`, the state store's records of their contracts only. An incremental
 * plan of one changed contract in a tenant of 10,000 reads one record; a full plan reads as many
 * as listing the tenant would. A tenant with no contract planned is not opened at all.
 */
export async function readPlannedKnownState(store: StateStore, contractSets: readonly ContractSet[]): Promise<KnownState> {
  const ids = new Map<string, Set<string>>();
  for (const set of contractSets) {
    const tenantIds = ids.get(set.tenant) ?? new Set<string>();
    for (const contract of set.contracts) tenantIds.add(contract.id);
    ids.set(set.tenant, tenantIds);
  }
  const known = new Map<string, KnownContracts>();
  for (const tenant of [...ids.keys()].sort()) known.set(tenant, await store.readTenant(tenant, ids.get(tenant)));
  return known;
}
