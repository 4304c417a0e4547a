/**
 * From a drift run's report of one tenant to what is sent about it: the sightings the dedupe
 * decision takes, and, once decided, at most one `drift` notification (the new drift only) and one
 * `drift-resolved`. Pure: the report, the decision and the attributions in, notifications out.
 */
import type { Finding } from '../diagnostic/finding.ts';
import type { FieldAttribution } from '../drift/attribution.ts';
import { standingDenials } from '../drift/render-common.ts';
import type { DriftTenant } from '../drift/types.ts';
import type { DriftDedupeDecision, DriftSighting } from './dedupe.ts';
import type { CiRun, Notification, NotifyContract } from './types.ts';

/** What the drifted contracts of `tenant` would take to correct: the input of decideDriftNotifications. */
export function driftSightings(tenant: DriftTenant): DriftSighting[] {
  return tenant.contracts.map((contract) => ({ tenant: tenant.tenant, contractId: contract.id, ops: contract.ops }));
}

export interface DriftNotificationInput {
  readonly tenant: DriftTenant;
  /** The run's decision (every tenant's); only this tenant's part is used. */
  readonly decision: DriftDedupeDecision;
  /** Per contract id, one attribution per drifted field (attributeDrift), when `api.audit` is configured. */
  readonly attributions?: Readonly<Record<string, readonly FieldAttribution[]>>;
  /** The run's findings (the report's, every tenant's: a deny stops a whole `drift --fix`). */
  readonly findings?: readonly Finding[];
  readonly time: string;
  readonly commit?: string;
  readonly commitUrl?: string;
  readonly run?: CiRun;
}

export function driftNotifications(input: DriftNotificationInput): Notification[] {
  const { tenant, decision, attributions } = input;
  const context = {
    tenant: tenant.tenant,
    time: input.time,
    ...(input.commit === undefined ? {} : { commit: input.commit }),
    ...(input.commitUrl === undefined ? {} : { commitUrl: input.commitUrl }),
    ...(input.run === undefined ? {} : { run: input.run }),
  };
  const fresh = new Set(decision.notify.filter((sighting) => sighting.tenant === tenant.tenant).map((sighting) => sighting.contractId));
  const drifted: NotifyContract[] = tenant.contracts
    .filter((contract) => fresh.has(contract.id))
    .map((contract) => {
      const byField = new Map((attributions?.[contract.id] ?? []).map((attribution) => [attribution.field, attribution]));
      const fields = [...new Set(contract.drift.map((item) => item.field as string))];
      return {
        id: contract.id,
        file: contract.file,
        line: contract.line,
        fields: fields.map((field) => (byField.has(field) ? { field, attribution: byField.get(field)! } : { field })),
      };
    });
  const resolved: NotifyContract[] = decision.resolved.filter((entry) => entry.tenant === tenant.tenant).map((entry) => ({ id: entry.contractId, fields: [] }));
  const denials = standingDenials(input.findings ?? []);
  return [
    ...(drifted.length === 0 ? [] : [{ event: 'drift' as const, ...context, contracts: drifted, ...(denials.rules.length === 0 ? {} : { denials }) }]),
    ...(resolved.length === 0 ? [] : [{ event: 'drift-resolved' as const, ...context, contracts: resolved }]),
  ];
}
