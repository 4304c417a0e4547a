export { applyContract, type ContractContext, type ContractOutcome, type ContractWork } from './apply-contract.ts';
export { backoffDelay, decideRetry, retryBudget, type AttemptHistory, type RetryBudget, type RetryDecision } from './retry-policy.ts';
export { renderRunSummary, RUN_REPORT_VERSION, summarise, type ContractResult, type RunReport, type TenantReport } from './run-report.ts';
export { TenantLane, type LaneCounters, type LaneOptions, type LaneRequest } from './tenant-lane.ts';
export {
  describeScope,
  filesReadByTenant,
  narrowToScopes,
  planningFingerprint,
  startingPoint,
  tenantScope,
  type SinceCommit,
  type TenantScope,
} from './incremental.ts';
export { pendingAfterRun, type TenantRunFacts } from './pending-after-run.ts';
export { indexPlan, judgeReviewed, planReadLive, PLAN_AGAIN, type ReviewVerdict } from './reviewed-plan.ts';
