/**
 * The confirm stage: once every tenant is planned and checked, and before anything is written or
 * sent, the caller is shown what would be sent (a command shows the plan and asks). Its answer, or
 * the error it threw (rethrown once every lock is released), decides whether the run sends.
 */
import type { PlanDocument } from '../plan/types.ts';
import type { CheckedTenant, RunContext } from './tenant.ts';
import type { ApplyRunDeps, SendPreview } from './types.ts';

/** Whether a tenant goes on to send: it started, and no check refused it. */
export function sends(tenant: CheckedTenant): boolean {
  return tenant.error === undefined && tenant.refused === undefined;
}

export function previewOf(plan: PlanDocument, tenants: readonly CheckedTenant[]): SendPreview {
  const sendable = tenants.filter(sends).map((tenant) => tenant.send);
  return {
    plan,
    sending: {
      tenants: sendable.filter((send) => send.length > 0).length,
      contracts: sendable.reduce((sum, send) => sum + send.length, 0),
      ops: sendable.reduce((sum, send) => sum + send.reduce((ops, contract) => ops + contract.ops.length, 0), 0),
    },
    refused: tenants.flatMap((tenant) => (tenant.error === undefined && tenant.refused ? [{ tenant: tenant.tenant, reason: tenant.refused.reason }] : [])),
    unreadable: tenants.flatMap((tenant) => [...tenant.unreadable.values()].map((result) => ({ tenant: tenant.tenant, result }))),
    findings: plan.findings ?? [],
  };
}

/** The caller's answer: false when the run was stopped before (reads, locks) or while it was asked; an Error when `confirm` threw. */
export async function confirmRun(context: RunContext, confirm: ApplyRunDeps['confirm'], preview: SendPreview): Promise<boolean | Error> {
  if (context.signal?.aborted) return false;
  if (confirm === undefined) return true;
  try {
    return await confirm(preview);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
