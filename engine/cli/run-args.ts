/** The flags plan, apply and drift share (`--config`, `--repo`, `--ref`, `--tenant`, `--shard`, `--target`, `--exclude`), parsed into a run's request. */
import { describeShard, parseShard, ShardFormatError, type Shard, type ShardSelection } from '../desired/shard.ts';
import { parseTargetPattern, type TargetPattern } from '../desired/target.ts';
import type { RunSelection, RunWhere } from '../run/types.ts';
import { isInteractive, UsageError, type CliIo } from './io.ts';

/** For parseArgs: the config and the repository a command reads. */
export const WHERE_OPTIONS = {
  config: { type: 'string' },
  repo: { type: 'string', default: '.' },
} as const;

/** For parseArgs: where a run reads, and what it selects. */
export const RUN_OPTIONS = {
  ...WHERE_OPTIONS,
  ref: { type: 'string' },
  tenant: { type: 'string', multiple: true },
  shard: { type: 'string' },
  target: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
} as const;

export interface RunValues {
  readonly config?: string;
  readonly repo: string;
  readonly ref?: string;
  readonly tenant?: readonly string[];
  readonly shard?: string;
  readonly target?: readonly string[];
  readonly exclude?: readonly string[];
}

export function whereOf(values: Pick<RunValues, 'config' | 'repo' | 'ref'>): RunWhere {
  return { repo: values.repo, ...(values.config === undefined ? {} : { config: values.config }), ...(values.ref === undefined ? {} : { ref: values.ref }) };
}

export function selectionOf(values: RunValues): RunSelection {
  const shard = parseShardArg(values.shard);
  return { ...(values.tenant ? { tenants: values.tenant } : {}), ...(shard ? { shard } : {}), ...parseTargetFlags(values) };
}

/** The help lines of `--target` / `--exclude`, descriptions starting at `column` (as the command's other options). */
export function targetHelp(column: number): string {
  const rows: [string, string[]][] = [
    [
      '--target TENANT/ID',
      ['plan, read and send only this contract (repeatable); selects its tenant', '(no --tenant needed). A target no desired-state file declares is an error'],
    ],
    ['--exclude TENANT/ID', ['leave this contract out (repeatable; the id may be a glob, e.g. acme/47*)']],
  ];
  return rows.map(([flag, text]) => text.map((line, index) => `${(index === 0 ? `  ${flag}` : '').padEnd(column)}${line}\n`).join('')).join('');
}

/** The values of `--target` / `--exclude`, checked: each must be TENANT/ID. */
function parseTargetFlags(values: { readonly target?: readonly string[]; readonly exclude?: readonly string[] }): {
  targets: TargetPattern[];
  excludes: TargetPattern[];
} {
  function parse(flag: string, raw: readonly string[] | undefined): TargetPattern[] {
    return (raw ?? []).map((value) => {
      const pattern = parseTargetPattern(value);
      if (typeof pattern === 'string') throw new UsageError(`${flag}: ${pattern}`);
      return pattern;
    });
  }
  return { targets: parse('--target', values.target), excludes: parse('--exclude', values.exclude) };
}

/** The `--shard` lines of a command's help, its description starting at `column`; `auto` for commands that send. */
export function shardHelp(column: number, auto = true): string {
  const indent = ' '.repeat(column);
  const lines = [
    `${'  --shard I/N'.padEnd(column)}take only the tenants of shard I of N (1 ≤ I ≤ N): each tenant is on`,
    `${indent}exactly one shard, chosen by a hash of its name, the same in every run for a`,
    `${indent}given N; with --tenant, the tenants named that are on the shard`,
  ];
  if (!auto) return lines.join('\n');
  return [
    ...lines,
    `${'  --shard auto'.padEnd(column)}be one of any number of workers sharing this run through the PostgreSQL`,
    `${indent}state store: each takes the largest tenant no worker has taken, until none is`,
    `${indent}left; a dead worker's tenant is taken over (README: Scaling out)`,
  ].join('\n');
}

/**
 * `--shard auto` runs unattended and sends: refused with a dry run (nothing to share), with drift
 * without --fix, and on a terminal without --auto-approve (a worker never asks).
 */
export function checkSharedRun(
  io: CliIo,
  selection: RunSelection,
  run: { readonly sends: boolean; readonly notSending: string; readonly autoApprove: boolean },
): void {
  if (selection.shard !== 'auto') return;
  if (!run.sends) throw new UsageError(`--shard auto shares a run that sends between workers; ${run.notSending} sends nothing: use --shard I/N`);
  if (!run.autoApprove && isInteractive(io)) {
    throw new UsageError(
      '--shard auto does not ask before sending (each worker sends as it takes tenants): pass --auto-approve, or review the change with contract-sync plan first',
    );
  }
}

function parseShardArg(value: string | undefined): Shard | 'auto' | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === 'auto') return 'auto';
  try {
    return parseShard(value);
  } catch (error) {
    if (error instanceof ShardFormatError) throw new UsageError(`--shard ${error.message}`);
    throw error;
  }
}

/** Says that the run was sharded, on `stream` (stdout unless that carries a document). */
export function reportShard(io: CliIo, selection: ShardSelection | undefined, stream: 'stdout' | 'stderr'): void {
  if (selection !== undefined) io[stream].write(`${describeShard(selection)}\n`);
}
