/** Reading a plan document back (for apply): unknown versions and malformed plans are refused. Pure. */
import { compileSchema, type SchemaCheck, type SchemaIssue } from '../model/schema-validator.ts';
import { planSchema } from './schema.ts';
import { PLAN_VERSION, type PlanDocument } from './types.ts';

export class PlanFormatError extends Error {
  readonly code: 'plan-version' | 'plan-invalid';
  constructor(code: 'plan-version' | 'plan-invalid', message: string) {
    super(message);
    this.code = code;
  }
}

let check: SchemaCheck | undefined;

/** Every problem of `value` as a plan document (specs/plan.schema.json); empty when it is one. */
export function checkPlan(value: unknown): SchemaIssue[] {
  check ??= compileSchema(planSchema());
  return check(value);
}

export function parsePlan(text: string): PlanDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new PlanFormatError('plan-invalid', `the plan is not JSON (${(error as Error).message})`);
  }
  const version = (value as { version?: unknown } | null)?.version;
  if (version !== PLAN_VERSION) {
    throw new PlanFormatError('plan-version', `plan version ${JSON.stringify(version)} is not supported (this contract-sync reads version ${PLAN_VERSION})`);
  }
  const issues = checkPlan(value);
  if (issues.length > 0) {
    const listed = issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new PlanFormatError('plan-invalid', `invalid plan: ${listed.join('; ')}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}`);
  }
  return value as PlanDocument;
}
