/** The checks a run adds to the built-in ones: the config's policy rules, then the caller's (RunEffects.checks). */
import { policyCheck, type Check } from '../pipeline/checks.ts';
import { utcDate, type CompiledPolicies } from '../policy/index.ts';
import type { RunEffects } from './types.ts';

export function runChecksOf(policies: CompiledPolicies, effects: Pick<RunEffects, 'checks' | 'clock'>): Check[] {
  return [...(policies.policies.length > 0 ? [policyCheck(policies, utcDate(effects.clock.now()))] : []), ...(effects.checks ?? [])];
}
