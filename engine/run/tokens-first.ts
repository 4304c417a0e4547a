/**
 * Fail early (before anything is read, planned or printed): every selected tenant's client secret
 * is resolved and a token obtained first, all tenants at once. A tenant that cannot have one is one
 * line naming what to fix (the variable or file of its secret, the setting); nothing of it is read
 * or sent, and the other tenants run.
 */
import { messageOf } from '../apply/failure.ts';
import { RUN_REPORT_VERSION, summarise, type ContractResult, type RunReport, type TenantReport } from '../apply/run-report.ts';
import type { TenantTokens } from '../auth/index.ts';
import { describeSecretRef } from '../config/secrets.ts';
import type { Config } from '../config/types.ts';
import type { ContractSet } from '../desired/types.ts';
import type { PlanSource } from '../plan/types.ts';
import { compareText } from '../text/compare-text.ts';
import { escapeForTerminal } from '../text/text-escape.ts';

/** The tenants whose token could not be had, each with its one line; empty when every tenant has one. */
export async function tenantsWithoutToken(tokens: TenantTokens, tenants: Iterable<string>, config: Config): Promise<Map<string, string>> {
  const failed = new Map<string, string>();
  await Promise.all(
    [...new Set(tenants)].map(async (tenant) => {
      try {
        await tokens.get(tenant);
      } catch (error) {
        failed.set(tenant, notStartedLine(tenant, error, config));
      }
    }),
  );
  return new Map([...failed].sort(([a], [b]) => compareText(a, b)));
}

/** `<why>; <what to fix>`: the tenant's error in the run report. */
function notStartedLine(tenant: string, error: unknown, config: Config): string {
  const why = messageOf(error).replace(new RegExp(`^tenant ${escapeRegExp(tenant)}: `), '');
  const fix = whatToFix(tenant, (error as { code?: unknown }).code, config);
  return `${why}${fix === undefined ? '' : `; ${fix}`}`;
}

/** The line said as soon as the tenant is known not to start, before any plan. */
export function notStartedMessage(tenant: string, line: string): string {
  return escapeForTerminal(`tenant ${tenant} not started: ${line}; nothing of it read or sent`);
}

function whatToFix(tenant: string, code: unknown, config: Config): string | undefined {
  const settings = config.tenants[tenant];
  if (settings === undefined) return undefined;
  const secret = `tenants.${tenant}.clientSecret`;
  switch (code) {
    case 'secret-unresolved':
      return `set it, or point ${secret} elsewhere`;
    case 'auth-invalid-client':
      return `check the secret in ${describeSecretRef(settings.clientSecret)} (${secret}) and tenants.${tenant}.clientId`;
    case 'auth-invalid-scope':
    case 'auth-missing-scope':
      return `grant client ${settings.clientId} the scopes in the identity provider`;
    case 'auth-discovery':
    case 'auth-token-endpoint':
      return `check auth.url (${new URL(config.auth.url).host}) and auth.realm`;
    default:
      return undefined;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `sets` without the contracts of the tenants in `left`. */
export function withoutTenants<T extends { readonly tenant: string }>(sets: readonly T[], left: ReadonlyMap<string, string>): T[] {
  return sets.filter((set) => !left.has(set.tenant));
}

/**
 * The report of a tenant that did not start: every desired contract not sent, for the one reason
 * (the run summary says it on one line).
 */
export function notStartedReport(tenant: string, line: string, sets: readonly ContractSet[]): TenantReport {
  const failures = sets
    .filter((set) => set.tenant === tenant)
    .flatMap((set) =>
      set.contracts.map((contract): ContractResult => ({
        contractId: contract.id,
        file: set.file,
        line: contract.line,
        outcome: 'skipped',
        ops: 0,
        status: null,
        reason: `not sent: tenant ${tenant} could not start`,
      })),
    );
  return { tenant, contracts: failures.length, changed: 0, applied: 0, ops: 0, requests: 0, retries: 0, throttles: 0, failures, error: line };
}

/** `report` with the tenants that did not start among its tenants (in tenant order), counted in its summary. */
export function withNotStarted(report: RunReport, unstarted: readonly TenantReport[]): RunReport {
  if (unstarted.length === 0) return report;
  const tenants = [...report.tenants, ...unstarted].sort((a, b) => compareText(a.tenant, b.tenant));
  return { ...report, tenants, summary: summarise(tenants) };
}

/** The report of a run none of whose tenants could start: nothing read, planned or sent. */
export function notStartedRun(
  run: { readonly runId: string; readonly startedAt: string; readonly source: PlanSource; readonly dryRun: boolean },
  unstarted: readonly TenantReport[],
): RunReport {
  return { version: RUN_REPORT_VERSION, ...run, finishedAt: run.startedAt, tenants: unstarted, summary: summarise(unstarted) };
}
