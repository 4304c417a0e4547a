import type { PlanHeader, PlanTrailer } from './plan-tenant.ts';
import type { PlanContract, PlanDocument, PlanTenant } from './types.ts';

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
  /** A tenant contract by contract: `tenantStart`, `contract` for each in order, `tenantEnd`; the same bytes as `tenant`. */
  tenantStart(tenant: string): string;
  contract(contract: PlanContract): string;
  tenantEnd(): string;
  trailer(trailer: PlanTrailer): string;
}

export function planJsonPieces(): PlanJsonPieces {
  let tenants = 0;
  let contracts = 0;
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
    // A PlanTenant is { tenant, contracts } in that order (createPlan writes it so).
    tenantStart(tenant) {
      tenants += 1;
      contracts = 0;
      return `${tenants === 1 ? '' : ','}{"tenant":${JSON.stringify(tenant)},"contracts":[`;
    },
    contract(contract) {
      contracts += 1;
      return `${contracts === 1 ? '' : ','}${JSON.stringify(contract)}`;
    },
    tenantEnd() {
      return ']}';
    },
    trailer(trailer) {
      const fields = Object.entries(trailer)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`);
      return `]${fields.join('')}}\n`;
    },
  };
}
