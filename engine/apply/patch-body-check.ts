/**
 * The last check before a PATCH is queued: its body against the published patch schema
 * (specs/patch.schema.json, the same op shapes the planner's interpreter and the emulator use).
 */
import { validateOps } from '../model/apply-ops.ts';
import type { Op } from '../model/types.ts';

const LISTED_OPS = 5;

/**
 * Undefined for a body the schema accepts; otherwise the reason the contract fails, naming every
 * problem and the ops, so that the defect can be reported. Such a body is never sent.
 */
export function patchBodyProblem(ops: readonly Op[]): string | undefined {
  const problems = validateOps(ops);
  if (problems.length === 0) return undefined;
  const listed = ops
    .slice(0, LISTED_OPS)
    .map((op) => JSON.stringify(op))
    .join(', ');
  const more = ops.length > LISTED_OPS ? ` and ${ops.length - LISTED_OPS} more` : '';
  const where = problems.map((problem) => (problem.index < 0 ? problem.message : `op #${problem.index}: ${problem.message}`)).join('; ');
  return `internal error: the planned patch does not fit the published patch schema (specs/patch.schema.json), so it was not sent: ${where}; ops: [${listed}${more}]`;
}
