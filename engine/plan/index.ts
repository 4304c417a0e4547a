export { describeChanges } from './changes.ts';
export { createPlan, type PlanOptions } from './create-plan.ts';
export { checkDiffOptions, diffContract, type DiffOptions } from './diff.ts';
export { findTouchedContracts, sameDesiredFields } from './touched-contracts.ts';
export { checkPlan, parsePlan, PlanFormatError } from './read-plan.ts';
export { renderPlanJson } from './render-json.ts';
export { MARKDOWN_MAX_LENGTH, renderPlanMarkdown, type MarkdownRenderOptions } from './render-markdown.ts';
export { renderPlanText, type TextRenderOptions } from './render-text.ts';
export { planSchema } from './schema.ts';
export {
  PLAN_VERSION,
  type KnownFrom,
  type PlanAction,
  type PlanChange,
  type PlanContract,
  type PlanDocument,
  type PlanSource,
  type PlanSummary,
  type PlanTenant,
} from './types.ts';
