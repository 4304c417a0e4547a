/** One entry for every run: the request's kind says which. */
import type { ApplyRequest, ApplyRunOutcome } from './apply.ts';
import type { DriftRequest, DriftRunOutcome } from './drift.ts';
import type { ImportRequest, ImportRunOutcome } from './import.ts';
import type { PlanRequest, PlanRunOutcome } from './plan.ts';
import type { RunEffects } from './types.ts';
import type { ValidateRequest, ValidateRunOutcome } from './validate.ts';

export type RunRequest = ValidateRequest | PlanRequest | ApplyRequest | DriftRequest | ImportRequest;

/** The result of each kind of run. */
export interface RunResults {
  readonly validate: ValidateRunOutcome;
  readonly plan: PlanRunOutcome;
  readonly apply: ApplyRunOutcome;
  readonly drift: DriftRunOutcome;
  readonly import: ImportRunOutcome;
}

/** Runs `request`; each kind's module is loaded only when a run of it starts. */
export async function run<R extends RunRequest>(request: R, effects: RunEffects): Promise<RunResults[R['kind']]> {
  switch (request.kind) {
    case 'validate':
      return (await import('./validate.ts')).runValidate(request, effects) as Promise<RunResults[R['kind']]>;
    case 'plan':
      return (await import('./plan.ts')).runPlan(request, effects) as Promise<RunResults[R['kind']]>;
    case 'apply':
      return (await import('./apply.ts')).runApplyRequest(request, effects) as Promise<RunResults[R['kind']]>;
    case 'drift':
      return (await import('./drift.ts')).runDrift(request, effects) as Promise<RunResults[R['kind']]>;
    case 'import':
      return (await import('./import.ts')).runImport(request, effects) as Promise<RunResults[R['kind']]>;
  }
}
