/**
 * The words every channel's message shares: the headline, an attribution, what to run next. Pure.
 * Each channel escapes them for its own markup.
 */
import type { NotifyEvent } from '../config/types.ts';
export { attributionText } from '../drift/attribution.ts';
import { policyStandsStep } from '../drift/render-common.ts';
import { plural } from '../text/plural.ts';
import type { Notification } from './types.ts';

/** At most this many contracts, and fields per contract, are listed; the rest are counted. */
export const LISTED_CONTRACTS = 20;
export const LISTED_FIELDS = 20;

const HEADLINES: Readonly<Record<NotifyEvent, (tenant: string, contracts: string, one: boolean) => string>> = {
  drift: (tenant, contracts) => `Drift in tenant ${tenant}: ${contracts} changed outside git`,
  'drift-resolved': (tenant, contracts, one) => `Drift resolved in tenant ${tenant}: ${contracts} ${one ? 'matches' : 'match'} git again`,
  apply: (tenant, contracts) => `Applied to tenant ${tenant}: ${contracts} changed`,
  'apply-failed': (tenant, contracts) => `Apply failed in tenant ${tenant}: ${contracts} not applied`,
  'policy-denied': (tenant, contracts) => `Policy denied in tenant ${tenant}: ${contracts}`,
};

export function headline(notification: Notification): string {
  const count = notification.contracts.length;
  const text = HEADLINES[notification.event](notification.tenant, plural(count, 'contract'), count === 1);
  return notification.sample === true ? `[test message] ${text}` : text;
}

const NEXT: Readonly<Record<NotifyEvent, string>> = {
  drift: 'Run `contract-sync drift --fix` to put the service back as git says, or change the desired state in git to keep the edit.',
  'drift-resolved': 'Nothing to do.',
  apply: 'Nothing to do.',
  'apply-failed': "Read the run's log, fix the cause, then run `contract-sync apply` again.",
  'policy-denied':
    'Change the contract in git so that the policy holds, or apply with `--override-policy NAME --reason TEXT` where the policy allows an override.',
};

export function nextStep(notification: Notification): string {
  if (notification.sample === true) return 'Nothing to do: `contract-sync notify test` sent this.';
  // While a policy finding stands, drift --fix would send nothing: fixing or excepting the finding comes first.
  if (notification.event === 'drift' && notification.denials !== undefined)
    return `${policyStandsStep(notification.denials)} Or change the desired state in git to keep the edit.`;
  if (notification.event === 'policy-denied' && notification.denials !== undefined)
    return policyStandsStep(notification.denials, undefined, notification.rerun);
  return NEXT[notification.event];
}

/** `and 3 more contracts`, or undefined when nothing was left out. */
export function moreText(total: number, listed: number, word: string): string | undefined {
  return total > listed ? `and ${plural(total - listed, `more ${word}`)}` : undefined;
}
