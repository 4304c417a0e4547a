/**
 * The plan run: desired state against the known state (the state store, or live reads), a plan
 * document; nothing is sent or written. A plan of every contract against the state store goes one
 * tenant at a time through the caller's sink (engine/pipeline/stream.ts) and is never held
 * whole; any other plan (incremental, live, or a caller without a sink) is one document.
 */
import type { TenantScope } from '../apply/incremental.ts';
import { readProblems } from '../apply/read-problems.ts';
import type { Config } from '../config/types.ts';
import type { PlanSink, PlanTrailer } from '../plan/plan-tenant.ts';
import { summaryWithFindings, withPlanFindings } from '../plan/policy-findings.ts';
import { runChecksOf } from './checks.ts';
import type { PlanDocument, PlanMadeWith, PlanSource } from '../plan/types.ts';
import { plural } from '../text/plural.ts';
import {
  desiredProblems,
  hasIncremental,
  readRunFiles,
  readScopes,
  readWholeInput,
  withRunInput,
  type OpenedInput,
  type RunInput,
  type RunTargeting,
} from './input.ts';
import { knownStateReader } from './known-state.ts';
import type { LazyStore } from './lazy-store.ts';
import type { RunEffects, RunInvalid, RunRefused, RunSelection, RunUnread, RunWhere, ShardSelection } from './types.ts';
import { packageVersion } from './version.ts';
import { otlpTargets } from '../telemetry/targets.ts';
import { requestRecorder } from '../telemetry/requests.ts';

export interface PlanRequest {
  readonly kind: 'plan';
  readonly where: RunWhere;
  readonly selection?: RunSelection;
  /** Mark what the change since this ref touches (merge-base semantics, like a pull request). */
  readonly base?: string;
  /** Where the known state comes from: the state store (no network, no credentials) or live reads. */
  readonly known: 'store' | 'live';
  /** `incremental` (only what changed since each tenant's last applied commit) or `every-contract` (`--full`). */
  readonly scope: 'incremental' | 'every-contract';
  /**
   * Where a caller that writes the plan as it comes (text, JSON) takes it: a plan of every contract
   * against the state store then goes through it one tenant at a time, and the result is `streamed`.
   */
  readonly sink?: PlanSink;
}

/** What every plan that got past reading its input says besides the plan. */
interface PlanRunCommon {
  /** Tenants planned in full, and why, when no tenant could be planned incrementally. */
  readonly notes: readonly string[];
  readonly shard?: ShardSelection;
  readonly targeting?: RunTargeting;
  /** The config's and the desired state's warnings. */
  readonly warnings: RunInvalid['problems'];
}

export type PlanRunOutcome =
  | RunUnread
  | (RunInvalid & { readonly notes: readonly string[] })
  | (RunRefused & PlanRunCommon)
  /** A live plan with contracts or tenants that could not be read: no plan, one line per problem. */
  | ({ readonly kind: 'unreadable'; readonly problems: readonly string[]; readonly summary: string } & PlanRunCommon)
  | ({ readonly kind: 'planned'; readonly plan: PlanDocument; readonly repoDir: string } & PlanRunCommon)
  /** Every tenant went through the sink; the trailer is what the document says after them. */
  | ({
      readonly kind: 'streamed';
      readonly source: PlanSource;
      readonly trailer: PlanTrailer;
      readonly unknown: number;
      readonly repoDir: string;
    } & PlanRunCommon);

/** Recorded for the reviewer, so that show PLAN.json renders what plan rendered (the markdown plan's header and notes). */
export function planMadeWith(config: Config): PlanMadeWith {
  return { version: packageVersion(), reads: config.api.read !== undefined, collections: config.collections, maxRemovals: config.safety.maxRemovals };
}

function fullNotes(scopes: ReadonlyMap<string, TenantScope> | undefined): string[] {
  if (scopes === undefined || hasIncremental(scopes)) return [];
  return [...scopes.values()].flatMap((scope) => (scope.kind === 'full' ? [`${scope.tenant}: every contract planned (${scope.reason})`] : []));
}

export async function runPlan(request: PlanRequest, given: RunEffects): Promise<PlanRunOutcome> {
  // With OTEL_* set, a plan's live reads are recorded, and the plan exported once made (telemetry-run.ts).
  const telemetry = otlpTargets(given.env) !== undefined;
  const effects = telemetry && given.requests === undefined ? { ...given, requests: requestRecorder() } : given;
  const start = effects.clock.now();
  const outcome = await planRun(request, effects);
  if (telemetry && (outcome.kind === 'planned' || outcome.kind === 'streamed')) {
    const { exportPlanTelemetry } = await import('./telemetry-run.ts');
    await exportPlanTelemetry(outcome, effects, { start, end: effects.clock.now() });
  }
  return outcome;
}

function planRun(request: PlanRequest, effects: RunEffects): Promise<PlanRunOutcome> {
  effects.onEvent?.({ type: 'phase', phase: 'read-input' });
  return withRunInput(effects, 'plan', request, async (opened, store) => {
    const scopes = request.scope === 'incremental' ? await readScopes(opened, await store.get(), 'any') : undefined;
    const notes = fullNotes(scopes);
    if (request.known === 'store' && request.sink !== undefined && !hasIncremental(scopes))
      return streamedPlan(opened, request, request.sink, store, notes, effects);
    const input = await readWholeInput(opened, {
      ...(scopes ? { scopes } : {}),
      describeIncremental: true,
      ...(request.base === undefined ? {} : { base: request.base }),
      records: false,
    });
    return documentPlan(input, request, store, notes, effects);
  });
}

function commonOf(input: RunInput, notes: readonly string[]): PlanRunCommon {
  const { configDiagnostics, desired, targeting, shard } = input;
  return {
    notes,
    ...(shard ? { shard } : {}),
    ...(targeting ? { targeting } : {}),
    warnings: { configDiagnostics, errors: [], warnings: desired.warnings, ...(targeting ? { targeting } : {}) },
  };
}

async function documentPlan(input: RunInput, request: PlanRequest, store: LazyStore, notes: readonly string[], effects: RunEffects): Promise<PlanRunOutcome> {
  const invalid = desiredProblems(input);
  if (invalid) return { ...invalid, notes };
  const common = commonOf(input, notes);
  const { config, contractSets, source, touched } = input;
  const createdAt = new Date(effects.clock.now()).toISOString();
  if (request.known === 'live') {
    if (config.api.read === undefined)
      return { kind: 'refused', message: '--refresh needs reads; configure api.read (e.g. read: { path: "/contract/{id}" }); no plan written', ...common };
    const live = await livePlan(input, effects);
    if ('problems' in live) return { kind: 'unreadable', ...live, ...common };
    return { kind: 'planned', plan: { ...live.plan, madeWith: planMadeWith(config) }, repoDir: input.repoDir, ...common };
  }
  const reader = knownStateReader(store);
  const { planStored } = await import('../pipeline/plan-stored.ts');
  const { plan, findings } = await planStored(
    contractSets,
    { createdAt, source, collections: config.collections, ...(touched ? { touched } : {}) },
    {
      readKnown: (tenant, only) => reader.read(tenant, only),
      checks: runChecksOf(input.policies, effects),
      onPhase: (phase, detail) => effects.onEvent?.({ type: 'phase', phase, ...(detail ?? {}) }),
    },
  );
  const problem = await reader.problem();
  if (problem !== undefined) return { kind: 'refused', message: problem, ...common };
  return { kind: 'planned', plan: withPlanFindings({ ...plan, madeWith: planMadeWith(config) }, findings), repoDir: input.repoDir, ...common };
}

/**
 * Against live reads: the tenant pipeline's preview (learn live, plan, check; no lock, no PATCH,
 * nothing written), so that the known state is read exactly as apply reads it. A plan missing a
 * contract or a tenant would look complete to its reviewer: any read problem is an error instead.
 */
async function livePlan(
  input: RunInput,
  effects: RunEffects,
): Promise<{ readonly plan: PlanDocument } | { readonly problems: string[]; readonly summary: string }> {
  const { config, contractSets, source, touched } = input;
  // Loaded here: a plan against the state store needs neither the HTTP client nor the OpenID client.
  const [{ previewTenants }, { createEngineSetup }, { emptyStateStore }, { countNotOnService, notOnServiceText }, { pipelineDeps }, first] = await Promise.all([
    import('../pipeline/compose.ts'),
    import('./engine-setup.ts'),
    import('../state/memory-store.ts'),
    import('../apply/run-report.ts'),
    import('./pipeline-run.ts'),
    import('./tokens-first.ts'),
  ]);
  const engine = createEngineSetup(effects, config, ['core:read']);
  // Fail early: every tenant's token before anything is read (a plan missing a tenant is no plan).
  const notStarted = await first.tenantsWithoutToken(engine.tokens, new Set(contractSets.map((set) => set.tenant)), config);
  if (notStarted.size > 0)
    return {
      problems: [...notStarted].map(([tenant, line]) => first.notStartedMessage(tenant, line)),
      summary: `${plural(notStarted.size, 'tenant')} not started: no plan written`,
    };
  const { plan, report } = await previewTenants(
    {
      config,
      contractSets,
      source,
      refresh: true,
      lockTimeoutMs: 0,
      runId: engine.runId,
      ...(touched ? { touched } : {}),
      checks: runChecksOf(input.policies, effects),
    },
    // A preview never touches the state store: it learns live.
    pipelineDeps(engine, effects, emptyStateStore()),
  );
  const problems = readProblems(report);
  if (problems.length === 0) return { plan };
  const missing = countNotOnService(report);
  const others = problems.length - missing;
  const summary = [...(missing > 0 ? [notOnServiceText(missing)] : []), ...(others > 0 ? [`${plural(others, 'problem')} reading the known state live`] : [])];
  return { problems, summary: `${summary.join(', ')}: no plan written` };
}

/** Every contract against the state store, one tenant at a time through `sink` (engine/pipeline/stream.ts). */
async function streamedPlan(
  opened: OpenedInput,
  request: PlanRequest,
  sink: PlanSink,
  store: LazyStore,
  notes: readonly string[],
  effects: RunEffects,
): Promise<PlanRunOutcome> {
  const files = await readRunFiles(opened, request.base);
  const known = knownStateReader(store);
  // Tenant by tenant, each read from the store, planned and checked before the next.
  effects.onEvent?.({ type: 'phase', phase: 'read-known', known: 'store' });
  effects.onEvent?.({ type: 'phase', phase: 'plan' });
  effects.onEvent?.({ type: 'phase', phase: 'check' });
  const { planByTenant } = await import('../pipeline/stream.ts');
  const result = await planByTenant(
    {
      files: files.files,
      config: opened.config,
      ...(opened.selected ? { tenants: opened.selected } : {}),
      targets: opened.targets,
      ...(files.base ? { base: files.base } : {}),
      createdAt: new Date(effects.clock.now()).toISOString(),
      source: files.source,
    },
    { readKnown: (tenant) => known.read(tenant), sink, checks: runChecksOf(opened.policies, effects) },
  );
  const { targeting, errors, warnings } = result;
  const { configDiagnostics, shard } = opened;
  const problems = { configDiagnostics, errors, warnings, ...(files.baseError ? { baseError: files.baseError } : {}), ...(targeting ? { targeting } : {}) };
  if (errors.length > 0 || files.baseError !== undefined || (targeting?.unmatchedTargets.length ?? 0) > 0) return { kind: 'invalid-desired', problems, notes };
  const common: PlanRunCommon = { notes, ...(shard ? { shard } : {}), ...(targeting ? { targeting } : {}), warnings: { ...problems, errors: [] } };
  const problem = await known.problem();
  if (problem !== undefined) return { kind: 'refused', message: problem, ...common };
  return {
    kind: 'streamed',
    source: files.source,
    trailer: {
      ...result.trailer,
      summary: summaryWithFindings(result.trailer.summary, result.findings),
      madeWith: planMadeWith(opened.config),
      ...(result.findings.length > 0 ? { findings: result.findings } : {}),
    },
    unknown: result.unknown,
    repoDir: opened.repoDir,
    ...common,
  };
}
