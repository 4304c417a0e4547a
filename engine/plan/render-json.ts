import type { PlanHeader, PlanTrailer } from './plan-by-tenant.ts';
import type { PlanDocument, PlanTenant } from './types.ts';

/** The plan document as written by `--out` and `--format json`: stable key order, two-space indent. */
export function renderPlanJson(plan: PlanDocument): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}

/** `value` as JSON.stringify(_, null, 2) writes it `depth` levels deep (JSON text holds no raw newline inside a string). */
function nested(value: unknown, depth: number): string {
  return JSON.stringify(value, null, 2).replaceAll('\n', `\n${'  '.repeat(depth)}`);
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
      const fields = Object.entries(header).map(([key, value]) => `\n  ${JSON.stringify(key)}: ${nested(value, 1)},`);
      return `{${fields.join('')}\n  "tenants": [`;
    },
    tenant(tenant) {
      tenants += 1;
      return `${tenants === 1 ? '' : ','}\n    ${nested(tenant, 2)}`;
    },
    trailer(trailer) {
      const fields = Object.entries(trailer)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => `,\n  ${JSON.stringify(key)}: ${nested(value, 1)}`);
      return `${tenants === 0 ? ']' : '\n  ]'}${fields.join('')}\n}\n`;
    },
  };
}
