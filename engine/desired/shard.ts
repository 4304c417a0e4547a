/**
 * Sharded runs (`--shard I/N`): N jobs of a CI matrix, or N machines, each take the tenants of
 * one shard, so that together they cover the fleet once. A tenant's shard depends only on its key
 * and N (the first 4 bytes of sha256(key), big-endian, mod N): the same tenant lands on the same
 * shard in every run, whatever the other tenants are, and every tenant on exactly one shard.
 * Pure.
 */
import { createHash } from 'node:crypto';

/** Shard `index` (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** What a sharded run took: `tenants` of the `of` tenants it was given. */
export interface ShardSelection {
  readonly shard: Shard;
  readonly tenants: readonly string[];
  readonly of: number;
}

export class ShardFormatError extends Error {
  readonly code = 'shard-format';
}

/** `I/N` with 1 ≤ I ≤ N; the message names what is wrong with `text`. */
export function parseShard(text: string): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) throw new ShardFormatError(`"${text}" is not I/N (e.g. 2/4: the second of four shards)`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (!Number.isSafeInteger(count) || count < 1) throw new ShardFormatError(`"${text}": the number of shards must be at least 1`);
  if (!Number.isSafeInteger(index) || index < 1 || index > count) throw new ShardFormatError(`"${text}": the shard must be between 1 and ${count}`);
  return { index, count };
}

/** The shard (1-based) of `count` that `tenant` belongs to. */
export function shardOf(tenant: string, count: number): number {
  if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`shardOf: count must be a positive integer, got ${count}`);
  return (createHash('sha256').update(tenant, 'utf8').digest().readUInt32BE(0) % count) + 1;
}

/** The tenants of `tenants` on `shard`, in their order. */
export function selectShard(tenants: readonly string[], shard: Shard): ShardSelection {
  return { shard, tenants: tenants.filter((tenant) => shardOf(tenant, shard.count) === shard.index), of: tenants.length };
}

/** E.g. "shard 2/4: 13 of 50 tenants". */
export function describeShard(selection: ShardSelection): string {
  const { shard, tenants, of } = selection;
  return `shard ${shard.index}/${shard.count}: ${tenants.length} of ${of} tenant${of === 1 ? '' : 's'}${tenants.length === 0 ? '; nothing to do on this shard' : ''}`;
}
