/**
 * The removals of a pull request's plan, for its markdown comment: members removed per tenant, and
 * a warning naming each tenant whose plan would trip the removal guard of apply and drift --fix
 * (engine/plan/removal-guard.ts). A plan document holds no known state, so only the count is
 * judged here; the run also refuses a collection of 3 or more members emptied. Bounded in length
 * (at most MAX_LISTED tenants named per line). Pure.
 */
import { escapeInline } from '../text/markdown-escape.ts';
import { plural } from '../text/plural.ts';
import { countRemovals, DEFAULT_MAX_REMOVALS, exceedsLimits, type TenantRemovals } from './removal-guard.ts';
import type { PlanDocument } from './types.ts';

const MAX_LISTED = 20;

function listed(tenants: readonly TenantRemovals[], entry: (tenant: TenantRemovals) => string): string {
  const shown = tenants.slice(0, MAX_LISTED).map(entry).join(', ');
  return tenants.length > MAX_LISTED ? `${shown} and ${plural(tenants.length - MAX_LISTED, 'more tenant')}` : shown;
}

/** '' when the plan removes no member. */
/** The limit is the one the plan recorded (config safety.maxRemovals), else the default. */
export function renderRemovalsMarkdown(plan: PlanDocument, maxRemovals: number = plan.madeWith?.maxRemovals ?? DEFAULT_MAX_REMOVALS): string {
  const removing = plan.tenants.map((tenant) => countRemovals(tenant.tenant, tenant.contracts)).filter((tenant) => tenant.removals > 0);
  if (removing.length === 0) return '';
  let out = `Collection members removed: ${listed(removing, (tenant) => `${escapeInline(tenant.tenant)} ${tenant.removals}`)}.\n\n`;
  const tripping = removing.filter((tenant) => exceedsLimits(tenant, maxRemovals));
  if (tripping.length > 0) {
    out +=
      `> [!WARNING]\n> Removal guard: the plan of ${tripping.length === 1 ? 'tenant' : 'tenants'} ${listed(tripping, (tenant) => escapeInline(tenant.tenant))} ` +
      `removes more than ${plural(maxRemovals, 'collection member')}. After the merge, apply (and drift --fix) will refuse ${tripping.length === 1 ? 'it' : 'them'} ` +
      'and send nothing there, unless run with --allow-removals.\n\n';
  }
  return out;
}
