/**
 * The plan stage: one plan of every tenant (createPlan, engine/plan/create-plan.ts), made from the
 * known state each tenant learnt, before the first PATCH of any; and what each tenant's run would
 * send: the fresh plan's updates, or a saved plan's reviewed updates (the checks judge them next).
 */
import type { ContractSet } from '../desired/types.ts';
import { createPlan, planWithout } from '../plan/create-plan.ts';
import type { PlanContract, PlanDocument } from '../plan/types.ts';
import type { LearntTenant, PlannedTenant, RunContext, TenantWork } from './tenant.ts';

export function planTenants(context: RunContext, tenants: readonly LearntTenant[]): { readonly plan: PlanDocument; readonly tenants: PlannedTenant[] } {
  context.progress.phase('plan');
  const { options } = context;
  const byTenant = new Map(tenants.map((tenant) => [tenant.tenant, tenant]));
  const plan = createPlan(
    options.contractSets.map((set): ContractSet => {
      const unreadable = byTenant.get(set.tenant)?.unreadable;
      return unreadable === undefined || unreadable.size === 0 ? set : { ...set, contracts: set.contracts.filter((contract) => !unreadable.has(contract.id)) };
    }),
    new Map(tenants.map((tenant) => [tenant.tenant, tenant.known])),
    { createdAt: context.startedAt, source: options.source, collections: options.config.collections, ...(options.touched ? { touched: options.touched } : {}) },
  );
  const plannedByTenant = new Map(plan.tenants.map((tenant) => [tenant.tenant, tenant.contracts]));
  return {
    // A tenant that could not start is reported with its error, not shown planned against no known state.
    plan: planWithout(plan, new Set(tenants.filter((tenant) => tenant.error !== undefined).map((tenant) => tenant.tenant))),
    tenants: tenants.map((tenant) => {
      const planned = plannedByTenant.get(tenant.tenant) ?? [];
      return { ...tenant, planned, work: selectWork(context, tenant, planned) };
    }),
  };
}

/** What the tenant's run would send before the checks: its updates, and the uncertain contracts to settle by a read. */
function selectWork(context: RunContext, tenant: LearntTenant, planned: readonly PlanContract[]): TenantWork {
  const { reviewed, api, logger } = context;
  if (reviewed === undefined) {
    const send = planned.filter((contract) => contract.action === 'update');
    const settle = api.canRead
      ? planned.filter((contract) => contract.action === 'noop' && contract.knownFrom !== 'live' && tenant.uncertain.has(contract.id))
      : [];
    return { items: send.map((contract) => ({ contract })), settle };
  }
  const mine = reviewed.get(tenant.tenant);
  for (const contract of planned) {
    if (contract.action === 'update' && mine?.get(contract.id)?.action !== 'update') {
      logger.warn({ tenant: tenant.tenant, contractId: contract.id }, 'contract changes that the saved plan does not: not sent');
    }
  }
  // Unreadable contracts are reported as failed reads already. A saved plan sends only what was
  // reviewed: its uncertain unchanged contracts stay pending.
  const items = [...(mine?.values() ?? [])].filter((contract) => contract.action === 'update' && !tenant.unreadable.has(contract.id));
  return { items: items.map((contract) => ({ contract })), settle: [] };
}
