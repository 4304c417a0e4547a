/** `--auto-approve`, `--max-removals N`, `--allow-removals` and `--lock-timeout SECONDS` on apply and drift --fix. */
import type { SendingRequest } from '../run/types.ts';
import { UsageError } from './io.ts';
import { selectionOf, whereOf, type RunValues } from './run-args.ts';

export const CONFIRM_OPTIONS = {
  'auto-approve': { type: 'boolean', default: false },
  'max-removals': { type: 'string' },
  'allow-removals': { type: 'boolean', default: false },
  'override-policy': { type: 'string', multiple: true },
  reason: { type: 'string' },
} as const;

/** The option lines of a command's help, descriptions starting at `column`. */
export function confirmHelp(column: number, run: string): string {
  const indent = ' '.repeat(column);
  return [
    `${'  --auto-approve'.padEnd(column)}send without asking (a question is asked only when stdin is a terminal,`,
    `${indent}whatever stdout is; without one, as in CI, ${run} never asks)`,
    `${'  --max-removals N'.padEnd(column)}refuse a tenant whose plan removes more than N collection members`,
    `${indent}(default: safety.maxRemovals in the config, else 25)`,
    `${'  --allow-removals'.padEnd(column)}lift the removal guard for this run`,
    `${'  --override-policy NAME'.padEnd(column)}lift the policy rule NAME (action: override) for this run; repeatable;`,
    `${indent}needs --reason TEXT, recorded in the run history with who ran it`,
  ].join('\n');
}

const DEFAULT_LOCK_TIMEOUT_SECONDS = 60;

/** Milliseconds to wait for another run's lock on each tenant (a run takes its tenants' locks one at a time). */
function parseLockTimeout(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LOCK_TIMEOUT_SECONDS * 1000;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`--lock-timeout must be a number of seconds; got "${value}"`);
  return Number(value) * 1000;
}

/** `--max-removals N`, checked before anything is read. */
export function parseMaxRemovals(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,7}$/.test(value)) throw new UsageError(`--max-removals must be a whole number of collection members, 0 or more; got "${value}"`);
  return Number(value);
}

/** What apply and drift ask of a run that may send: where, what, how long to wait for a lock, and the removal guard. */
export function sendingRequest(
  values: RunValues & {
    readonly 'lock-timeout'?: string;
    readonly 'max-removals'?: string;
    readonly 'allow-removals': boolean;
    readonly 'override-policy'?: readonly string[];
    readonly reason?: string;
  },
): SendingRequest {
  const lockTimeoutMs = parseLockTimeout(values['lock-timeout']);
  const max = parseMaxRemovals(values['max-removals']);
  const overrides = parseOverrides(values['override-policy'], values.reason);
  return {
    where: whereOf(values),
    selection: selectionOf(values),
    lockTimeoutMs,
    removals: { ...(max === undefined ? {} : { max }), allow: values['allow-removals'] },
    ...(overrides ? { overrides } : {}),
  };
}

/** `--override-policy NAME ... --reason TEXT`: both or neither; the reason is recorded, so it must say something. */
export function parseOverrides(policies: readonly string[] | undefined, reason: string | undefined): SendingRequest['overrides'] {
  if (policies === undefined || policies.length === 0) {
    if (reason !== undefined) throw new UsageError('--reason goes with --override-policy NAME: it says why the rule is lifted');
    return undefined;
  }
  if (reason === undefined || reason.trim() === '')
    throw new UsageError('--override-policy needs --reason TEXT: why the rule is lifted, recorded in the run history');
  for (const name of policies) if (!/^[a-z0-9-]+$/.test(name)) throw new UsageError(`--override-policy takes a policy rule's name ([a-z0-9-]+); got "${name}"`);
  return { policies: [...new Set(policies)], reason: reason.trim() };
}
