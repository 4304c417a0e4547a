/**
 * The checks' findings in the plan document (DESIGN section 5): the whole list in `findings`, each
 * contract's own in its `policy`, and the summary's counts in `summary.policy`, so that a reader
 * of the JSON plan finds a contract's findings with the contract. Pure.
 */
import { findingCounts, type Finding } from '../diagnostic/finding.ts';
import type { ContractFinding, PlanContract, PlanDocument, PlanSummary, PolicySummary } from './types.ts';

/** A finding as its contract carries it: what the contract already says (tenant, id, file, line) left out. */
export function contractFinding(finding: Finding): ContractFinding {
  const { tenant: _tenant, contractId: _contractId, file: _file, line: _line, ...own } = finding;
  return own;
}

/** `contract` with the findings about it, or as it is when there are none. */
export function withContractFindings(contract: PlanContract, findings: readonly Finding[]): PlanContract {
  return findings.length === 0 ? contract : { ...contract, policy: findings.map(contractFinding) };
}

/** The findings counted as the text plan's headline counts them (engine/plan/render-findings.ts). */
export function policySummary(findings: readonly Finding[]): PolicySummary {
  const summary = { findings: findings.length, denied: 0, needsOverride: 0, warned: 0, overridden: 0, excepted: 0, expired: 0 };
  for (const finding of findings) {
    if (finding.overridden !== undefined) summary.overridden += 1;
    else if (!findingCounts(finding)) summary.excepted += 1;
    else if (finding.action === 'deny') summary.denied += 1;
    else if (finding.action === 'override') summary.needsOverride += 1;
    else summary.warned += 1;
    if (finding.exception?.state === 'expired') summary.expired += 1;
  }
  return summary;
}

/** The summary with the findings counted; as it is when there are none. */
export function summaryWithFindings<T extends PlanSummary>(summary: T, findings: readonly Finding[]): T {
  return findings.length === 0 ? summary : { ...summary, policy: policySummary(findings) };
}

/** The plan with its checks' findings: the list, each contract's own, the summary's counts; as it is when there are none. */
export function withPlanFindings(plan: PlanDocument, findings: readonly Finding[]): PlanDocument {
  if (findings.length === 0) return plan;
  const byContract = new Map<string, Finding[]>();
  for (const finding of findings) {
    if (finding.contractId === undefined) continue;
    const key = `${finding.tenant}\u0000${finding.contractId}`;
    const found = byContract.get(key);
    if (found === undefined) byContract.set(key, [finding]);
    else found.push(finding);
  }
  return {
    ...plan,
    tenants: plan.tenants.map((tenant) => ({
      ...tenant,
      contracts: tenant.contracts.map((contract) => withContractFindings(contract, byContract.get(`${tenant.tenant}\u0000${contract.id}`) ?? [])),
    })),
    summary: summaryWithFindings(plan.summary, findings),
    findings,
  };
}
