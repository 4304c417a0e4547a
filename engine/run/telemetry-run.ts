/**
 * OpenTelemetry for the runs that talk to the service: with OTEL_EXPORTER_OTLP_ENDPOINT (or a
 * per-signal endpoint) in the run's environment, a finished apply or drift exports its span, a span
 * per tenant and its metrics (engine/telemetry/). Without it nothing is loaded: the SDK is imported
 * here, on demand, and only then.
 */
import { driftFailed } from '../drift/create-report.ts';
import { planSignals, runSignals, type RunSignalInput, type RunSignals } from '../telemetry/run-signals.ts';
import type { PlanDocument, PlanSource } from '../plan/types.ts';
import type { PlanTrailer } from '../plan/plan-tenant.ts';
import { requestRecorder } from '../telemetry/requests.ts';
import { otlpTargets, type OtlpTargets } from '../telemetry/targets.ts';
import type { RunReport } from '../apply/run-report.ts';
import type { DriftReport } from '../drift/types.ts';
import type { RunEffects, RunPlace } from './types.ts';
import { packageVersion } from './version.ts';

/** The export's bound: a collector that hangs delays the run's end by at most this (plus a second). */
const EXPORT_TIMEOUT_MS = 5000;

/** What an apply that ran returns (ApplyRunOutcome's `applied`), as far as telemetry reads it. */
export interface AppliedRun {
  readonly kind: 'applied';
  readonly report: RunReport;
  readonly cancelled: boolean;
  readonly interrupted?: unknown;
  readonly behind: readonly unknown[];
}

/** What a drift that ran returns (DriftRunOutcome's `checked`), as far as telemetry reads it. */
export interface CheckedRun {
  readonly kind: 'checked';
  readonly drift: DriftReport;
  readonly run: RunReport;
  readonly cancelled: boolean;
  readonly interrupted?: unknown;
}

function signalInput(outcome: AppliedRun | CheckedRun): RunSignalInput {
  if (outcome.kind === 'applied') {
    const { report } = outcome;
    const result = outcome.cancelled
      ? 'cancelled'
      : outcome.interrupted !== undefined
        ? 'interrupted'
        : report.summary.failed > 0 || outcome.behind.length > 0 || report.tenants.some((tenant) => tenant.error !== undefined)
          ? 'failed'
          : 'succeeded';
    return { kind: 'apply', result, report };
  }
  const result = outcome.cancelled ? 'cancelled' : outcome.interrupted !== undefined ? 'interrupted' : driftFailed(outcome.drift) ? 'failed' : 'succeeded';
  return { kind: outcome.drift.fix ? 'drift --fix' : 'drift', result, report: outcome.run, drift: outcome.drift };
}

/** The run's effects, with a recorder of its requests when OTEL_* asks for an export (plain data: nothing of the SDK is loaded). */
export function withRequestRecorder(effects: RunEffects): RunEffects {
  return effects.requests !== undefined || otlpTargets(effects.env) === undefined ? effects : { ...effects, requests: requestRecorder() };
}

/** What an export needs of the run: where to send (its environment), what it recorded, its clock, and where to say that the export failed. */
type ExportPlace = Pick<RunPlace, 'env'> & Pick<RunEffects, 'requests' | 'clock' | 'onEvent'>;

/** Exports `signals`; a failure is one event (the run's result is not changed by it). */
async function exportSignals(signals: RunSignals, targets: OtlpTargets, place: ExportPlace): Promise<void> {
  const { exportRunSignals } = await import('../telemetry/otlp.ts');
  const problems = await exportRunSignals(signals, targets, { version: packageVersion(), timeoutMs: EXPORT_TIMEOUT_MS, clock: place.clock });
  if (problems.length > 0)
    place.onEvent?.({ type: 'telemetry-not-exported', message: `telemetry not exported (${problems.join('; ')}); the run's result stands` });
}

/** A run refused before it read anything has no report to tell of: only runs that ran are exported. */
export async function exportRunTelemetry(outcome: AppliedRun | CheckedRun, place: ExportPlace): Promise<void> {
  const targets = otlpTargets(place.env);
  if (targets === undefined) return;
  const requests = place.requests?.records;
  await exportSignals(runSignals({ ...signalInput(outcome), ...(requests === undefined ? {} : { requests }) }), targets, place);
}

/** What a plan that was made returns (PlanRunOutcome's `planned` and `streamed`), as far as telemetry reads it. */
export type MadePlan =
  { readonly kind: 'planned'; readonly plan: PlanDocument } | { readonly kind: 'streamed'; readonly source: PlanSource; readonly trailer: PlanTrailer };

/** A plan that was made: its span (per tenant, for a plan held whole), the contracts it planned and changed, its live reads. */
export async function exportPlanTelemetry(outcome: MadePlan, place: ExportPlace, times: { readonly start: number; readonly end: number }): Promise<void> {
  const targets = otlpTargets(place.env);
  if (targets === undefined) return;
  const requests = place.requests?.records;
  const planned =
    outcome.kind === 'planned'
      ? {
          commit: outcome.plan.source.commit,
          summary: outcome.plan.summary,
          tenants: outcome.plan.tenants.map((tenant) => ({
            tenant: tenant.tenant,
            contracts: tenant.contracts.length,
            changed: tenant.contracts.filter((contract) => contract.ops.length > 0).length,
          })),
        }
      : { commit: outcome.source.commit, summary: outcome.trailer.summary };
  await exportSignals(planSignals({ ...times, ...planned, ...(requests === undefined ? {} : { requests }) }), targets, place);
}
