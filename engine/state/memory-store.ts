/**
 * A state store held in memory: for tests (the executor's among them), and for planning with
 * nothing known (`emptyStateStore`). It keeps the file store's contract: writes are visible to the
 * next read, records are copies, and one lock per tenant with the same timeout semantics, held
 * within this process only.
 */
import { systemClock } from '../clock.ts';
import { compareText } from '../compare-text.ts';
import { fingerprint } from '../model/fingerprint.ts';
import { checkHistoryEntry, checkHistoryQuery, selectHistory, type RunHistoryEntry } from './history.ts';
import { checkLockOptions } from './lock-options.ts';
import { lockTimeoutMessage, type LockHolder } from './lock-timeout-message.ts';
import { checkApplied, checkContractId, checkRunRecord, checkTenant } from './store-input.ts';
import {
  LockTimeoutError,
  type AppliedContract,
  type KnownContract,
  type KnownContracts,
  type KnownState,
  type LockOptions,
  type HistoryQuery,
  type StateStore,
  type StoredContract,
  type TenantLock,
  type TenantRunRecord,
} from './types.ts';

/** The timers a waiting lock() uses for its timeout; the global ones by default. */
export interface TimeoutTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface MemoryStateStoreOptions {
  /** The clock, in epoch milliseconds: lock times in timeout messages. */
  readonly now?: () => number;
  readonly timers?: TimeoutTimers;
}

export interface MemoryStateStore extends StateStore {
  /** What writeContract recorded for `tenant`, by ContractId: for tests to check. */
  applied(tenant: string): ReadonlyMap<string, AppliedContract>;
}

interface Holder {
  readonly owner: string;
  readonly acquiredAt: string;
}

// Looked up at each call, not captured at import, so that fake timers installed later apply.
const globalTimers: TimeoutTimers = {
  setTimeout(callback, ms) {
    return globalThis.setTimeout(callback, ms);
  },
  clearTimeout(handle) {
    globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

function checkOptions(options: MemoryStateStoreOptions): void {
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError(`options.now: expected a function, got ${String(options.now)}`);
  const timers = options.timers;
  if (timers !== undefined && (typeof timers?.setTimeout !== 'function' || typeof timers.clearTimeout !== 'function')) {
    throw new TypeError(`options.timers: expected { setTimeout, clearTimeout } functions, got ${String(timers)}`);
  }
}

export function memoryStateStore(state: KnownState = new Map(), options: MemoryStateStoreOptions = {}): MemoryStateStore {
  checkOptions(options);
  const now = options.now ?? systemClock.now;
  const timers = options.timers ?? globalTimers;
  // Copy on first write: `state` is the caller's and read-only, and a store that is only read
  // hands it out as is.
  const written = new Map<string, Map<string, KnownContract>>();
  const applied = new Map<string, Map<string, AppliedContract>>();
  const runs = new Map<string, TenantRunRecord>();
  const holders = new Map<string, Holder>();
  const history = new Map<string, RunHistoryEntry>();
  // FIFO per tenant; not empty only while the tenant is held (release hands the lock on at once).
  const waiters = new Map<string, (() => void)[]>();

  function take(tenant: string, owner: string): TenantLock {
    const holder: Holder = { owner, acquiredAt: new Date(now()).toISOString() };
    holders.set(tenant, holder);
    let released = false;
    return {
      tenant,
      async release(): Promise<void> {
        if (released) return;
        released = true;
        if (holders.get(tenant) !== holder) return;
        holders.delete(tenant);
        const queue = waiters.get(tenant);
        const next = queue?.shift();
        if (queue?.length === 0) waiters.delete(tenant);
        next?.();
      },
    };
  }

  function contractsOf(tenant: string): ReadonlyMap<string, KnownContract> {
    return written.get(tenant) ?? state.get(tenant) ?? new Map<string, KnownContract>();
  }

  /** The record of a contract: as written, or, for the known state handed in, its fields. */
  function recordOf(tenant: string, contractId: string, known: KnownContract): StoredContract {
    const record = applied.get(tenant)?.get(contractId);
    return structuredClone(record ?? { contractId, fields: known.fields, fingerprint: fingerprint(known.fields) });
  }

  function holderOf(holder: Holder): LockHolder {
    return { owner: holder.owner, acquiredAt: holder.acquiredAt };
  }

  function timeout(tenant: string, waitedMs: number): LockTimeoutError {
    return new LockTimeoutError(tenant, lockTimeoutMessage(tenant, holders.get(tenant) ?? {}, waitedMs));
  }

  return {
    async readTenant(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts> {
      checkTenant(tenant);
      if (only !== undefined) for (const id of only) checkContractId(id);
      const contracts = written.get(tenant) ?? state.get(tenant) ?? new Map<string, KnownContract>();
      return new Map([...contracts].filter(([id]) => only === undefined || only.has(id)));
    },

    async writeContract(tenant: string, record: AppliedContract): Promise<void> {
      checkTenant(tenant);
      checkApplied(record);
      const copy = structuredClone(record);
      let contracts = written.get(tenant);
      if (contracts === undefined) {
        contracts = new Map(state.get(tenant));
        written.set(tenant, contracts);
      }
      contracts.set(copy.contractId, { fields: copy.fields, from: 'state' });
      let records = applied.get(tenant);
      if (records === undefined) {
        records = new Map();
        applied.set(tenant, records);
      }
      records.set(copy.contractId, copy);
    },

    async readRun(tenant: string): Promise<TenantRunRecord | undefined> {
      checkTenant(tenant);
      const record = runs.get(tenant);
      return record === undefined ? undefined : structuredClone(record);
    },

    async writeRun(tenant: string, record: TenantRunRecord): Promise<void> {
      checkTenant(tenant);
      checkRunRecord(record);
      runs.set(tenant, structuredClone(record));
    },

    async lock(tenant: string, lockOptions: LockOptions): Promise<TenantLock> {
      checkTenant(tenant);
      checkLockOptions(lockOptions);
      const { owner, timeoutMs } = lockOptions;
      if (!holders.has(tenant)) return take(tenant, owner);
      if (timeoutMs === 0) throw timeout(tenant, 0);
      const started = now();
      return new Promise<TenantLock>((resolve, reject) => {
        const timer: { handle?: unknown } = {};
        function grant(): void {
          if (timer.handle !== undefined) timers.clearTimeout(timer.handle);
          resolve(take(tenant, owner));
        }
        const queue = waiters.get(tenant) ?? [];
        waiters.set(tenant, queue);
        queue.push(grant);
        if (!Number.isFinite(timeoutMs)) return;
        timer.handle = timers.setTimeout(() => {
          queue.splice(queue.indexOf(grant), 1);
          if (queue.length === 0 && waiters.get(tenant) === queue) waiters.delete(tenant);
          reject(timeout(tenant, now() - started));
        }, timeoutMs);
      });
    },

    async listTenants(): Promise<string[]> {
      const tenants = new Set([...runs.keys()]);
      for (const tenant of new Set([...state.keys(), ...written.keys()])) if (contractsOf(tenant).size > 0) tenants.add(tenant);
      return [...tenants].sort();
    },

    async listRecords(tenant: string): Promise<StoredContract[]> {
      checkTenant(tenant);
      return [...contractsOf(tenant)].sort(([a], [b]) => compareText(a, b)).map(([id, known]) => recordOf(tenant, id, known));
    },

    async readRecord(tenant: string, contractId: string): Promise<StoredContract | undefined> {
      checkTenant(tenant);
      checkContractId(contractId);
      const known = contractsOf(tenant).get(contractId);
      return known === undefined ? undefined : recordOf(tenant, contractId, known);
    },

    async removeRecord(tenant: string, contractId: string): Promise<boolean> {
      checkTenant(tenant);
      checkContractId(contractId);
      if (!contractsOf(tenant).has(contractId)) return false;
      let contracts = written.get(tenant);
      if (contracts === undefined) {
        contracts = new Map(state.get(tenant));
        written.set(tenant, contracts);
      }
      contracts.delete(contractId);
      applied.get(tenant)?.delete(contractId);
      return true;
    },

    async lockHolder(tenant: string): Promise<LockHolder | undefined> {
      checkTenant(tenant);
      const holder = holders.get(tenant);
      return holder === undefined ? undefined : holderOf(holder);
    },

    async forceUnlock(tenant: string): Promise<LockHolder | undefined> {
      checkTenant(tenant);
      const holder = holders.get(tenant);
      if (holder === undefined) return undefined;
      holders.delete(tenant);
      // The next waiter takes it, as after a release; the old handle's release() does nothing.
      const queue = waiters.get(tenant);
      const next = queue?.shift();
      if (queue?.length === 0) waiters.delete(tenant);
      next?.();
      return holderOf(holder);
    },

    async appendHistory(entry: RunHistoryEntry): Promise<void> {
      checkHistoryEntry(entry);
      history.set(entry.runId, structuredClone(entry));
    },

    async readHistory(query: HistoryQuery = {}): Promise<RunHistoryEntry[]> {
      if (query.tenant !== undefined) checkTenant(query.tenant);
      checkHistoryQuery(query);
      return structuredClone(selectHistory([...history.values()], query));
    },

    async close(): Promise<void> {},

    applied(tenant: string): ReadonlyMap<string, AppliedContract> {
      return new Map(applied.get(tenant));
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
