/** Attributions put on a drift report's items (the report's renderers show them). Pure. */
import type { FieldAttribution } from './attribution.ts';
import type { DriftReport } from './types.ts';

/**
 * `report` with each drifted item of the given contracts carrying its field's attribution (tenant ->
 * contract id -> attributions). Contracts not given are left as they are: a report made without
 * `api.audit` says nothing of actors.
 */
export function withAttributions(
  report: DriftReport,
  attributions: Readonly<Record<string, Readonly<Record<string, readonly FieldAttribution[]>>>>,
): DriftReport {
  return {
    ...report,
    tenants: report.tenants.map((tenant) => {
      const byContract = attributions[tenant.tenant];
      if (byContract === undefined) return tenant;
      return {
        ...tenant,
        contracts: tenant.contracts.map((contract) => {
          const byField = new Map((byContract[contract.id] ?? []).map((attribution) => [attribution.field, attribution]));
          if (byField.size === 0) return contract;
          return { ...contract, drift: contract.drift.map((item) => (byField.has(item.field) ? { ...item, attribution: byField.get(item.field)! } : item)) };
        }),
      };
    }),
  };
}
