/**
 * The one reader of the state store's known state for plans: per tenant, the records of the
 * contracts planned (an incremental plan of one changed contract in a tenant of 10,000 reads one
 * record), or of every contract when a tenant is planned whole. A store that cannot be opened or
 * read is a problem kept for the end: the desired state's own errors are said first.
 */
import type { KnownContracts } from '../model/types.ts';
import { StateFormatError } from '../state/file-format.ts';
import { PostgresStateError } from '../state/postgres/errors.ts';
import type { StateStore } from '../state/types.ts';
import type { LazyStore } from './lazy-store.ts';

export interface KnownStateReader {
  /** `tenant`'s records (of `only`, when given); none once the store has a problem. */
  read(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts>;
  /** Why the store could not be opened or read, if it could not; opens it if no read did. */
  problem(): Promise<string | undefined>;
}

export function knownStateReader(store: LazyStore): KnownStateReader {
  let problem: string | undefined;
  return {
    async read(tenant, only) {
      if (problem !== undefined) return new Map();
      const opened = await store.get();
      if (typeof opened === 'string') {
        problem = opened;
        return new Map();
      }
      try {
        return await opened.readTenant(tenant, only);
      } catch (error) {
        if (!(error instanceof StateFormatError) && !(error instanceof PostgresStateError)) throw error;
        problem = `cannot read the state store: ${error.message}`;
        return new Map();
      }
    },
    async problem() {
      const opened = await store.get();
      return typeof opened === 'string' ? opened : problem;
    },
  };
}

export { readPlannedKnownState } from '../pipeline/plan-stored.ts';

/** A store as a reader (tests and library callers holding an open store). */
export function storeReader(store: StateStore): Pick<KnownStateReader, 'read'> {
  return { read: (tenant, only) => store.readTenant(tenant, only) };
}
