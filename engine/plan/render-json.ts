import type { PlanDocument } from './types.ts';

/** The plan document as written by `--out` and `--format json`: stable key order, two-space indent. */
export function renderPlanJson(plan: PlanDocument): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}
