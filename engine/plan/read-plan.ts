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
  const other = notAPlan(value);
  // No version at all is still the version check's refusal (its code), in words that say what the file is not.
  if (other !== undefined) throw new PlanFormatError(other.code, other.message);
  const version = (value as { version?: unknown }).version;
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

const WRITE_ONE = 'a plan is an object with version, createdAt, source, tenants and summary, as contract-sync plan --out PLAN.json writes it';

/** Why JSON that is no plan document at all is not one (not an object, no version, a report of contract-sync's); undefined when it may be one. */
function notAPlan(value: unknown): { readonly code: PlanFormatError['code']; readonly message: string } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const what = value === null ? 'null' : Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    return { code: 'plan-version', message: `not a contract-sync plan: the file holds ${what}; ${WRITE_ONE}` };
  }
  if ('runId' in value)
    return {
      code: 'plan-invalid',
      message: `not a contract-sync plan: it looks like ${'fix' in value ? 'a drift report' : 'a run report'} (it has a runId); ${WRITE_ONE}`,
    };
  if (!('version' in value)) return { code: 'plan-version', message: `not a contract-sync plan: it has no "version"; ${WRITE_ONE}` };
  return undefined;
}
