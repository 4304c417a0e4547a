/** The checks a run adds to the built-in ones: the config's policy rules, then the caller's (RunEffects.checks). */
import { userInfo } from 'node:os';
import { policyCheck, type Check, type PolicyOverrides } from '../pipeline/checks.ts';
import { utcDate, type CompiledPolicies } from '../policy/index.ts';
import { startedByFromEnv } from '../state/history.ts';
import { closest } from '../text/suggest.ts';
import type { PolicyOverrideRequest, RunEffects } from './types.ts';

export function runChecksOf(policies: CompiledPolicies, effects: Pick<RunEffects, 'checks' | 'clock' | 'env'>, overrides?: PolicyOverrideRequest): Check[] {
  const lifted: PolicyOverrides | undefined = overrides && { ...overrides, by: overrider(effects.env) };
  return [...(policies.policies.length > 0 ? [policyCheck(policies, utcDate(effects.clock.now()), lifted)] : []), ...(effects.checks ?? [])];
}

/** Who lifts an override: the CI's user, else the OS user. */
function overrider(env: RunEffects['env']): string {
  const actor = startedByFromEnv(env).actor;
  if (actor !== undefined) return actor;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Why `--override-policy` names no rule the config can lift (an unknown name, or a rule whose action is not override); undefined when it does. */
export function overrideProblem(policies: CompiledPolicies, overrides: PolicyOverrideRequest | undefined): string | undefined {
  for (const name of overrides?.policies ?? []) {
    const rule = policies.policies.find((policy) => policy.name === name);
    if (rule === undefined) {
      const near = closest(
        name,
        policies.policies.map((policy) => policy.name),
      );
      return `--override-policy ${name}: the config has no policy rule ${name}${near === undefined ? '' : ` (did you mean ${near}?)`}; nothing sent`;
    }
    if (rule.action !== 'override')
      return `--override-policy ${name}: the rule's action is ${rule.action}, and only a rule with action: override can be lifted; nothing sent`;
  }
  return undefined;
}
