/**
 * What the tenant pipeline (docs/architecture.md section 4) is given and gives back: a run's
 * options and effects, what it shows before sending, its progress and its result. The stages
 * themselves are the files beside this one; compose.ts composes them into the runs.
 */
import type PQueue from 'p-queue';
import type { ApiClient } from '../api/client.ts';
import type { InterruptedCount } from '../apply/interrupted.ts';
import type { ContractResult, RunReport } from '../apply/run-report.ts';
import type { TenantTokens } from '../auth/index.ts';
import type { Config } from '../config/types.ts';
import type { ContractSet } from '../desired/types.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { Clock } from '../io/clock.ts';
import type { Logger } from '../log/logger.ts';
import type { RemovalLimits } from '../plan/removal-guard.ts';
import type { PlanDocument, PlanSource, PlanTouched } from '../plan/types.ts';
import type { StateStore, TenantRunRecord } from '../state/types.ts';
import type { Check } from './checks.ts';

/** What a composition of the tenant pipeline is given: the run's input, and how it sends. */
export interface PipelineOptions {
  readonly config: Config;
  /** The desired state to apply, already narrowed to the selected tenants. */
  readonly contractSets: readonly ContractSet[];
  readonly source: PlanSource;
  /** Take known state from live reads (needs api.read) instead of the state store. */
  readonly refresh: boolean;
  readonly lockTimeoutMs: number;
  /** Also the X-Correlation-Id of every request. */
  readonly runId: string;
  /** With `source.base`: what the change since the base touched, marked in the plan. */
  readonly touched?: PlanTouched;
  /**
   * A saved plan to apply (`apply PLAN.json`), planned from the same desired state and known state
   * obtained the same way. Only its `update` contracts are sent, each only when planning it now
   * gives its `knownFingerprint` and exactly its ops; the others are refused as `stale` (the
   * saved-plan review, a check). Contracts it does not change are not sent.
   */
  readonly reviewed?: PlanDocument;
  /**
   * The desired state holds edits that `source.commit` does not (a working tree with uncommitted
   * changes): the run record then names no commit, so that the next incremental run plans every
   * contract instead of trusting a commit that was not what was applied.
   */
  readonly uncommitted?: boolean;
  /**
   * Incremental runs: per tenant, the only desired-state files read (see engine/apply/incremental.ts).
   * A contract left pending by an earlier run and declared elsewhere stays pending. A tenant
   * absent from the map was planned from every file.
   */
  readonly filesRead?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Targeted runs (`--target`, `--exclude`): tenants planned with some of their contracts left
   * out. Their run record keeps the commit (and planning fingerprint) it had: the contracts left
   * out were not applied at this commit. The pending entries of the planned contracts are updated;
   * those of the others are kept.
   */
  readonly narrowed?: ReadonlySet<string>;
  /**
   * The removal guard (a check): a tenant whose ops to send trip it is refused (nothing sent for
   * it, reported as its error); the other tenants go on. Left out, nothing is refused (the
   * library's default).
   */
  readonly removals?: RemovalLimits;
  /**
   * The commit check (a check judged under the lock, with the run record read there): what another
   * run recorded while this one waited (a newer commit applied) can refuse the tenant, whose reason
   * becomes its error (nothing sent for it). Only a run that sends takes locks and judges it.
   */
  readonly checkUnderLock?: (tenant: string, record: TenantRunRecord | undefined) => Promise<string | undefined>;
  /** Checks beyond the built-in ones (policy rules, a library caller's own), judged on every tenant's plan. */
  readonly checks?: readonly Check[];
}

/** The library's run (`runApply`): the pipeline's options, and which composition runs them. */
export interface ApplyRunOptions extends PipelineOptions {
  /**
   * true: plan (and read, with refresh) but send no PATCH, take no lock and write nothing
   * (`previewTenants`); false: go on to send (`applyTenants`). The stages never see it.
   */
  readonly dryRun: boolean;
}

/** What a run is about to send, once every tenant is planned and checked: what `confirm` is shown. */
export interface SendPreview {
  readonly plan: PlanDocument;
  /** What would be sent: tenants that could not start or are refused, and stale contracts, left out. */
  readonly sending: { readonly tenants: number; readonly contracts: number; readonly ops: number };
  /** Tenants a check refuses (the removal guard), and why (the message names the count, the tenant and the flag). */
  readonly refused: readonly { readonly tenant: string; readonly reason: string }[];
  /** Contracts that could not be read, and are therefore not in the plan. */
  readonly unreadable: readonly { readonly tenant: string; readonly result: ContractResult }[];
  /** What the checks found that no outcome shows (warnings, a caller's or a policy's findings), in tenant order. */
  readonly findings: readonly Finding[];
}

export interface ApplyProgress {
  /** `read`: the known state read live (before the plan); `send`: the PATCHes. Each step counts on its own. */
  readonly step: 'read' | 'send';
  readonly tenant: string;
  readonly contractId: string;
  /** How the contract's send ended; a read is `read`, or `failed` / `not-on-service`. */
  readonly outcome: ContractResult['outcome'] | 'read';
  /** Contracts of this step finished so far, and to do in all, over every tenant. */
  readonly done: number;
  readonly total: number;
}

/** The stages a run goes through, in order, each announced once as it begins (engine/run/types.ts renders them). */
export type StagePhase = 'lock' | 'read-known' | 'plan' | 'check' | 'confirm' | 'send' | 'record';

/** `read-known` (the learn stage) says where the known state comes from: the state store, or live reads (a progress line's worth). */
export interface PhaseDetail {
  readonly known: 'store' | 'live';
}

export interface ApplyRunDeps {
  readonly store: StateStore;
  readonly tokens: TenantTokens;
  /** Tokens with core:read for the reads of a run whose `tokens` lack it; see LaneOptions.readTokens. */
  readonly readTokens?: TenantTokens;
  readonly api: ApiClient;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly onProgress?: (progress: ApplyProgress) => void;
  /** Each stage as it begins, once per run (the stages of all tenants run side by side). */
  readonly onPhase?: (phase: StagePhase, detail?: PhaseDetail) => void;
  /**
   * The run's stop (engine/apply/interrupted.ts): once aborted no lock is waited for and no request
   * starts; answered PATCHes are recorded, the contracts not sent stay pending for the next run,
   * and every lock is released. Before the plan is sent, the run sends nothing.
   */
  readonly signal?: AbortSignal;
  /**
   * Called once, when every tenant is planned and checked and before anything is written or sent
   * (in a preview too, which sends nothing whatever the answer): where a command shows the plan and
   * asks. Resolving false cancels the run: nothing is sent or written, and every lock is released.
   */
  readonly confirm?: (preview: SendPreview) => Promise<boolean>;
  /** The queue of requests in flight across tenants (rate.maxInFlight); left out, the run makes its own. */
  readonly inFlight?: PQueue;
}

export interface ApplyRunResult {
  readonly plan: PlanDocument;
  readonly report: RunReport;
  /** `confirm` declined: nothing was sent or written. */
  readonly cancelled?: true;
  /** The signal aborted the run: what it sent and did not. */
  readonly interrupted?: InterruptedCount;
}
