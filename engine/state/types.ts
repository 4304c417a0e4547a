import type { ContractFields, KnownContracts } from '../model/types.ts';
import type { LockHolder } from './lock-timeout-message.ts';
import type { HistoryQuery, RunHistoryEntry } from './history.ts';
import type { SharedRuns } from './shared-run.ts';

export type { HistoryQuery } from './history.ts';

export type { KnownContract, KnownContracts, KnownSource, KnownState } from '../model/types.ts';

/** What a successful PATCH leaves behind for one contract (docs/architecture.md section 7). */
export interface AppliedContract {
  readonly contractId: string;
  /** The contract's known state after the PATCH: the known state before it with the ops applied. */
  readonly fields: ContractFields;
  /** fingerprint(fields): lets a reader check a record without recomputing the plan. */
  readonly fingerprint: string;
  /** ISO 8601 UTC, from the injected clock. */
  readonly appliedAt: string;
  /** The git commit the desired state came from; null for a working tree that is not a repository. */
  readonly commit: string | null;
  /**
   * The run whose PATCH this record follows (its id), when the run counts the contract as applied;
   * left out for a record written without applying anything (a live read found unchanged, an
   * uncertain contract settled, an import). A store that keeps shared runs counts the contract for
   * its run in the same write, so that the run's history counts what any of its workers applied
   * (engine/state/shared-run.ts); the others keep only the record.
   */
  readonly runId?: string;
}

/**
 * A contract's record as stored. Records written before apply recorded appliedAt and commit lack
 * them (file backend); the fingerprint is then computed from the fields.
 */
export type StoredContract = Omit<AppliedContract, 'appliedAt' | 'commit' | 'runId'> & { readonly appliedAt?: string; readonly commit?: string | null };

/**
 * A contract a run did not finish:
 * - `failed`: the service refused it or kept failing; nothing of it is known to be applied;
 * - `unknown`: a PATCH with Add/Remove broke off after sending and there was no read to settle it;
 * - `interrupted`: the run stopped (crash, kill) while the contract was queued or in flight. If its
 *   state record is older than `since`, its PATCH may or may not have been applied.
 */
export interface PendingContract {
  readonly contractId: string;
  readonly outcome: 'failed' | 'unknown' | 'interrupted';
  readonly reason: string;
  /** When the run that left it started (ISO 8601 UTC). */
  readonly since: string;
  /**
   * The desired-state file that declared the contract, relative to the repository: incremental
   * apply plans it again. Absent in records written before it was recorded.
   */
  readonly file?: string;
}

/** Per tenant, what the last run left to do: read by incremental apply. */
export interface TenantRunRecord {
  /**
   * The commit of the last run that finished for the tenant (took its lock, planned, and sent what
   * it had to), whether or not every contract was applied: the ones that were not are in `pending`.
   * Null until a run whose desired state came from a git commit has finished; a run from a working
   * tree outside git keeps the one before.
   */
  readonly lastAppliedCommit: string | null;
  /**
   * What the config made of planning when `lastAppliedCommit` was recorded (desired paths, tenant
   * paths, collection modes): a later run planning differently cannot start from that commit.
   * Absent in records written before it was recorded.
   */
  readonly planningFingerprint?: string;
  /** Contracts the next run must look at again, whatever changed in git: see PendingContract. */
  readonly pending: readonly PendingContract[];
  readonly updatedAt: string;
}

/** Held while a run applies to one tenant; two runs never apply to one tenant at once. */
export interface TenantLock {
  readonly tenant: string;
  /**
   * Aborted, with a LockLostError as its reason, the moment the store learns that this holder no
   * longer holds the lock: the PostgreSQL session holding it ended, the file lock was taken away or
   * its heartbeat could not be kept, `state unlock --force`, or a write refused for it. A run stops
   * starting requests for the tenant when it fires. Not aborted by release().
   */
  readonly lost: AbortSignal;
  /**
   * The fencing token of this acquisition: a later acquisition of the tenant's lock has another
   * one. A write that carries the lock (WriteGuard) is refused once the token is not the current one.
   */
  readonly fence: string;
  /** Idempotent. */
  release(): Promise<void>;
}

/**
 * What a lock holder's write carries, checked by the store in the write itself:
 * - `lock`: refused with LockLostError unless `lock` still holds the tenant (fencing: a run that
 *   lost its lock never overwrites the records of the run that took it next);
 * - `lastAppliedCommit` (writeRun only): refused with LastAppliedChangedError unless the tenant's
 *   run record still names this commit (null: no commit, or no run record): a compare-and-set, so
 *   that a run never records its commit over one another run recorded after it read its own.
 */
export interface WriteGuard {
  readonly lock?: TenantLock | undefined;
  readonly lastAppliedCommit?: string | null;
}

/** A lock holder's write refused, or its lock seen gone: another run may hold the tenant now. */
export class LockLostError extends Error {
  readonly code = 'lock-lost';
  readonly tenant: string;
  constructor(tenant: string, why: string) {
    super(`lost the lock of tenant ${tenant}: ${why}; nothing more is sent or recorded for it by this run`);
    this.tenant = tenant;
  }
}

/** writeRun's compare-and-set refused: the run record names another commit than the one the writer read. */
export class LastAppliedChangedError extends Error {
  readonly code = 'last-applied-changed';
  readonly tenant: string;
  /** What the run record names now. */
  readonly current: string | null;
  /** What the writer read. */
  readonly expected: string | null;
  constructor(tenant: string, expected: string | null, current: string | null) {
    super(
      `skipped: the last applied commit of tenant ${tenant} changed to ${current ?? 'none'} while this run held its lock (it read ${expected ?? 'none'}); this run's commit is not recorded over it`,
    );
    this.tenant = tenant;
    this.current = current;
    this.expected = expected;
  }
}

export interface LockOptions {
  /** How long to wait for another run's lock before giving up with LockTimeoutError. */
  readonly timeoutMs: number;
  /** Who holds it, for the message the waiting run prints (e.g. the run's correlation id). */
  readonly owner: string;
}

/** Another run held the tenant's lock for longer than the wait allowed. */
export class LockTimeoutError extends Error {
  readonly code = 'lock-timeout';
  readonly tenant: string;
  constructor(tenant: string, message: string) {
    super(message);
    this.tenant = tenant;
  }
}

/** The drift notifications' memory of a tenant: contract id -> the key of the drift last notified (engine/notify/dedupe.ts). */
export type DriftKeys = Readonly<Record<string, string>>;

/** Per contract: its drift's key to remember, or null to forget it. Contracts not named keep theirs. */
export type DriftKeyChanges = Readonly<Record<string, string | null>>;

/** Where the engine keeps what it last applied (docs/architecture.md section 7). */
export interface StateStore {
  /**
   * The last known state of a tenant's contracts; an empty map when nothing was ever applied.
   * With `only`, just those contracts (the ones of them with a record): a run that plans a few
   * contracts of a large tenant reads a few records.
   */
  readTenant(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts>;
  /**
   * Records one contract durably: when the promise resolves, a crash cannot lose it. With
   * `guard.lock`, refused (LockLostError) unless that lock still holds the tenant.
   */
  writeContract(tenant: string, applied: AppliedContract, guard?: WriteGuard): Promise<void>;
  /** The tenant's run record; undefined before the first run. */
  readRun(tenant: string): Promise<TenantRunRecord | undefined>;
  /** With `guard`, refused unless its lock still holds the tenant and the record names its `lastAppliedCommit` (WriteGuard). */
  writeRun(tenant: string, record: TenantRunRecord, guard?: WriteGuard): Promise<void>;
  /** Waits for and takes the tenant's lock; stale locks of crashed runs are recovered. */
  lock(tenant: string, options: LockOptions): Promise<TenantLock>;
  /** Every tenant with a contract record or a run record, sorted. */
  listTenants(): Promise<string[]>;
  /** The tenant's contract records, sorted by ContractId. */
  listRecords(tenant: string): Promise<StoredContract[]>;
  /** One contract's record; undefined when it has none. */
  readRecord(tenant: string, contractId: string): Promise<StoredContract | undefined>;
  /** Forgets one contract's record (the next plan reads it as never applied); false when it had none. */
  removeRecord(tenant: string, contractId: string): Promise<boolean>;
  /** Who holds the tenant's lock now; undefined when nobody does. */
  lockHolder(tenant: string): Promise<LockHolder | undefined>;
  /**
   * Takes the tenant's lock away from whoever holds it (a run that is gone but whose lock was not
   * recovered): what was known of the holder, or undefined when the tenant was not locked.
   */
  forceUnlock(tenant: string): Promise<LockHolder | undefined>;
  /** Records one finished run (apply, drift --fix); an entry with the same runId is replaced. */
  appendHistory(entry: RunHistoryEntry): Promise<void>;
  /** Finished runs, newest first (by finishedAt); with `tenant`, those that ran for it. */
  readHistory(query?: HistoryQuery): Promise<RunHistoryEntry[]>;
  /**
   * The drift notifications' memory of a tenant (engine/notify/dedupe.ts): contract id -> the key of
   * the drift last notified; empty when none. Not guarded by the tenant's lock: `drift` without
   * `--fix` takes none.
   */
  readDriftKeys(tenant: string): Promise<DriftKeys>;
  /** The tenants whose drift memory holds a key, sorted; a tenant may have it before it has any record (`drift` runs before the first apply). */
  listDriftTenants(): Promise<string[]>;
  /** Remembers (a key) or forgets (null) the drift of each contract named; the others keep theirs. Durable when it resolves. */
  writeDriftKeys(tenant: string, changes: DriftKeyChanges): Promise<void>;
  /**
   * Shared runs (`--shard auto`): only a store every worker reaches and that notices a dead worker
   * has them (PostgreSQL); undefined for the others.
   */
  readonly sharedRuns?: SharedRuns;
  /**
   * Lets go of what the store holds open (connections; locks still held are released). Every
   * command that opens a store calls it when done; idempotent. Nothing to do for memory and files.
   */
  close(): Promise<void>;
}
