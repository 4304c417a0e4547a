/** The JSON run report (`apply --report FILE`) and the summary printed after a run. */
import type { RunWarning } from '../auth/rotation-overlap.ts';
import type { DeliveryWarning } from '../diagnostic/delivery-warning.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { PlanSource } from '../plan/types.ts';
import { renderFindingsText } from '../plan/render-findings.ts';
import { plural } from '../text/plural.ts';
import { escapeForTerminal } from '../text/text-escape.ts';

export const RUN_REPORT_VERSION = 1;

/**
 * `stale`: a contract of a saved plan (`apply PLAN.json`) that was not sent because planning it
 * again no longer gives the reviewed ops from the reviewed known state.
 * `not-on-service`: its read or its PATCH was answered 404. The service publishes no create
 * endpoint: contract-sync manages contracts that exist (docs/architecture.md section 2).
 */
export type ContractResultOutcome = 'applied' | 'failed' | 'unknown' | 'skipped' | 'stale' | 'not-on-service';

/** Why a contract is `not-on-service`, for its line in every report. */
export function notOnServiceReason(contractId: string, request: 'read' | 'patch'): string {
  return `the service has no contract ${contractId} (its ${request} was answered 404); contract-sync manages contracts that exist and cannot create one: create it in the service, or remove it from the desired state`;
}

/** `1 contract not on the service`, `2 contracts not on the service`. */
export function notOnServiceText(count: number): string {
  return `${count} contract${count === 1 ? '' : 's'} not on the service`;
}

export function countNotOnService(report: RunReport): number {
  return report.tenants.reduce((sum, tenant) => sum + tenant.failures.filter((failure) => failure.outcome === 'not-on-service').length, 0);
}

export interface ContractResult {
  readonly contractId: string;
  readonly file: string;
  readonly line: number;
  readonly outcome: ContractResultOutcome;
  /** Ops planned for the contract. */
  readonly ops: number;
  /** HTTP status of the last failure; null when there was no response or no failure. */
  readonly status: number | null;
  readonly reason?: string;
}

export interface TenantReport {
  readonly tenant: string;
  /** Contracts in the desired state. */
  readonly contracts: number;
  /** Contracts that needed a change. */
  readonly changed: number;
  readonly applied: number;
  readonly ops: number;
  readonly requests: number;
  readonly retries: number;
  readonly throttles: number;
  /** Every contract that did not end applied (failed, unknown, skipped or stale), in plan order. */
  readonly failures: readonly ContractResult[];
  /** A problem of the whole tenant (lock, token), when there was one. */
  readonly error?: string;
}

export interface RunReport {
  readonly version: typeof RUN_REPORT_VERSION;
  /** Also sent as X-Correlation-Id, so the service's audit events lead back here. */
  readonly runId: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly dryRun: boolean;
  readonly source: PlanSource;
  readonly tenants: readonly TenantReport[];
  /** What the run says beyond its outcomes (a previousClientSecret used past the overlap, a notification not delivered); absent when nothing. */
  readonly warnings?: readonly (RunWarning | DeliveryWarning)[];
  /** What the run's checks found that no outcome shows (policy rules, a library caller's checks); absent when nothing. */
  readonly findings?: readonly Finding[];
  readonly summary: {
    readonly tenants: number;
    readonly changed: number;
    readonly applied: number;
    readonly failed: number;
    readonly ops: number;
    readonly requests: number;
    readonly retries: number;
  };
}

export function summarise(tenants: readonly TenantReport[]): RunReport['summary'] {
  let changed = 0;
  let applied = 0;
  let failed = 0;
  let ops = 0;
  let requests = 0;
  let retries = 0;
  for (const tenant of tenants) {
    changed += tenant.changed;
    applied += tenant.applied;
    failed += tenant.failures.length;
    ops += tenant.ops;
    requests += tenant.requests;
    retries += tenant.retries;
  }
  return { tenants: tenants.length, changed, applied, failed, ops, requests, retries };
}

/** `2 contracts changed`, `1 of 2 contracts changed`; never `0 of 0`. */
function countChanged(applied: number, changed: number, verb: string): string {
  if (changed === 0) return `no contract ${verb}`;
  return applied === changed ? `${plural(changed, 'contract')} ${verb}` : `${applied} of ${plural(changed, 'contract')} ${verb}`;
}

/** `3 ops, 2 requests, 1 retry`. */
function traffic(counts: { readonly ops: number; readonly requests: number; readonly retries: number }): string {
  return `${plural(counts.ops, 'op')}, ${plural(counts.requests, 'request')}, ${plural(counts.retries, 'retry', 'retries')}`;
}

/** A contract skipped because its tenant could not start (engine/pipeline/compose.ts says so in its reason). */
function isUnstarted(failure: ContractResult): boolean {
  return failure.outcome === 'skipped' && failure.reason?.endsWith('could not start') === true;
}

/** Failures without an answer whose reason several contracts of a tenant share (no request path in it): counted by tenant and reason. */
function sameFailures(report: RunReport): Map<string, number> {
  const counts = new Map<string, number>();
  for (const tenant of report.tenants) {
    for (const failure of tenant.failures) {
      if (failure.status !== null || failure.outcome !== 'failed' || failure.reason === undefined) continue;
      const key = `${tenant.tenant}\n${failure.reason}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return new Map([...counts].filter(([, count]) => count > 1));
}

/** A tenant that did not start before anything was planned (no token): nothing planned, read or sent, for one reason. */
function notStarted(tenant: TenantReport): boolean {
  return tenant.error !== undefined && tenant.changed === 0 && tenant.requests === 0 && tenant.failures.every(isUnstarted);
}

/** The human summary: one line per tenant, then one line per failure. */
export function renderRunSummary(report: RunReport): string {
  const lines: string[] = [];
  const verb = report.dryRun ? 'would change' : 'changed';
  for (const tenant of report.tenants) {
    const failed = tenant.failures.length;
    if (notStarted(tenant)) {
      lines.push(`${tenant.tenant}: not started, ${plural(failed, 'contract')} not sent: ${escapeForTerminal(tenant.error!)}`);
      continue;
    }
    if (tenant.changed === 0 && failed === 0 && tenant.error === undefined) {
      lines.push(`${tenant.tenant}: no changes${tenant.requests > 0 ? ` (${plural(tenant.requests, 'request')})` : ''}`);
      continue;
    }
    const missing = tenant.failures.filter((failure) => failure.outcome === 'not-on-service').length;
    const problems = failed > 0 ? `, ${failed} failed${missing > 0 ? ` (${notOnServiceText(missing)})` : ''}` : '';
    lines.push(`${tenant.tenant}: ${countChanged(tenant.applied, tenant.changed, verb)}, ${traffic(tenant)}${problems}`);
    if (tenant.error !== undefined) lines.push(`  ${escapeForTerminal(tenant.error)}`);
  }
  const failures = report.tenants.flatMap((tenant) => tenant.failures.map((failure) => ({ tenant: tenant.tenant, failure })));
  // A tenant that did not start is said on its own line above, whole.
  if (report.tenants.some((tenant) => tenant.failures.length > 0 && !notStarted(tenant))) {
    lines.push('', 'Failures:');
    // A tenant that could not start sent none of its contracts, for the one reason printed above: one line, not one per contract.
    const unstarted = new Set(report.tenants.filter((tenant) => tenant.error !== undefined).map((tenant) => tenant.tenant));
    for (const tenant of report.tenants.filter((each) => !notStarted(each))) {
      const unsent = unstarted.has(tenant.tenant) ? tenant.failures.filter(isUnstarted).length : 0;
      if (unsent > 0) lines.push(`  ${tenant.tenant}: ${plural(unsent, 'contract')} not sent: the tenant could not start (see above)`);
    }
    // The same failure of many contracts (no answer: the service cannot be reached) is one line for them all.
    const alike = sameFailures(report);
    const said = new Set<string>();
    for (const { tenant, failure } of failures) {
      if (unstarted.has(tenant) && isUnstarted(failure)) continue;
      const same = alike.get(`${tenant}\n${failure.reason}`);
      if (same !== undefined && failure.status === null && failure.outcome === 'failed') {
        if (!said.has(`${tenant}\n${failure.reason}`)) lines.push(`  ${tenant}: ${plural(same, 'contract')} failed: ${escapeForTerminal(failure.reason!)}`);
        said.add(`${tenant}\n${failure.reason}`);
        continue;
      }
      // A stale contract's reason starts with "stale plan:" already.
      const status =
        failure.outcome === 'not-on-service'
          ? 'not on the service'
          : failure.status !== null
            ? String(failure.status)
            : failure.outcome === 'stale'
              ? 'refused'
              : failure.outcome;
      lines.push(
        `  ${tenant} ${escapeForTerminal(failure.contractId)} (${escapeForTerminal(failure.file)}:${failure.line}) ${status}: ${escapeForTerminal(failure.reason ?? failure.outcome)}`,
      );
    }
  }
  if (report.warnings !== undefined && report.warnings.length > 0) {
    lines.push('', 'Warnings:', ...report.warnings.map((warning) => `  ${warning.message}`));
  }
  const findings = renderFindingsText(report.findings);
  if (findings !== '') lines.push(findings.trimEnd());
  const { summary } = report;
  const run = report.dryRun ? 'Dry run' : 'Apply';
  const tenantFailed = report.tenants.some((tenant) => tenant.error !== undefined);
  if (summary.changed === 0 && summary.failed === 0 && !tenantFailed) {
    const requests = summary.requests > 0 ? ` (${plural(summary.requests, 'request')})` : '';
    const planned = report.tenants.length === 0 ? 'no contract was planned' : 'every contract planned already matches its desired state';
    lines.push('', `${run}: nothing to do; ${planned}${requests}.`);
    return `${lines.join('\n')}\n`;
  }
  const staleCount = failures.filter(({ failure }) => failure.outcome === 'stale').length;
  const missingCount = countNotOnService(report);
  const notes = [
    ...(staleCount > 0 ? [`${staleCount} refused as stale: run contract-sync plan again`] : []),
    ...(missingCount > 0 ? [notOnServiceText(missingCount)] : []),
  ];
  const noted = notes.length > 0 ? ` (${notes.join('; ')})` : '';
  const failedText = summary.failed > 0 ? `, ${summary.failed} failed${noted}` : '';
  lines.push('', `${run}: ${countChanged(summary.applied, summary.changed, verb)}, ${traffic(summary)}${failedText}.`);
  return `${lines.join('\n')}\n`;
}

/** The run's warnings, for the report: `{warnings}` when there are any, else nothing (the report stays as it was). */
export function runWarnings(...sources: readonly ({ warnings?(): readonly RunWarning[] } | undefined)[]): { warnings?: readonly RunWarning[] } {
  const warnings = sources.flatMap((source) => source?.warnings?.() ?? []);
  const once = [...new Map(warnings.map((warning) => [`${warning.code} ${warning.tenant}`, warning])).values()];
  return once.length > 0 ? { warnings: once } : {};
}
