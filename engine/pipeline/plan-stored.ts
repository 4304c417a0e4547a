/**
 * A plan document against the state store (`plan` when incremental, or for a caller that takes the
 * plan whole): the stages learn (each tenant's records of the contracts planned), plan (createPlan)
 * and check (check.ts, as every run judges), over the desired state the run read and scoped
 * (engine/run/input.ts, engine/plan/scope.ts). Nothing is locked, read live, sent or written.
 */
import type { ContractSet } from '../desired/types.ts';
import type { ContractFields, KnownContracts, KnownState } from '../model/types.ts';
import { createPlan, type PlanOptions } from '../plan/create-plan.ts';
import type { PlanDocument } from '../plan/types.ts';
import { judgePlanned, tenantToJudge } from './check.ts';
import type { Check } from './checks.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { PhaseDetail, StagePhase } from './types.ts';

export interface StoredPlanDeps {
  /** `tenant`'s records of `only` (the state store's readTenant). */
  readKnown(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts>;
  readonly checks: readonly Check[];
  readonly onPhase?: (phase: StagePhase, detail?: PhaseDetail) => void;
}

/** Learn, plan, check: the plan of `contractSets` against the state store, and what the checks found that no outcome shows. */
export async function planStored(
  contractSets: readonly ContractSet[],
  options: PlanOptions,
  deps: StoredPlanDeps,
): Promise<{ readonly plan: PlanDocument; readonly findings: readonly Finding[] }> {
  deps.onPhase?.('read-known', { known: 'store' });
  const desired = desiredByTenant(contractSets);
  const known = await readPlannedKnownState({ read: deps.readKnown }, contractSets);
  deps.onPhase?.('plan');
  const plan = createPlan(contractSets, known, options);
  deps.onPhase?.('check');
  if (deps.checks.length === 0) return { plan, findings: [] };
  const verdicts = await Promise.all(
    plan.tenants.map((tenant) =>
      judgePlanned(deps.checks, tenantToJudge(tenant.tenant, known.get(tenant.tenant) ?? new Map(), tenant.contracts, desired.get(tenant.tenant) ?? new Map())),
    ),
  );
  return { plan, findings: verdicts.flatMap((verdict) => verdict.shownFindings) };
}

function desiredByTenant(contractSets: readonly ContractSet[]): Map<string, Map<string, { readonly fields: ContractFields }>> {
  const desired = new Map<string, Map<string, { readonly fields: ContractFields }>>();
  for (const set of contractSets) {
    const byId = desired.get(set.tenant) ?? new Map<string, { readonly fields: ContractFields }>();
    desired.set(set.tenant, byId);
    for (const contract of set.contracts) byId.set(contract.id, contract);
  }
  return desired;
}

/** Per tenant of `contractSets`, the records of their contracts only; a tenant with no contract planned is not read at all. */
export async function readPlannedKnownState(
  reader: { read(tenant: string, only?: ReadonlySet<string>): Promise<KnownContracts> },
  contractSets: readonly ContractSet[],
): Promise<KnownState> {
  const ids = new Map<string, Set<string>>();
  for (const set of contractSets) {
    const tenantIds = ids.get(set.tenant) ?? new Set<string>();
    for (const contract of set.contracts) tenantIds.add(contract.id);
    ids.set(set.tenant, tenantIds);
  }
  const known = new Map<string, KnownContracts>();
  for (const tenant of [...ids.keys()].sort()) known.set(tenant, await reader.read(tenant, ids.get(tenant)));
  return known;
}
