/**
 * Applying a saved plan (`apply PLAN.json`): a reviewed contract is sent only when planning it
 * again now gives exactly what was reviewed. Pure.
 */
import { canonicalJson } from '../model/fingerprint.ts';
import type { PlanContract, PlanDocument } from '../plan/types.ts';

export const PLAN_AGAIN = 'run contract-sync plan again';

export type ReviewVerdict = { readonly kind: 'send'; readonly contract: PlanContract } | { readonly kind: 'stale'; readonly reason: string };

/** The plan's contracts by tenant, then by ContractId. */
export function indexPlan(plan: PlanDocument): Map<string, Map<string, PlanContract>> {
  return new Map(plan.tenants.map((tenant) => [tenant.tenant, new Map(tenant.contracts.map((contract) => [contract.id, contract]))]));
}

/** How the plan's known state was obtained: a plan with any contract read live was made with --refresh. */
export function planReadLive(plan: PlanDocument): boolean {
  return plan.tenants.some((tenant) => tenant.contracts.some((contract) => contract.knownFrom === 'live'));
}

/**
 * `reviewed` is a contract the saved plan changes; `fresh` is the same contract planned now (from
 * the plan's commit and the known state obtained the same way), undefined when it is no longer
 * planned. The file check catches a contract the plan lists under the wrong tenant (a file declares
 * one tenant); the fingerprint check a known state that moved; comparing the ops also catches
 * a desired state or a planner that changed, so that what is sent is exactly what was reviewed.
 */
export function judgeReviewed(reviewed: PlanContract, fresh: PlanContract | undefined): ReviewVerdict {
  // Where the plan says the contract is declared, so that a contract of another tenant (its file
  // declares that tenant) or a file edited since is named as such, never as a known state that moved.
  const listed = `${reviewed.file}:${reviewed.line}`;
  if (fresh === undefined) {
    return {
      kind: 'stale',
      reason: `stale plan: at the plan's commit this tenant declares no contract ${reviewed.id}, which the plan lists from ${listed}; ${PLAN_AGAIN}`,
    };
  }
  if (fresh.file !== reviewed.file) {
    return {
      kind: 'stale',
      reason: `stale plan: the plan lists contract ${reviewed.id} from ${listed}, but at the plan's commit this tenant declares it in ${fresh.file}:${fresh.line} (the plan carries another tenant's contract, or the file was renamed since); ${PLAN_AGAIN}`,
    };
  }
  if (fresh.knownFingerprint !== reviewed.knownFingerprint) {
    return {
      kind: 'stale',
      reason: `stale plan: the known state (${fresh.knownFrom === 'live' ? 'read live' : 'in the state store'}) changed since the plan was made; ${PLAN_AGAIN}`,
    };
  }
  if (canonicalJson(fresh.ops) !== canonicalJson(reviewed.ops)) {
    return {
      kind: 'stale',
      reason: `stale plan: planning it again gives other ops than the reviewed ones (the desired state, the config or the contract-sync version differs); ${PLAN_AGAIN}`,
    };
  }
  return { kind: 'send', contract: fresh };
}
