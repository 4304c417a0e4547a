/** A state store held in memory: for tests, and for planning with nothing known (`emptyStateStore`). */
import type { KnownContract, KnownContracts, KnownState, StateStore } from './types.ts';

export function memoryStateStore(state: KnownState = new Map()): StateStore {
  return {
    async readTenant(tenant: string): Promise<KnownContracts> {
      return state.get(tenant) ?? new Map<string, KnownContract>();
    },
  };
}

/** Nothing ever applied: every contract plans as `knownFrom: unknown`. */
export function emptyStateStore(): StateStore {
  return memoryStateStore();
}

/** The known state of `tenants`, read from `store`: the input createPlan takes. */
export async function readKnownState(store: StateStore, tenants: readonly string[]): Promise<KnownState> {
  const state = new Map<string, KnownContracts>();
  for (const tenant of tenants) state.set(tenant, await store.readTenant(tenant));
  return state;
}
