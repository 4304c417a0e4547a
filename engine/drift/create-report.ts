/**
 * createDriftReport: the plan and run report of a drift run (a live read of every managed
 * contract, with or without the fix) plus the last applied state -> the drift report. Pure.
 */
import type { ContractResult, RunReport, TenantReport } from '../apply/run-report.ts';
import { findingFails } from '../policy/finding-diagnostic.ts';
import type { PlanContract, PlanDocument, PlanTenant } from '../plan/types.ts';
import type { KnownState } from '../state/types.ts';
import { compareText } from '../text/compare-text.ts';
import { classifyChange } from './classify.ts';
import { DRIFT_REPORT_VERSION, type DriftContract, type DriftError, type DriftFix, type DriftReport, type DriftSummary, type DriftTenant } from './types.ts';

export interface DriftReportInput {
  /** Planned from live reads (`runApply` with refresh). */
  readonly plan: PlanDocument;
  /** The same run's report: unreadable contracts, tenant errors and, with `fix`, what was applied. */
  readonly run: RunReport;
  /** Each tenant's last applied records, read from the state store before the run. */
  readonly lastApplied: KnownState;
  /** The run sent the corrections (`--fix`). */
  readonly fix: boolean;
}

function fixOf(contract: PlanContract, failures: ReadonlyMap<string, ContractResult>): DriftFix {
  const failure = failures.get(contract.id);
  if (failure === undefined) return { outcome: 'applied', status: null };
  return { outcome: failure.outcome, status: failure.status, ...(failure.reason === undefined ? {} : { reason: failure.reason }) };
}

function driftTenant(planTenant: PlanTenant, run: TenantReport | undefined, input: DriftReportInput): DriftTenant {
  const planned = new Set(planTenant.contracts.map((contract) => contract.id));
  const failures = new Map((run?.failures ?? []).map((failure) => [failure.contractId, failure]));
  const errors: DriftError[] = [];
  // A failure of a contract the plan left out is a failed read: runApply plans only what it could read.
  for (const failure of run?.failures ?? []) {
    if (planned.has(failure.contractId)) continue;
    errors.push({
      id: failure.contractId,
      file: failure.file,
      line: failure.line,
      status: failure.status,
      reason: failure.reason ?? failure.outcome,
      ...(failure.outcome === 'not-on-service' ? { notOnService: true as const } : {}),
    });
  }
  const applied = input.lastApplied.get(planTenant.tenant);
  const contracts: DriftContract[] = [];
  for (const contract of planTenant.contracts) {
    // Only a live read shows drift: a tenant that could not start has no known state, and its plan would show everything.
    if (contract.action !== 'update' || contract.knownFrom !== 'live') continue;
    const record = applied?.get(contract.id)?.fields;
    contracts.push({
      id: contract.id,
      file: contract.file,
      line: contract.line,
      drift: contract.changes.map((change) => classifyChange(change, record)),
      ops: contract.ops,
      ...(input.fix ? { fix: fixOf(contract, failures) } : {}),
    });
  }
  return {
    tenant: planTenant.tenant,
    managed: planTenant.contracts.length + errors.length,
    contracts,
    errors,
    ...(run?.error === undefined ? {} : { error: run.error }),
  };
}

function summarise(tenants: readonly DriftTenant[], fix: boolean): DriftSummary {
  let contracts = 0;
  let drifted = 0;
  let changes = 0;
  let changedOutsideGit = 0;
  let notYetApplied = 0;
  let neverApplied = 0;
  let errors = 0;
  let fixed = 0;
  for (const tenant of tenants) {
    contracts += tenant.managed;
    drifted += tenant.contracts.length;
    errors += tenant.errors.length + (tenant.error === undefined ? 0 : 1);
    for (const contract of tenant.contracts) {
      if (contract.fix?.outcome === 'applied') fixed += 1;
      for (const item of contract.drift) {
        changes += 1;
        if (item.cause === 'changed-outside-git') changedOutsideGit += 1;
        else if (item.cause === 'not-yet-applied') notYetApplied += 1;
        else neverApplied += 1;
      }
    }
  }
  const base = { tenants: tenants.length, contracts, drifted, changes, changedOutsideGit, notYetApplied, neverApplied, errors };
  return fix ? { ...base, fixed, fixFailed: drifted - fixed } : base;
}

export function createDriftReport(input: DriftReportInput): DriftReport {
  const runTenants = new Map(input.run.tenants.map((tenant) => [tenant.tenant, tenant]));
  const planned = new Set(input.plan.tenants.map((tenant) => tenant.tenant));
  const tenants = input.plan.tenants.map((planTenant) => driftTenant(planTenant, runTenants.get(planTenant.tenant), input));
  // A tenant that did not start (no token) was not planned: not checked, for its one reason.
  for (const run of input.run.tenants) {
    if (!planned.has(run.tenant) && run.error !== undefined) tenants.push(driftTenant({ tenant: run.tenant, contracts: [] }, { ...run, failures: [] }, input));
  }
  tenants.sort((a, b) => compareText(a.tenant, b.tenant));
  return {
    version: DRIFT_REPORT_VERSION,
    createdAt: input.plan.createdAt,
    runId: input.run.runId,
    source: input.plan.source,
    fix: input.fix,
    tenants,
    summary: summarise(tenants, input.fix),
    ...(input.run.findings === undefined || input.run.findings.length === 0 ? {} : { findings: input.run.findings }),
  };
}

/** Drift left on the service after the run: found and not fixed. */
export function driftRemains(report: DriftReport): boolean {
  return report.tenants.some((tenant) => tenant.contracts.some((contract) => contract.fix?.outcome !== 'applied'));
}

/**
 * Anything that makes the run exit 1: a tenant not checked, a contract not read, a fix that failed,
 * a finding that denies (a policy rule's deny or override no exception covers: a drift run fails as
 * plan does, and with --fix nothing was sent).
 */
export function driftFailed(report: DriftReport): boolean {
  return report.summary.errors > 0 || (report.summary.fixFailed ?? 0) > 0 || (report.findings ?? []).some(findingFails);
}
