/** Adapter: stores a finished run in the state store's run history (docs/architecture.md section 7). */
import type { RunReport, TenantReport } from '../apply/run-report.ts';
import type { Logger } from '../log/logger.ts';
import { policySummary } from '../plan/policy-findings.ts';
import { startedByFromEnv, type HistoryCommand, type HistoryOverride, type RunHistoryEntry, type StartedBy } from '../state/history.ts';
import type { SharedTenantResult } from '../state/shared-run.ts';
import type { StateStore } from '../state/types.ts';

/** The history entry of a finished run. */
export function historyEntryOf(report: RunReport, command: HistoryCommand, startedBy: StartedBy): RunHistoryEntry {
  return {
    runId: report.runId,
    command,
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    commit: report.source.commit,
    startedBy,
    tenants: report.tenants.map((tenant) => ({ tenant: tenant.tenant, ...historyCountsOf(tenant) })),
    ...overridesOf(report),
    ...(report.findings === undefined || report.findings.length === 0 ? {} : { policy: policySummary(report.findings) }),
  };
}

/** A tenant's counts in the history, from its report: what it changed, applied and failed, and of the failed, those left unknown. */
export function historyCountsOf(tenant: TenantReport): SharedTenantResult {
  const unknown = tenant.failures.filter((failure) => failure.outcome === 'unknown').length;
  return {
    changed: tenant.changed,
    applied: tenant.applied,
    failed: tenant.failures.length,
    ...(unknown === 0 ? {} : { unknown }),
    ...(tenant.error === undefined ? {} : { error: tenant.error }),
  };
}

/** The policy findings the run lifted, for its history entry: `{overrides}` when there are any. */
function overridesOf(report: RunReport): { overrides?: HistoryOverride[] } {
  const overrides = (report.findings ?? []).flatMap((finding) =>
    finding.overridden === undefined
      ? []
      : [
          {
            policy: finding.check,
            tenant: finding.tenant,
            ...(finding.contractId === undefined ? {} : { contractId: finding.contractId }),
            ...finding.overridden,
          },
        ],
  );
  return overrides.length > 0 ? { overrides } : {};
}

/**
 * Appends the run to the history. The run is over and recorded contract by contract already: a
 * failure here is a warning (logged, and said on `warn`) and never changes how the run ended.
 */
export async function recordRunHistory(
  store: StateStore,
  report: RunReport,
  run: {
    readonly command: HistoryCommand;
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly logger: Logger;
    readonly warn: (line: string) => void;
  },
): Promise<void> {
  try {
    await store.appendHistory(historyEntryOf(report, run.command, startedByFromEnv(run.env)));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    run.logger.warn({ runId: report.runId, reason }, 'run history not written');
    run.warn(`warning: the run history could not be written (${reason}); the run itself is recorded\n`);
  }
}
