// The tenant pipeline: its stages, its checks and the runs' compositions of them.
export { applyTenants, previewApply, previewTenants, runApply, runChecks } from './compose.ts';
export { commitCheck, removalGuardCheck, reviewedPlanCheck, type Check, type TenantUnderCheck } from './checks.ts';
export { judgePlanned, tenantToJudge, type CheckVerdict, type TenantToJudge } from './check.ts';
export type { ApplyProgress, ApplyRunDeps, ApplyRunOptions, ApplyRunResult, PhaseDetail, PipelineOptions, SendPreview, StagePhase } from './types.ts';
export type { Finding, FindingAction } from '../diagnostic/finding.ts';
