/**
 * What kept a live read (plan --refresh) from being complete, one line per problem: a tenant that
 * could not start is one line saying why and how many of its contracts were not read, not one
 * line for it and another for each of its contracts. Pure.
 */
import { plural } from '../text/plural.ts';
import { tenantMessage } from '../text/tenant-message.ts';
import type { RunReport } from './run-report.ts';

export function readProblems(report: RunReport): string[] {
  return report.tenants.flatMap((tenant) => {
    if (tenant.error !== undefined) {
      // Every contract of a tenant that could not start went unread for that one reason.
      const unread = tenant.failures.filter((failure) => failure.outcome === 'skipped').length;
      const others = tenant.failures.filter((failure) => failure.outcome !== 'skipped').map((failure) => contractLine(tenant.tenant, failure));
      return [`${tenantMessage(tenant.tenant, tenant.error)}${unread > 0 ? `; ${plural(unread, 'contract')} not read` : ''}`, ...others];
    }
    return tenant.failures.map((failure) => contractLine(tenant.tenant, failure));
  });
}

function contractLine(tenant: string, failure: RunReport['tenants'][number]['failures'][number]): string {
  const what = failure.outcome === 'not-on-service' ? 'not on the service: ' : '';
  return `${tenant} ${failure.contractId} (${failure.file}:${failure.line}): ${what}${failure.reason ?? failure.outcome}`;
}
