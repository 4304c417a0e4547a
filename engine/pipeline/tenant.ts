/**
 * The per-tenant value the stages pass on, and the run context they read. Each stage takes a
 * tenant's value and gives the next one: locked (lock.ts), learnt (learn.ts), planned (plan.ts),
 * checked (check.ts); send.ts and record.ts end it. Nothing a stage changes lives in a closure:
 * what it learns travels in the value it returns, the run's counters in `context.progress`.
 */
import type PQueue from 'p-queue';
import type { ApiClient } from '../api/client.ts';
import type { ContractResult } from '../apply/run-report.ts';
import type { TenantLane } from '../apply/tenant-lane.ts';
import type { TenantTokens } from '../auth/index.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { Clock } from '../io/clock.ts';
import type { Logger } from '../log/logger.ts';
import type { ContractFields, KnownContracts } from '../model/types.ts';
import type { PlanContract, PlanSource } from '../plan/types.ts';
import type { StateStore, TenantLock, TenantRunRecord } from '../state/types.ts';
import type { Check } from './checks.ts';
import type { RunProgress } from './progress.ts';
import type { PipelineOptions } from './types.ts';

/** A desired contract and where it is declared. */
export interface DesiredContract {
  readonly fields: ContractFields;
  readonly file: string;
  readonly line: number;
}

/** What every stage of one run reads: the run's input and effects, and its progress. Built once by compose.ts. */
export interface RunContext {
  readonly options: PipelineOptions;
  readonly store: StateStore;
  readonly tokens: TenantTokens;
  readonly readTokens?: TenantTokens;
  readonly api: ApiClient;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
  readonly inFlight: PQueue;
  readonly progress: RunProgress;
  readonly source: PlanSource;
  readonly runId: string;
  readonly startedAt: string;
  /** Whether known state is read live: the options ask for it and reads are configured. */
  readonly refresh: boolean;
  /** The desired contracts by tenant, then by ContractId. */
  readonly desired: ReadonlyMap<string, ReadonlyMap<string, DesiredContract>>;
  /** The saved plan's contracts by tenant, then by ContractId (`apply PLAN.json`). */
  readonly reviewed?: ReadonlyMap<string, ReadonlyMap<string, PlanContract>>;
  /** Every check the run judges, built-in ones first. */
  readonly checks: readonly Check[];
}

/** A tenant as its run begins: its lane (reads and PATCHes go through it), and its lock when the run sends. */
export interface TenantStart {
  readonly tenant: string;
  readonly lane: TenantLane;
  readonly lock?: TenantLock;
}

/** A tenant whose known state is learnt (or that could not start: `error`, nothing is sent for it). */
export interface LearntTenant extends TenantStart {
  readonly known: KnownContracts;
  /**
   * The state store's records of the planned contracts, when `known` was read live by a run that
   * sends: a contract read live and found unchanged is recorded only when its record differs.
   */
  readonly stored?: KnownContracts;
  /** Contracts that could not be read: not planned, reported as failed. */
  readonly unreadable: ReadonlyMap<string, ContractResult>;
  /** Contracts an earlier run left uncertain, and why. */
  readonly uncertain: ReadonlyMap<string, string>;
  /** The tenant's run record as the previous run left it (read under the lock, by a run that sends). */
  readonly previousRun?: TenantRunRecord;
  /** A problem of the whole tenant: nothing is sent for it. */
  readonly error?: string;
}

/** A contract to send (from the fresh plan), or one of a saved plan that a check refused (as reviewed). */
export interface WorkItem {
  readonly contract: PlanContract;
}

/** What a tenant's run would send, in plan order. */
export interface TenantWork {
  /** A saved plan's reviewed `update` contracts, or the fresh plan's `update` contracts. */
  readonly items: readonly WorkItem[];
  /**
   * Contracts an earlier run left uncertain that plan as no change from the state store: read (and
   * re-planned from what is live) so that they settle instead of staying pending for ever.
   */
  readonly settle: readonly PlanContract[];
}

export interface PlannedTenant extends LearntTenant {
  /** The tenant's contracts as planned now. */
  readonly planned: readonly PlanContract[];
  readonly work: TenantWork;
}

/** A contract a check refused: not sent, reported with the check's outcome and the finding's message. */
export interface RefusedContract {
  readonly outcome: 'stale' | 'skipped';
  readonly reason: string;
}

export interface CheckedTenant extends PlannedTenant {
  readonly findings: readonly Finding[];
  /** Findings no outcome shows: rendered in every output's findings section. */
  readonly shownFindings: readonly Finding[];
  /** Denials of checks that stop the whole run (`denies: 'run'`): when any tenant has one, no tenant sends. */
  readonly runDenials: readonly Finding[];
  /** A check refused the whole tenant: nothing is sent for it; the reason is its error. */
  readonly refused?: { readonly check: string; readonly reason: string; readonly notSent: string };
  /** Contracts a check refused, by ContractId. */
  readonly refusedContracts: ReadonlyMap<string, RefusedContract>;
  /** The contracts to send: the work's items that no check refused. */
  readonly send: readonly PlanContract[];
}
