/**
 * The drift run: every managed contract read live and compared with the desired state, each
 * difference judged against the state store's record of the last apply; with `fix`, the same plan
 * is sent through apply's lanes, so what is reported is exactly what was corrected.
 */
import { createDriftReport } from '../drift/create-report.ts';
import { withAttributions } from '../drift/with-attributions.ts';
import type { Config } from '../config/types.ts';
import type { DeliveryWarning } from '../diagnostic/delivery-warning.ts';
import type { DriftReport } from '../drift/types.ts';
import type { KnownContracts } from '../model/types.ts';
import { StateFormatError } from '../state/file-format.ts';
import { PostgresStateError } from '../state/postgres/errors.ts';
import type { InterruptedCount } from '../apply/interrupted.ts';
import type { RunReport } from '../apply/run-report.ts';
import type { Scope } from '../auth/index.ts';
import { createPlan } from '../plan/create-plan.ts';
import type { PlanDocument } from '../plan/types.ts';
import { removalLimits, runPipeline, type PipelineRunRequest, type PipelineRunResult, type SharedTenantRun } from './pipeline-run.ts';
import { openSharedRun, sharedTenantRun, sharedTenantsOf } from './shared-workers.ts';
import { overrideProblem, runChecksOf } from './checks.ts';
import { desiredProblems, readWholeInput, withRunInput, type RunTargeting } from './input.ts';
import { endingOf, SHARED_NEEDS_POSTGRES, tenantResultOf, workerReport, workShared } from './shared-run.ts';
import type { LazyStore } from './lazy-store.ts';
import { exportRunTelemetry, withRequestRecorder } from './telemetry-run.ts';
import type { RunEffects, RunInvalid, RunRefused, RunUnread, SendingRequest } from './types.ts';

export interface DriftRequest extends SendingRequest {
  readonly kind: 'drift';
  /** `report`: read and compare only; `fix`: also send the corrections and record them (the removal guard holds). */
  readonly mode: 'report' | 'fix';
}

export type DriftRunOutcome =
  | RunUnread
  | RunInvalid
  | RunRefused
  | {
      readonly kind: 'checked';
      readonly drift: DriftReport;
      /** The fix's run: what it sent. */
      readonly run: RunReport;
      readonly cancelled: boolean;
      readonly targeting?: RunTargeting;
      readonly warnings: readonly string[];
      /** The fix was stopped (`effects.signal`): what it sent and did not. */
      readonly interrupted?: InterruptedCount;
    };

export async function runDrift(request: DriftRequest, given: RunEffects): Promise<DriftRunOutcome> {
  // With OTEL_* set, the run's reads and PATCHes are recorded for its trace.
  const effects = withRequestRecorder(given);
  const fix = request.mode === 'fix';
  effects.onEvent?.({ type: 'phase', phase: 'read-input' });
  const outcome = await withRunInput(effects, 'drift', request, async (opened, store): Promise<DriftRunOutcome> => {
    const shared = request.selection?.shard === 'auto';
    if (shared && (opened.config.state.backend !== 'postgres' || !fix)) {
      return {
        kind: 'bad-request',
        message: fix ? SHARED_NEEDS_POSTGRES : '--shard auto shares a run that sends between workers; drift without --fix sends nothing: use --shard I/N',
      };
    }
    const input = await readWholeInput(opened, { describeIncremental: false, records: fix });
    const invalid = desiredProblems(input);
    if (invalid) return invalid;
    // An empty shard still reports (no drift), so that a job reading --report finds one.
    effects.onEvent?.({ type: 'input', ...(input.shard ? { shard: input.shard } : {}) });
    const { config, contractSets, source } = input;
    const overridden = overrideProblem(input.policies, request.overrides);
    if (overridden !== undefined) return { kind: 'refused', message: overridden };
    if (config.api.read === undefined) {
      return {
        kind: 'refused',
        message:
          'drift detection reads each managed contract live and compares it with git, so it needs reads; ' +
          'configure api.read in the engine config (e.g. read: { path: "/contract/{id}" }). Nothing was sent.',
      };
    }
    // Read before the run: with --fix the run rewrites these records, and the cause of a drift is
    // judged against what was applied before it. (A concurrent apply between this read and the
    // fix's lock can only make a cause stale, never what is sent: the fix re-reads under the lock.)
    const lastApplied = new Map<string, KnownContracts>();
    const tokens: Scope[] = fix ? ['core:read', 'core:write'] : ['core:read'];
    function fixRequest(sets: typeof contractSets, sharedRun?: SharedTenantRun): PipelineRunRequest {
      return {
        command: 'drift --fix',
        // Without --fix: learn (live), plan and check only; nothing locked or written.
        composition: fix ? 'apply' : 'preview',
        ...(sharedRun ? { shared: sharedRun } : {}),
        tokenScopes: { tokens },
        ...(input.targeting ? { targeting: input.targeting } : {}),
        options: {
          config,
          contractSets: sets,
          source,
          refresh: true,
          lockTimeoutMs: request.lockTimeoutMs,
          uncommitted: input.committed === false,
          ...(input.targeting ? { narrowed: input.targeting.narrowed } : {}),
          ...(fix ? { removals: removalLimits(request.removals, config.safety) } : {}),
          checks: runChecksOf(input.policies, effects, request.overrides),
        },
        async before(stateStore) {
          for (const tenant of new Set(sets.map((set) => set.tenant))) {
            const managed = new Set(sets.filter((set) => set.tenant === tenant).flatMap((set) => set.contracts.map((contract) => contract.id)));
            try {
              lastApplied.set(tenant, await stateStore.readTenant(tenant, managed));
            } catch (error) {
              if (!(error instanceof StateFormatError) && !(error instanceof PostgresStateError)) throw error;
              return { kind: 'refused', message: `cannot read the state store: ${error.message}; nothing read` };
            }
          }
          return undefined;
        },
      };
    }
    let sent: Sent;
    if (shared) {
      // Every drift --fix worker reads live state per tenant anyway; each validates the whole desired state (read above) and joins.
      const opening = await openSharedRun('drift --fix', { removals: request.removals }, opened, effects, store);
      if ('kind' in opening) return opening;
      const joined = await opening.runs.join({ ...opening.start, tenants: sharedTenantsOf(opened, input) });
      const sharedRun = await sharedTenantRun(opening, opened.config, joined.runId, tokens);
      const worked = await workShared({
        ...opening.work,
        joined,
        validated: 'here',
        runTenant: (tenant, _files, ending) =>
          runPipeline(
            fixRequest(
              contractSets.filter((set) => set.tenant === tenant),
              sharedRun,
            ),
            endingOf(opening.effects, opened.config, ending),
            store,
          ),
        resultOf(outcome, tenant) {
          return 'kind' in outcome ? { changed: 0, applied: 0, failed: 0, error: outcome.message } : tenantResultOf(outcome.report, tenant);
        },
      });
      sent = combineSent(worked.outcomes, joined.runId, opening.startedAt, new Date(effects.clock.now()).toISOString(), source);
    } else {
      sent = await runPipeline(fixRequest(contractSets), effects, store);
    }
    if ('kind' in sent) return sent;
    let drift = createDriftReport({ plan: sent.plan, run: sent.report, lastApplied, fix });
    // Who caused it, and who hears of it: after the run, from what it returned; never its result.
    if (!sent.cancelled && sent.interrupted === undefined && effects.signal?.aborted !== true) {
      drift = await attributeAndTell(drift, { config, plan: sent.plan, ...(fix ? { fixRun: sent.report } : {}) }, effects, store);
    }
    return {
      kind: 'checked',
      drift,
      run: sent.report,
      cancelled: sent.cancelled,
      ...(input.targeting ? { targeting: input.targeting } : {}),
      warnings: sent.warnings,
      ...(sent.interrupted ? { interrupted: sent.interrupted } : {}),
    };
  });
  if (outcome.kind === 'checked') await exportRunTelemetry(outcome, effects);
  return outcome;
}
type Sent = PipelineRunResult;

/**
 * The drift report with who caused each drifted field (`api.audit`) and the warnings of what could
 * not be read or told (`notify:`). Each part is loaded only when configured: the audit reader and
 * the senders are not every drift's.
 */
async function attributeAndTell(
  report: DriftReport,
  run: { readonly config: Config; readonly plan: PlanDocument; readonly fixRun?: RunReport },
  effects: RunEffects,
  store: LazyStore,
): Promise<DriftReport> {
  const { config } = run;
  const attribution = config.api.audit === undefined ? undefined : await (await import('./drift-attribution.ts')).attributeDriftRun(report, config, effects);
  const drift = attribution === undefined ? report : withAttributions(report, attribution.attributions);
  const stateStore = (config.notify ?? []).length === 0 ? undefined : await store.get();
  let told: readonly DeliveryWarning[] = [];
  if (stateStore !== undefined && typeof stateStore !== 'string') {
    const { notifyDrift } = await import('./notify-run.ts');
    told = await notifyDrift({ ...run, drift, store: stateStore, ...(attribution === undefined ? {} : { attributions: attribution.attributions }) }, effects);
  }
  const warnings = [...(attribution?.warnings ?? []), ...told];
  return warnings.length === 0 ? drift : { ...drift, warnings };
}

/** A shared drift --fix worker's tenants, each sent as a run of its own: one plan and one report of them all. */
function combineSent(outcomes: readonly Sent[], runId: string, startedAt: string, finishedAt: string, source: PlanDocument['source']): Sent {
  const refused = outcomes.find((outcome) => 'kind' in outcome);
  if (refused !== undefined) return refused;
  const sent = outcomes.flatMap((outcome) => ('kind' in outcome ? [] : [outcome]));
  const first = sent[0];
  return {
    plan: { ...(first?.plan ?? createPlan([], new Map(), { createdAt: startedAt, source })), tenants: sent.flatMap((outcome) => outcome.plan.tenants) },
    report: workerReport(
      sent.map((outcome) => outcome.report),
      { runId, startedAt, finishedAt, source },
    ),
    cancelled: false,
    warnings: sent.flatMap((outcome) => outcome.warnings),
  };
}
