/**
 * The runs' requests, effects, events and problems (docs/architecture.md section 4). A request says
 * which run it is (`kind`) and carries its explicit inputs; effects are everything a run may touch
 * of the world, injected; problems come back as values, and the caller decides what to print and
 * how the process ends.
 */
import type { ApplyProgress, Check, PhaseDetail, SendPreview, StagePhase } from '../pipeline/index.ts';
import type { PlanDocument } from '../plan/types.ts';
import type { ScopeTargeting } from '../plan/scope.ts';
import type { Clock } from '../io/clock.ts';
import type { Shard, ShardSelection } from '../desired/shard.ts';
import type { TargetPattern } from '../desired/target.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import type { GitError, GitErrorCode } from '../git/errors.ts';
import type { Logger, Redactor } from '../log/logger.ts';
import type { TenantScope } from '../apply/incremental.ts';
import type { DeliveryOptions } from '../notify/deliver.ts';
import type { RequestRecorder } from '../telemetry/requests.ts';

/** Where a run reads its repository: `--repo`, `--config` and `--ref` as given. */
export interface RunWhere {
  /** The repository, relative to the working directory (`.` by default). */
  readonly repo: string;
  /** A working-tree config file; without it `REPO/contract-sync.yaml` (at `ref` when there is one). */
  readonly config?: string;
  /** Read the desired state (and the config) from git objects at this ref, not the working tree. */
  readonly ref?: string;
}

/** Which tenants and contracts a run takes: `--tenant`, `--shard`, `--target`, `--exclude`. */
export interface RunSelection {
  /** Only these tenants (default: every configured one); each must be configured. */
  readonly tenants?: readonly string[];
  /** `I/N`: the tenants of one shard; `auto`: a worker of a shared run (engine/run/shared-run.ts). */
  readonly shard?: Shard | 'auto';
  /** Only these contracts, planned from every file (a targeted run is never incremental). */
  readonly targets?: readonly TargetPattern[];
  readonly excludes?: readonly TargetPattern[];
}

/** What the runs that may send (apply, drift --fix) are also asked. */
export interface SendingRequest {
  readonly where: RunWhere;
  readonly selection?: RunSelection;
  /** How long to wait for another run's lock on a tenant. */
  readonly lockTimeoutMs: number;
  /** The removal guard: `--max-removals` (default: the config's safety.maxRemovals) and `--allow-removals`. */
  readonly removals: { readonly max?: number; readonly allow: boolean };
  /** `--override-policy NAME ... --reason TEXT`: policy rules of action `override` lifted for this run, recorded in its history. */
  readonly overrides?: PolicyOverrideRequest;
}

export interface PolicyOverrideRequest {
  readonly policies: readonly string[];
  readonly reason: string;
}

/** The process a run lives in: its working directory and environment (secrets, CI variables). */
export interface RunPlace {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** What a run reports while it runs; the command layer renders it (progress line, CI log, JSON log). */
export type RunEvent =
  /** A stage begins (once per run); `known` with `read-known`: where the known state comes from. */
  | { readonly type: 'phase'; readonly phase: RunPhase; readonly known?: PhaseDetail['known'] }
  /** Incremental runs: what each tenant plans, once known (before anything is read live). */
  | { readonly type: 'scope'; readonly scope: TenantScope; readonly contracts: number }
  | ({ readonly type: 'progress' } & ApplyProgress)
  /** The input is read and valid: which tenants a sharded run took. */
  | { readonly type: 'input'; readonly shard?: ShardSelection }
  /** Before the first PATCH (also in a dry run): what would be sent. */
  | { readonly type: 'preview'; readonly preview: ApplyPreview }
  /** A worker of a shared run (`--shard auto`): the run it joined, each tenant it took. */
  | { readonly type: 'shared'; readonly shared: SharedRunEvent }
  /** Before anything is read: a tenant whose token could not be had, in one line (`tenant acme not started: ...`); the run goes on without it. */
  | { readonly type: 'not-started'; readonly tenant: string; readonly message: string }
  /** After the run, with OTEL_* set: its traces or metrics could not be exported (`telemetry not exported (...); the run's result stands`). */
  | { readonly type: 'telemetry-not-exported'; readonly message: string };

export type SharedRunEvent =
  | {
      readonly kind: 'joined';
      readonly runId: string;
      readonly worker: string;
      readonly tenants: number;
      readonly done: number;
      /** `here`: this worker validated the whole desired state; `by-first-worker`: a worker that joined before it did, and this one reads only the tenants it takes. */
      readonly validated: 'here' | 'by-first-worker';
    }
  | { readonly kind: 'took'; readonly worker: string; readonly tenant: string; readonly size: number; readonly takenOverFrom: readonly string[] }
  /** The tenant's claim ended with its database session before the tenant was marked done: another worker finishes it. */
  /** `error`: how the tenant's run ended when it did not end well (its lock lost, the store gone): what it applied may not all be recorded. */
  | { readonly kind: 'lost'; readonly worker: string; readonly tenant: string; readonly error?: string };

/** What a run that sends shows before its first PATCH: the plan to send, with what was selected and how. */
export interface ApplyPreview extends SendPreview {
  /** The plan shown: a saved plan as reviewed, else the plan just made. */
  readonly shown: PlanDocument;
  readonly saved: boolean;
  readonly targeting?: RunTargeting;
  /** Incremental runs: per tenant, its scope and how many of its contracts were planned. */
  readonly scopes: readonly { readonly scope: TenantScope; readonly contracts: number }[];
}

/** What a run says of its targeting (the scope stage's, engine/plan/scope.ts). */
export type RunTargeting = ScopeTargeting;

/** `read-input`: the config, the desired state read and validated (the scope and read stages); then the pipeline's stages. */
export type RunPhase = 'read-input' | StagePhase;

/** Everything a run may touch beyond its request, injected so that tests and library callers choose. */
export interface RunEffects extends RunPlace {
  readonly clock: Clock;
  /** Jitter of retries. */
  readonly random?: () => number;
  /** The run's log, given the run's id and the redactor that learns every secret the run reads. */
  readonly logger?: (run: { readonly runId: string; readonly redactor: Redactor }) => Logger;
  /** Called once, before the first PATCH, with what would be sent; false cancels the run (nothing sent or written). */
  readonly confirm?: (preview: ApplyPreview) => Promise<boolean>;
  readonly onEvent?: (event: RunEvent) => void;
  /**
   * Checks beyond the built-in ones (engine/pipeline/checks.ts), judged on every tenant's plan by
   * plan, apply and drift; their findings are in every output (the plan's and the report's
   * `findings`), and a deny refuses what the check says it refuses.
   */
  readonly checks?: readonly Check[];
  /**
   * Stops the run (the CLI aborts it on SIGINT/SIGTERM): no new lock is waited for and no new
   * request starts; requests in flight are answered and recorded, every lock is released, and the
   * outcome says what was sent and what not (`interrupted`). The next run plans what was not sent.
   */
  readonly signal?: AbortSignal;
  /** Notifications (`notify:`): their HTTP (default globalThis.fetch) and bounds (default: 10 s an attempt, 30 s for all of a run's). */
  readonly notify?: NotifyEffects;
  /** Where the run's reads and PATCHes are recorded for OpenTelemetry; set by the run when OTEL_* asks for an export. */
  readonly requests?: RequestRecorder;
}

export interface NotifyEffects {
  readonly fetch?: typeof fetch;
  readonly delivery?: Partial<Pick<DeliveryOptions, 'maxAttempts' | 'timeoutMs' | 'deadlineMs' | 'baseDelayMs' | 'maxDelayMs'>>;
}

/** A run that could not start: its input could not be read. */
export type RunUnread =
  | { readonly kind: 'git-error'; readonly code: GitErrorCode; readonly message: string }
  | { readonly kind: 'invalid-config'; readonly repoDir: string; readonly configFile: string; readonly diagnostics: readonly Diagnostic[] }
  /** A request the config does not allow (an unknown tenant, a target outside --tenant): a usage mistake. */
  | { readonly kind: 'bad-request'; readonly message: string };

/** What a run read of the desired state and its targets: with errors nothing is planned. */
export interface DesiredProblems {
  readonly configDiagnostics: readonly Diagnostic[];
  readonly errors: readonly Diagnostic[];
  readonly warnings: readonly Diagnostic[];
  /** A base git could not compare with: said after the desired state's errors, before its warnings. */
  readonly baseError?: GitError;
  readonly targeting?: { readonly unmatchedTargets: readonly string[]; readonly unmatchedExcludes: readonly string[] };
}

/** The desired state could not be planned (errors, a base git cannot compare with, unmatched targets). */
export interface RunInvalid {
  readonly kind: 'invalid-desired';
  readonly problems: DesiredProblems;
}

/** A one-line refusal before anything was sent (a state store that cannot be opened, reads not configured). */
export interface RunRefused {
  readonly kind: 'refused';
  readonly message: string;
}

export type { ShardSelection };
