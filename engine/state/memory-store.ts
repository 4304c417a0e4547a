/**
 * A state store held in memory: for tests (the executor's among them), and for planning with
 * nothing known (`emptyStateStore`). It keeps the file store's contract: writes are visible to the
 * next read, records are copies, and one lock per tenant with the same timeout semantics, held
 * within this process only.
 */
import { systemClock } from '../io/clock.ts';
import { compareText } from '../text/compare-text.ts';
import { fingerprint } from '../model/fingerprint.ts';
import { applyDriftKeyChanges, checkDriftKeyChanges } from './drift-memory.ts';
import { checkHistoryEntry, checkHistoryQuery, selectHistory, type RunHistoryEntry } from './history.ts';
import { checkLockOptions } from './lock-options.ts';
import { lockTimeoutMessage, type LockHolder } from './lock-timeout-message.ts';
import { checkApplied, checkContractId, checkRunRecord, checkTenant } from './store-input.ts';
import { checkLastApplied, lossSignal, type LossSignal } from './write-guard.ts';
import {
  LockLostError,
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
  type WriteGuard,
  type DriftKeyChanges,
  type DriftKeys,
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
  readonly fence: string;
  readonly loss: LossSignal;
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
  const driftKeys = new Map<string, DriftKeys>();
  // FIFO per tenant; not empty only while the tenant is held (release hands the lock on at once).
  const waiters = new Map<string, (() => void)[]>();

  // Per tenant, the fence of its latest acquisition: each one gets the next.
  const generations = new Map<string, number>();
  const losses = new WeakMap<TenantLock, LossSignal>();

  function take(tenant: string, owner: string): TenantLock {
    const generation = (generations.get(tenant) ?? 0) + 1;
    generations.set(tenant, generation);
    const holder: Holder = { owner, acquiredAt: new Date(now()).toISOString(), fence: String(generation), loss: lossSignal(tenant) };
    holders.set(tenant, holder);
    let released = false;
    const lock: TenantLock = {
      tenant,
      lost: holder.loss.signal,
      fence: holder.fence,
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
    losses.set(lock, holder.loss);
    return lock;
  }

  function contractsOf(tenant: string): ReadonlyMap<string, KnownContract> {
    return written.get(tenant) ?? state.get(tenant) ?? new Map<string, KnownContract>();
  }

  /** The record of a contract: as written, or, for the known state handed in, its fields. */
  function recordOf(tenant: string, contractId: string, known: KnownContract): StoredContract {
    const record = applied.get(tenant)?.get(contractId);
    return structuredClone(record ?? { contractId, fields: known.fields, fingerprint: fingerprint(known.fields) });
  }

  /** Fencing: refuses the write of a lock that no longer holds the tenant. */
  function checkFence(tenant: string, guard: WriteGuard | undefined): void {
    const lock = guard?.lock;
    if (lock === undefined) return;
    const holder = holders.get(tenant);
    if (lock.tenant !== tenant) throw new TypeError(`a lock of tenant ${lock.tenant} cannot guard a write to tenant ${tenant}`);
    if (holder?.fence === lock.fence) return;
    throw lostBy(lock, holder === undefined ? 'nobody holds it now' : `another run (${holder.owner}) holds it now`);
  }

  /** Fires the lost lock's signal, when it is one of this store's, and returns the error to throw. */
  function lostBy(lock: TenantLock, why: string): Error {
    const loss = losses.get(lock);
    return loss === undefined ? new LockLostError(lock.tenant, why) : loss.lose(why);
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

    async writeContract(tenant: string, record: AppliedContract, guard?: WriteGuard): Promise<void> {
      checkTenant(tenant);
      checkApplied(record);
      checkFence(tenant, guard);
      // The run that applied it: only a store that keeps shared runs counts it (PostgreSQL).
      const { runId: _run, ...copy } = structuredClone(record);
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

    async writeRun(tenant: string, record: TenantRunRecord, guard?: WriteGuard): Promise<void> {
      checkTenant(tenant);
      checkRunRecord(record);
      checkFence(tenant, guard);
      checkLastApplied(tenant, guard, runs.get(tenant));
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
      holder.loss.lose('its lock was taken away (state unlock --force)');
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

    async readDriftKeys(tenant: string): Promise<DriftKeys> {
      checkTenant(tenant);
      return { ...driftKeys.get(tenant) };
    },

    async listDriftTenants(): Promise<string[]> {
      return [...driftKeys.keys()].sort(compareText);
    },

    async writeDriftKeys(tenant: string, changes: DriftKeyChanges): Promise<void> {
      checkTenant(tenant);
      checkDriftKeyChanges(changes);
      const next = applyDriftKeyChanges(driftKeys.get(tenant) ?? {}, changes);
      if (Object.keys(next).length === 0) driftKeys.delete(tenant);
      else driftKeys.set(tenant, next);
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
