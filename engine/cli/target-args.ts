/** `--target` / `--exclude` of plan, apply and drift, parsed into a run's selection. */
import { parseTargetPattern, type TargetPattern } from '../desired/target.ts';
import { UsageError } from './io.ts';

/** `--target` and `--exclude` for parseArgs: plan, apply and drift take both. */
export const TARGET_OPTIONS = {
  target: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
} as const;

/** The help lines of `--target` / `--exclude`, descriptions starting at `column` (as the command's other options). */
export function targetHelp(column: number): string {
  const rows: [string, string[]][] = [
    ['--target TENANT/ID', ['plan, read and send only this contract (repeatable); selects its tenant', '(no --tenant needed). A target no desired-state file declares is an error']],
    ['--exclude TENANT/ID', ['leave this contract out (repeatable; the id may be a glob, e.g. acme/47*)']],
  ];
  return rows.map(([flag, text]) => text.map((line, index) => `${(index === 0 ? `  ${flag}` : '').padEnd(column)}${line}\n`).join('')).join('');
}

/** The values of `--target` / `--exclude`, checked: each must be TENANT/ID. */
export function parseTargetFlags(values: { readonly target?: readonly string[]; readonly exclude?: readonly string[] }): { targets: TargetPattern[]; excludes: TargetPattern[] } {
  function parse(flag: string, raw: readonly string[] | undefined): TargetPattern[] {
    return (raw ?? []).map((value) => {
      const pattern = parseTargetPattern(value);
      if (typeof pattern === 'string') throw new UsageError(`${flag}: ${pattern}`);
      return pattern;
    });
  }
  return { targets: parse('--target', values.target), excludes: parse('--exclude', values.exclude) };
}
