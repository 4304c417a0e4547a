/**
 * What every run that goes through the tenants' lanes shares (apply, drift, and each tenant of a
 * shared run): the engine set up (tokens, API client, log), the state store opened, one
 * composition of the tenant pipeline run (engine/pipeline/compose.ts), and the run history written
 * after a run that sent. The run chooses its composition: `apply` (lock ... send, record), `dry-run`
 * (what the apply would do: learn, plan, check, the tenants judged together as the apply judges
 * them) or `preview` (learn, plan, check: drift's comparison). Neither of the last two locks,
 * sends or writes anything.
 */
import type PQueue from 'p-queue';
import type { InterruptedCount } from '../apply/interrupted.ts';
import type { RunReport } from '../apply/run-report.ts';
import type { Scope } from '../auth/index.ts';
import type { ApplyRunDeps, PipelineOptions, SendPreview } from '../pipeline/index.ts';
import type { RemovalLimits } from '../plan/removal-guard.ts';
import type { PlanDocument } from '../plan/types.ts';
import type { HistoryCommand } from '../state/history.ts';
import type { StateStore } from '../state/types.ts';
import type { EngineSetup } from './engine-setup.ts';
import type { LazyStore } from './lazy-store.ts';
import { recordRunHistory } from './record-history.ts';
import { notStartedMessage, notStartedReport, notStartedRun, tenantsWithoutToken, withNotStarted, withoutTenants } from './tokens-first.ts';
import type { ApplyPreview, RunEffects, RunRefused, RunTargeting, SendingRequest } from './types.ts';

/** What a run asks of the tenant pipeline: its composition, and the pipeline's options but the run id, which the engine setup makes. */
export interface PipelineRunRequest {
  readonly command: HistoryCommand;
  /**
   * `apply`: lock, learn, plan, check, confirm, send, record; `dry-run`: learn, plan, check, and what
   * the apply would send (a deny anywhere: nothing); `preview`: learn, plan, check, shown and never asked.
   */
  readonly composition: 'apply' | 'dry-run' | 'preview';
  readonly tokenScopes: { readonly tokens: readonly Scope[]; readonly reads?: readonly Scope[] };
  readonly options: Omit<PipelineOptions, 'runId'>;
  readonly previewScopes?: ApplyPreview['scopes'];
  readonly saved?: PlanDocument;
  readonly targeting?: RunTargeting;
  /** Called with the open store before anything is sent (drift reads the last applied records). */
  readonly before?: (store: StateStore) => Promise<RunRefused | undefined>;
  /** A tenant of a shared run (`--shard auto`): the run's id and the worker's in-flight queue; its history is written by the shared run. */
  readonly shared?: SharedTenantRun;
}

export interface SharedTenantRun {
  readonly runId: string;
  /** Shared by the tenants a worker runs at once: rate.maxInFlight holds for the worker. */
  readonly inFlight: PQueue;
  /** The worker's engine, for all its tenants: one discovery, a token cache per tenant, one API client's connections. */
  readonly engine: EngineSetup;
}

export type PipelineRunResult =
  | RunRefused
  | {
      readonly plan: PlanDocument;
      readonly report: RunReport;
      readonly cancelled: boolean;
      readonly warnings: readonly string[];
      readonly interrupted?: InterruptedCount;
    };

/**
 * Sets up the engine (tokens, API client, log), takes the state store and runs the tenants through
 * the request's composition; the run history is written after a run that sent (not a preview, not
 * a cancelled one).
 */
export async function runPipeline(request: PipelineRunRequest, effects: RunEffects, store: LazyStore): Promise<PipelineRunResult> {
  const sends = request.composition === 'apply';
  // Loaded here: the HTTP client and the OpenID client, only for runs that talk to the service.
  const [{ applyTenants, previewApply, previewTenants }, { createEngineSetup }, { createPlan }] = await Promise.all([
    import('../pipeline/compose.ts'),
    import('./engine-setup.ts'),
    import('../plan/create-plan.ts'),
  ]);
  const engine = request.shared?.engine ?? createEngineSetup(effects, request.options.config, request.tokenScopes.tokens);
  const opening = await store.get(engine.redactor);
  if (typeof opening === 'string') return { kind: 'refused', message: opening };
  const stateStore = opening;
  const refused = await request.before?.(stateStore);
  if (refused) return refused;
  // Fail early: every tenant's token before anything is read from the service (the local state store is
  // checked first); a tenant without one is left out, said on one line.
  const selected = [...request.options.contractSets.map((set) => set.tenant), ...(request.saved?.tenants.map((tenant) => tenant.tenant) ?? [])];
  const notStarted = await tenantsWithoutToken(engine.tokens, selected, request.options.config);
  for (const [tenant, line] of notStarted) effects.onEvent?.({ type: 'not-started', tenant, message: notStartedMessage(tenant, line) });
  const options = notStarted.size === 0 ? request.options : withoutNotStarted(request.options, notStarted);
  const saved =
    notStarted.size === 0 || request.saved === undefined ? request.saved : { ...request.saved, tenants: withoutTenants(request.saved.tenants, notStarted) };
  const unstarted = [...notStarted].map(([tenant, line]) => notStartedReport(tenant, line, request.options.contractSets));
  const readTokens = request.tokenScopes.reads === undefined ? undefined : engine.tokensFor(request.tokenScopes.reads);

  /** Before the first PATCH: the preview for the caller to show, then its answer when something would be sent. */
  async function confirm(preview: SendPreview): Promise<boolean> {
    const { targeting } = request;
    const full: ApplyPreview = {
      ...preview,
      shown: saved ?? preview.plan,
      saved: saved !== undefined,
      ...(targeting ? { targeting } : {}),
      scopes: request.previewScopes ?? [],
    };
    // Every tenant failed before its plan (the service cannot be reached): no plan to show; the report says why.
    const nothingPlanned = preview.plan.tenants.length === 0 && options.contractSets.length > 0 && saved === undefined;
    if (!nothingPlanned) effects.onEvent?.({ type: 'preview', preview: full });
    // A saved plan was reviewed when it was made: applied without asking, as Terraform does.
    const ask = sends && !(saved || preview.sending.ops === 0 || effects.confirm === undefined);
    return ask ? answerUnlessStopped(effects.confirm!(full), effects.signal) : true;
  }

  if (options.contractSets.length === 0 && (saved?.tenants.length ?? 0) === 0 && unstarted.length > 0) {
    // No tenant could start: no plan to show, nothing to ask.
    const startedAt = new Date(effects.clock.now()).toISOString();
    const plan = createPlan([], new Map(), { createdAt: startedAt, source: options.source });
    return {
      plan,
      report: notStartedRun({ runId: engine.runId, startedAt, source: options.source, dryRun: !sends }, unstarted),
      cancelled: false,
      warnings: [],
    };
  }
  const compose = { apply: applyTenants, 'dry-run': previewApply, preview: previewTenants }[request.composition];
  const composed = await compose(
    { ...options, runId: engine.runId },
    {
      ...pipelineDeps(engine, effects, stateStore),
      ...(readTokens ? { readTokens } : {}),
      confirm,
      ...(effects.signal ? { signal: effects.signal } : {}),
      ...(request.shared ? { inFlight: request.shared.inFlight } : {}),
    },
  );
  const { plan, cancelled, interrupted } = composed;
  const report = withNotStarted(composed.report, unstarted);
  const warnings: string[] = [];
  if (sends && !cancelled && request.shared === undefined)
    await recordRunHistory(stateStore, report, { command: request.command, env: effects.env, logger: engine.logger, warn: (line) => warnings.push(line) });
  return { plan, report, cancelled: cancelled === true, warnings, ...(interrupted ? { interrupted } : {}) };
}

/** The run's options without the tenants that did not start: neither planned nor, from a saved plan, sent. */
function withoutNotStarted(options: PipelineRunRequest['options'], notStarted: ReadonlyMap<string, string>): PipelineRunRequest['options'] {
  const { reviewed } = options;
  return {
    ...options,
    contractSets: withoutTenants(options.contractSets, notStarted),
    ...(reviewed ? { reviewed: { ...reviewed, tenants: withoutTenants(reviewed.tenants, notStarted) } } : {}),
  };
}

/** What every composition takes from the engine set up and the run's effects: tokens, the API client, the clock, the log, events. */
export function pipelineDeps(engine: EngineSetup, effects: RunEffects, store: StateStore): ApplyRunDeps {
  return {
    store,
    tokens: engine.tokens,
    api: engine.api,
    clock: effects.clock,
    random: effects.random ?? Math.random,
    logger: engine.logger,
    onProgress: (progress) => effects.onEvent?.({ type: 'progress', ...progress }),
    onPhase: (phase, detail) => effects.onEvent?.({ type: 'phase', phase, ...detail }),
  };
}

/** The confirmation's answer, or no as soon as the run is stopped (Ctrl-C at the question). */
function answerUnlessStopped(answer: Promise<boolean>, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal === undefined) return answer;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    function onAbort(): void {
      resolve(false);
    }
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The removal guard's limits of a run: `--max-removals` over the config's, and `--allow-removals`. */
export function removalLimits(removals: SendingRequest['removals'], safety: { readonly maxRemovals: number }): RemovalLimits {
  return { maxRemovals: removals.max ?? safety.maxRemovals, allow: removals.allow };
}
