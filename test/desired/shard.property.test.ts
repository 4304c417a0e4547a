/** `--shard I/N`: a stable partition of the tenants, each tenant's shard independent of the others. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeShard, parseShard, selectShard, shardOf, ShardFormatError } from '../../engine/desired/shard.ts';

const tenantKey = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const tenantSet = fc.uniqueArray(tenantKey, { maxLength: 60 });
const shardCount = fc.integer({ min: 1, max: 12 });

describe('shard selection', () => {
  it('the shards 1..N of a tenant set partition it: every tenant on exactly one, in its order', () => {
    fc.assert(
      fc.property(tenantSet, shardCount, (tenants, count) => {
        const shards = Array.from({ length: count }, (_, index) => selectShard(tenants, { index: index + 1, count }));

        const all = shards.flatMap((shard) => shard.tenants);
        expect([...all].sort()).toEqual([...tenants].sort());
        expect(new Set(all).size).toBe(tenants.length);
        for (const shard of shards) {
          expect(shard.of).toBe(tenants.length);
          expect(shard.tenants).toEqual(tenants.filter((tenant) => shard.tenants.includes(tenant)));
        }
      }),
    );
  });

  it("a tenant's shard does not depend on the other tenants", () => {
    fc.assert(
      fc.property(tenantSet, tenantSet, shardCount, fc.nat(), (tenants, others, count, pick) => {
        const index = (pick % count) + 1;

        const alone = selectShard(tenants, { index, count }).tenants;
        const among = selectShard([...others, ...tenants], { index, count }).tenants.filter((tenant) => tenants.includes(tenant));

        expect(new Set(among)).toEqual(new Set(alone));
        for (const tenant of alone) expect(shardOf(tenant, count)).toBe(index);
      }),
    );
  });

  it('is stable across versions: sha256 of the key, first 4 bytes big-endian, mod N', () => {
    // sha256("acme") starts 0x822b33ad..., sha256("globex") 0x5bc1a08d...: changing the hash would move tenants between CI jobs.
    expect([shardOf('acme', 4), shardOf('acme', 7), shardOf('globex', 4), shardOf('globex', 3)]).toEqual([
      (0x822b33ad % 4) + 1,
      (0x822b33ad % 7) + 1,
      (0x5bc1a08d % 4) + 1,
      (0x5bc1a08d % 3) + 1,
    ]);
    expect(shardOf('anything', 1)).toBe(1);
  });

  it.each([
    ['1/1', { index: 1, count: 1 }],
    ['2/4', { index: 2, count: 4 }],
    ['4/4', { index: 4, count: 4 }],
    [' 3/10 ', { index: 3, count: 10 }],
  ])('parses %j', (text, shard) => {
    expect(parseShard(text)).toEqual(shard);
  });

  it.each([
    ['0/4', 'between 1 and 4'],
    ['5/4', 'between 1 and 4'],
    ['1/0', 'at least 1'],
    ['2', 'is not I/N'],
    ['a/b', 'is not I/N'],
    ['-1/4', 'is not I/N'],
    ['1.5/4', 'is not I/N'],
    ['', 'is not I/N'],
  ])('refuses %j', (text, message) => {
    expect(() => parseShard(text)).toThrow(ShardFormatError);
    expect(() => parseShard(text)).toThrow(message);
  });

  it('describes the selection', () => {
    expect(describeShard({ shard: { index: 2, count: 4 }, tenants: ['a', 'b'], of: 5 })).toBe('shard 2/4: 2 of 5 tenants');
    expect(describeShard({ shard: { index: 1, count: 2 }, tenants: [], of: 1 })).toBe('shard 1/2: 0 of 1 tenant; nothing to do on this shard');
  });
});
