/** `--auto-approve`, `--max-removals N` and `--allow-removals` on apply and drift --fix. */
import type { SendingRequest } from '../run/types.ts';
import { UsageError } from './io.ts';
import { parseLockTimeout } from './lock-timeout.ts';
import { selectionOf, whereOf, type RunValues } from './run-args.ts';

export const CONFIRM_OPTIONS = {
  'auto-approve': { type: 'boolean', default: false },
  'max-removals': { type: 'string' },
  'allow-removals': { type: 'boolean', default: false },
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
  ].join('\n');
}

/** `--max-removals N`, checked before anything is read. */
export function parseMaxRemovals(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,7}$/.test(value)) throw new UsageError(`--max-removals must be a whole number of collection members, 0 or more; got "${value}"`);
  return Number(value);
}

/** What apply and drift ask of a run that may send: where, what, how long to wait for a lock, and the removal guard. */
export function sendingRequest(
  values: RunValues & { readonly 'lock-timeout'?: string; readonly 'max-removals'?: string; readonly 'allow-removals': boolean },
): SendingRequest {
  const lockTimeoutMs = parseLockTimeout(values['lock-timeout']);
  const max = parseMaxRemovals(values['max-removals']);
  return {
    where: whereOf(values),
    selection: selectionOf(values),
    lockTimeoutMs,
    removals: { ...(max === undefined ? {} : { max }), allow: values['allow-removals'] },
  };
}
