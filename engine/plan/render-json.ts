import type { PlanHeader, PlanTrailer } from './plan-by-tenant.ts';
import type { PlanDocument, PlanTenant } from './types.ts';

/**
 * The plan document as written by `--out` and `--format json`: stable key order, compact (one line
 * and a newline, as `terraform show -json` writes its plan; a plan of 50,000 contracts is 180 MB
 * compact against 427 MB indented). `contract-sync show` is the way to read a plan as a person.
 */
export function renderPlanJson(plan: PlanDocument): string {
  return `${JSON.stringify(plan)}\n`;
}

/**
 * The same document as renderPlanJson, written piece by piece so that no string holds all of it:
 * `header`, then `tenant` for each tenant in order, then `trailer`. The pieces joined are
 * renderPlanJson of the whole plan, byte for byte.
 */
export interface PlanJsonPieces {
  header(header: PlanHeader): string;
  tenant(tenant: PlanTenant): string;
  trailer(trailer: PlanTrailer): string;
}

export function planJsonPieces(): PlanJsonPieces {
  let tenants = 0;
  return {
    header(header) {
      tenants = 0;
      const fields = Object.entries(header).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)},`);
      return `{${fields.join('')}"tenants":[`;
    },
    tenant(tenant) {
      tenants += 1;
      return `${tenants === 1 ? '' : ','}${JSON.stringify(tenant)}`;
    },
    trailer(trailer) {
      const fields = Object.entries(trailer)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`);
      return `]${fields.join('')}}\n`;
    },
  };
}
