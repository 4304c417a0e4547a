/**
 * Who caused a drift (`api.audit`): the audit events of each drifted contract read with a token of
 * their own that asks for `audit:read` alone (the token that writes contracts is never widened),
 * each drifted field attributed (engine/drift/attribution.ts: never a guess), and what could not
 * be used said once per cause per run (engine/drift/audit-warnings.ts). Without `api.audit`
 * nothing is read. Never fails the run: a read that fails leaves its fields `not-read`.
 */
import { createAuditReader, type AuditEvent } from '../api/audit.ts';
import { createTenantTokens } from '../auth/index.ts';
import type { Config } from '../config/types.ts';
import { attributeDrift, type FieldAttribution } from '../drift/attribution.ts';
import { auditWarnings, type AuditReadOutcome, type AuditWarning } from '../drift/audit-warnings.ts';
import type { DriftReport } from '../drift/types.ts';
import { Redactor } from '../log/logger.ts';
import type { RunEffects } from './types.ts';
import { packageVersion } from './version.ts';

/** tenant -> contract id -> one attribution per drifted field. */
export type DriftAttributions = Readonly<Record<string, Readonly<Record<string, readonly FieldAttribution[]>>>>;

export interface DriftAttribution {
  readonly attributions: DriftAttributions;
  readonly warnings: readonly AuditWarning[];
}

/** Audit reads in flight at once, over every tenant. */
const READS_AT_ONCE = 4;

/**
 * Events of contract-sync's own clients at or after the run started are this run's corrections
 * (`drift --fix` records them before the events are read): they are not what the drift was.
 */
function beforeOwnFix(events: readonly AuditEvent[], own: ReadonlySet<string>, runStarted: number): AuditEvent[] {
  return events.filter((event) => !(own.has(event.actor) && Date.parse(event.time) >= runStarted));
}

export async function attributeDriftRun(
  report: DriftReport,
  config: Config,
  effects: Pick<RunEffects, 'env' | 'clock'>,
): Promise<DriftAttribution | undefined> {
  const audit = config.api.audit;
  if (audit === undefined) return undefined;
  const drifted = report.tenants.flatMap((tenant) => tenant.contracts.map((contract) => ({ tenant: tenant.tenant, contract })));
  if (drifted.length === 0) return { attributions: {}, warnings: [] };
  const redactor = new Redactor();
  const tokens = createTenantTokens({
    auth: config.auth,
    tenants: config.tenants,
    scopes: ['audit:read'],
    env: effects.env,
    redactor,
    now: () => effects.clock.now(),
    sleep: (ms) => effects.clock.sleep(ms),
  });
  const reader = createAuditReader({
    baseUrl: config.api.baseUrl,
    audit,
    timeoutMs: config.api.timeoutMs,
    userAgent: `contract-sync/${packageVersion()}`,
    correlationId: report.runId,
    redactor,
  });
  const runStarted = Date.parse(report.createdAt);
  const outcomes: AuditReadOutcome[] = [];
  const attributions: Record<string, Record<string, FieldAttribution[]>> = {};
  let next = 0;
  async function worker(): Promise<void> {
    while (next < drifted.length) {
      const { tenant, contract } = drifted[next++]!;
      const fields = contract.drift.map((item) => item.field as string);
      const own = new Set([config.tenants[tenant]?.clientId].filter((id): id is string => id !== undefined));
      let events: AuditEvent[] | undefined;
      try {
        const read = await reader.read(contract.id, await tokens.get(tenant));
        outcomes.push({ tenant, contractId: contract.id, read });
        events = beforeOwnFix(read.events, own, runStarted);
      } catch (error) {
        outcomes.push({ tenant, contractId: contract.id, error: error instanceof Error ? error : new Error(String(error)) });
      }
      (attributions[tenant] ??= {})[contract.id] = attributeDrift(fields, events, { ownActors: [...own] });
    }
  }
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, drifted.length) }, () => worker()));
  return { attributions, warnings: auditWarnings(outcomes) };
}
