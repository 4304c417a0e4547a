/**
 * Shared runs (`--shard auto`): any number of identical workers share one run of apply or
 * drift --fix through the state store, each taking the next tenant no worker has finished,
 * largest first, until none is left (docs/architecture.md section 7). Only a store that every
 * worker reaches and that notices a dead worker can hold a shared run: the PostgreSQL store
 * (engine/state/postgres/shared-runs.ts). Types only.
 */
import type { HistoryCommand, HistoryTenant, StartedBy } from './history.ts';

/** What a worker brings to a run: the run's key (the same for every worker of one run) and its tenants. */
export interface SharedRunStart {
  /** What the workers agree on without talking: a hash of the command, the commit and the selection. */
  readonly key: string;
  readonly command: HistoryCommand;
  readonly commit: string;
  /** This worker's run id; the first worker's becomes the run's. */
  readonly runId: string;
  readonly startedAt: string;
  readonly startedBy: StartedBy;
  /**
   * Every tenant of the run, with its size (contracts to plan; the largest is taken first) and the
   * desired-state files that declare it. Empty from a worker that joins a run already begun.
   */
  readonly tenants: readonly SharedRunTenant[];
}

export interface SharedRunTenant {
  readonly tenant: string;
  readonly size: number;
  /** Left out when the worker read only some files (an incremental run): the others then read the whole desired state. */
  readonly files?: readonly string[];
}

/** The run as the store keeps it: the first worker's id and start. */
export interface SharedRunJoined {
  readonly runId: string;
  readonly startedAt: string;
  readonly tenants: number;
  /** Tenants finished when this worker joined. */
  readonly done: number;
}

/**
 * What a worker records of a tenant it finished: its own pass's line of the history entry, without
 * the worker. The entry counts `applied` from what every pass of the run recorded (the store keeps
 * each contract applied with the run's id), so a pass that finds the work done by a worker that
 * stopped does not make it zero.
 */
export type SharedTenantResult = Omit<HistoryTenant, 'tenant' | 'worker' | 'takenOverFrom'>;

/** A tenant taken: no other worker of the run takes it while this claim is open. */
export interface SharedRunClaim {
  readonly tenant: string;
  readonly size: number;
  /** The tenant's desired-state files, as the worker that began the run found them; undefined when not recorded. */
  readonly files: readonly string[] | undefined;
  /** Workers that took this tenant earlier in the run and did not finish it (they died). */
  readonly takenOverFrom: readonly string[];
  /**
   * Marks the tenant done (by this worker), writes the run's history entry, and ends the claim:
   * `done`; or `lost` when the claim's session ended before (a connection cut while the worker
   * lives): the tenant is not marked done, and another worker of the run takes it over, planning
   * from what this worker recorded.
   */
  finish(result: SharedTenantResult): Promise<'done' | 'lost'>;
  /** Ends the claim without finishing the tenant: another worker takes it. */
  abandon(): Promise<void>;
}

export type SharedRunNext =
  | { readonly kind: 'claimed'; readonly claim: SharedRunClaim }
  /** Every tenant left is taken by a worker that is alive, and stayed so while `next` waited: ask again, one of them may die. */
  | { readonly kind: 'wait'; readonly open: number }
  /** Every tenant of the run is done. */
  | { readonly kind: 'finished' };

export interface SharedRuns {
  /**
   * Whether a worker has joined the run: it read and validated the whole desired state first, and a
   * worker joining after it reads only the tenants it takes.
   */
  begun(key: string): Promise<boolean>;
  /**
   * Calls `begin` (which validates the whole desired state and joins the run with its tenants)
   * unless the run is begun, under a lock of the run's key: of the workers that start together,
   * one validates and begins the run while the others wait for it, then find it begun. Answers
   * undefined when the run was begun by another worker; a `begin` that does not join (the desired
   * state is invalid) leaves the next worker to find the run not begun and try itself.
   */
  beginOnce<T>(key: string, begin: () => Promise<T>): Promise<T | undefined>;
  /**
   * Opens the sessions a worker of `lanes` lanes uses (a claim session per lane, and the store's
   * lock session) ahead of its first claim, while the worker reads the desired state. Never
   * rejects: a session that cannot be opened is reported by the claim or lock that needs it.
   */
  prepare(lanes: number): Promise<void>;
  /** Creates the run, or joins the run another worker created; adds the tenants it does not have yet. */
  join(start: SharedRunStart): Promise<SharedRunJoined>;
  /**
   * Takes the largest tenant of the run that no worker has finished and no live worker holds; when
   * every tenant left is held, waits a while for one to be finished or freed. A worker running
   * several tenants at once gives each a `lane` (0, 1, ...): one claim per lane at a time.
   */
  next(key: string, worker: string, lane?: number): Promise<SharedRunNext>;
}
