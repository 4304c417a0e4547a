import type { ContractFields } from '../model/types.ts';

/** Where a contract's known state came from: the state store (what we last applied) or a live read. */
export type KnownSource = 'state' | 'live';

/** The last known state of one contract. */
export interface KnownContract {
  readonly fields: ContractFields;
  readonly from: KnownSource;
}

/** Known state of one tenant's contracts, by ContractId. A contract never applied is absent. */
export type KnownContracts = ReadonlyMap<string, KnownContract>;

/** Known state of every tenant, by tenant name. */
export type KnownState = ReadonlyMap<string, KnownContracts>;

/**
 * Where the engine keeps what it last applied. Reading only: writes, locks and the crash-safe
 * journal come with the apply issue (DESIGN.md section 7).
 */
export interface StateStore {
  /** The last known state of a tenant's contracts; an empty map when nothing was ever applied. */
  readTenant(tenant: string): Promise<KnownContracts>;
}
