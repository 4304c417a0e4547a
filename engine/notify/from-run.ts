/**
 * From a run that sent (apply, drift --fix) to what is sent about it, per tenant: `apply` for the
 * contracts it changed, `apply-failed` for those it could not, `policy-denied` for what a policy
 * rule denied. Pure: the run's plan, report and findings in, notifications out. Only fields and
 * reasons are told, never a value; the reasons are the run's own, which are already redacted.
 */
import type { RunReport } from '../apply/run-report.ts';
import { findingCounts, type Finding } from '../diagnostic/finding.ts';
import { standingDenials } from '../drift/render-common.ts';
import type { PlanDocument } from '../plan/types.ts';
import type { CiRun, Notification, NotifyContract } from './types.ts';

/** The built-in checks (engine/pipeline/checks.ts): their denials are the run's safety, not a policy's. */
const BUILT_IN_CHECKS: ReadonlySet<string> = new Set(['commit', 'reviewed-plan', 'removal-guard']);

export interface RunNotificationInput {
  readonly plan: PlanDocument;
  readonly report: RunReport;
  /** The run's command, as a next step names it: `contract-sync apply` or `contract-sync drift --fix`. */
  readonly command: string;
  readonly time: string;
  readonly commit?: string;
  readonly commitUrl?: string;
  readonly run?: CiRun;
}

/** A finding a policy rule made that refuses something in this run (a deny, or an override not lifted). */
export function isPolicyDenial(finding: Finding): boolean {
  return finding.action !== 'warn' && findingCounts(finding) && !BUILT_IN_CHECKS.has(finding.check);
}

export function runNotifications(input: RunNotificationInput): Notification[] {
  const { plan, report } = input;
  const context = {
    time: input.time,
    ...(input.commit === undefined ? {} : { commit: input.commit }),
    ...(input.commitUrl === undefined ? {} : { commitUrl: input.commitUrl }),
    ...(input.run === undefined ? {} : { run: input.run }),
  };
  const denials = (report.findings ?? plan.findings ?? []).filter(isPolicyDenial);
  const notifications: Notification[] = [];
  for (const tenant of report.tenants) {
    const planned = plan.tenants.find((entry) => entry.tenant === tenant.tenant)?.contracts ?? [];
    const fieldsOf = new Map(planned.map((contract) => [contract.id, [...new Set(contract.changes.map((change) => change.field as string))]]));
    const failures = new Map(tenant.failures.map((failure) => [failure.contractId, failure]));
    const applied: NotifyContract[] = planned
      .filter((contract) => contract.ops.length > 0 && !failures.has(contract.id))
      .map((contract) => ({ id: contract.id, file: contract.file, line: contract.line, fields: fieldsOf.get(contract.id)!.map((field) => ({ field })) }));
    // A run a policy denied sent nothing: policy-denied says why, and its skipped contracts are no failure of their own.
    const failed: NotifyContract[] = tenant.failures
      .filter((failure) => !(denials.length > 0 && failure.outcome === 'skipped'))
      .map((failure) => ({
        id: failure.contractId,
        file: failure.file,
        line: failure.line,
        fields: (fieldsOf.get(failure.contractId) ?? []).map((field) => ({ field })),
        ...(failure.reason === undefined ? { reason: failure.outcome } : { reason: failure.reason }),
      }));
    const tenantDenials = denials.filter((finding) => finding.tenant === tenant.tenant);
    const denied: NotifyContract[] = tenantDenials.map((finding) => ({
      id: finding.contractId ?? '(tenant)',
      ...(finding.file === undefined ? {} : { file: finding.file }),
      ...(finding.line === undefined ? {} : { line: finding.line }),
      fields: finding.contractId === undefined ? [] : (fieldsOf.get(finding.contractId) ?? []).map((field) => ({ field })),
      reason: `${finding.check}: ${finding.message}`,
    }));
    if (applied.length > 0) notifications.push({ event: 'apply', tenant: tenant.tenant, ...context, contracts: applied });
    if (failed.length > 0) notifications.push({ event: 'apply-failed', tenant: tenant.tenant, ...context, contracts: failed });
    if (denied.length > 0) {
      notifications.push({
        event: 'policy-denied',
        tenant: tenant.tenant,
        ...context,
        contracts: denied,
        denials: standingDenials(tenantDenials),
        rerun: input.command,
      });
    }
  }
  return notifications;
}
