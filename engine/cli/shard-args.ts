/** `--shard I/N` on plan, apply and drift: parsed here, the tenants selected in engine/desired/shard.ts. */
import { describeShard, parseShard, ShardFormatError, type Shard, type ShardSelection } from '../desired/shard.ts';
import { UsageError, type CliIo } from './io.ts';

export const SHARD_OPTION = { shard: { type: 'string' } } as const;

/** The `--shard` lines of a command's help, its description starting at `column`. */
export function shardHelp(column: number): string {
  const indent = ' '.repeat(column);
  return [
    `${'  --shard I/N'.padEnd(column)}take only the tenants of shard I of N (1 ≤ I ≤ N): each tenant is on`,
    `${indent}exactly one shard, chosen by a hash of its name, the same in every run for a`,
    `${indent}given N; with --tenant, the tenants named that are on the shard`,
  ].join('\n');
}

export function parseShardArg(value: string | undefined): Shard | undefined {
  if (value === undefined) return undefined;
  try {
    return parseShard(value);
  } catch (error) {
    if (error instanceof ShardFormatError) throw new UsageError(`--shard ${error.message}`);
    throw error;
  }
}

/**
 * Says that the run was sharded, on `stream` (stdout unless that carries a document). True when
 * the shard holds no tenant: the command has nothing to do and exits 0.
 */
export function reportShard(io: CliIo, selection: ShardSelection | undefined, stream: 'stdout' | 'stderr'): boolean {
  if (selection === undefined) return false;
  io[stream].write(`${describeShard(selection)}\n`);
  return selection.tenants.length === 0;
}
