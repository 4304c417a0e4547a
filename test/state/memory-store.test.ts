import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockTimeoutError, memoryStateStore, type AppliedContract, type KnownContracts, type TenantRunRecord } from '../../engine/state/index.ts';

const T0 = Date.UTC(2027, 0, 1);

function applied(contractId: string, name: string): AppliedContract {
  return { contractId, fields: { Name: name }, fingerprint: `sha256:${name}`, appliedAt: '2027-01-01T00:00:00.000Z', commit: null };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('memoryStateStore: contracts and run records', () => {
  it('reads the state it was given, then what was written, leaving the given state and earlier reads alone', async () => {
    const given: KnownContracts = new Map([['4711', { fields: { Name: 'before' }, from: 'state' }]]);
    const store = memoryStateStore(new Map([['acme', given]]));
    const before = await store.readTenant('acme');

    await store.writeContract('acme', applied('4711', 'after'));
    await store.writeContract('acme', applied('4712', 'new'));

    expect(before).toEqual(given);
    expect(given.get('4711')?.fields.Name).toBe('before');
    expect([...(await store.readTenant('acme'))]).toEqual([
      ['4711', { fields: { Name: 'after' }, from: 'state' }],
      ['4712', { fields: { Name: 'new' }, from: 'state' }],
    ]);
    expect(store.applied('acme').get('4711')).toStrictEqual(applied('4711', 'after'));
    expect((await store.readTenant('globex')).size).toBe(0);
  });

  it('reads only the contracts asked for', async () => {
    const store = memoryStateStore();
    for (const id of ['4711', '4712', '4713']) await store.writeContract('acme', applied(id, id));

    const known = await store.readTenant('acme', new Set(['4713', '4711', '9999']));

    expect([...known.keys()].sort()).toEqual(['4711', '4713']);
  });

  it('keeps copies, so that a caller changing its objects afterwards changes nothing stored', async () => {
    const store = memoryStateStore();
    const record = applied('4711', 'kept');
    const run: TenantRunRecord = { lastAppliedCommit: null, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' };

    await store.writeContract('acme', record);
    await store.writeRun('acme', run);
    (record.fields as { Name?: string }).Name = 'changed';
    (run.pending as unknown[]).push({ contractId: 'x' });

    expect((await store.readTenant('acme')).get('4711')?.fields.Name).toBe('kept');
    expect(await store.readRun('acme')).toStrictEqual({ lastAppliedCommit: null, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' });
  });

  it("keeps each pending entry's file and the planning fingerprint", async () => {
    const store = memoryStateStore();
    const run: TenantRunRecord = {
      lastAppliedCommit: 'c'.repeat(40),
      planningFingerprint: 'sha256:planning',
      pending: [{ contractId: '4711', outcome: 'failed', reason: 'r', since: 's', file: 'contracts/acme.yaml' }],
      updatedAt: 'u',
    };

    await store.writeRun('acme', run);

    expect(await store.readRun('acme')).toStrictEqual(run);
  });

  it('reads no run record before the first run', async () => {
    expect(await memoryStateStore().readRun('acme')).toBeUndefined();
  });

  it.each([
    ['a tenant that escapes', () => memoryStateStore().writeContract('../x', applied('4711', 'x')), /tenant: expected a name/],
    [
      'a run record with a bad outcome',
      () =>
        memoryStateStore().writeRun('acme', {
          lastAppliedCommit: null,
          pending: [{ contractId: '1', outcome: 'lost' as never, reason: 'r', since: 's' }],
          updatedAt: 'x',
        }),
      /"pending" entry/,
    ],
    ['lock options without owner', () => memoryStateStore().lock('acme', { timeoutMs: 0, owner: '' }), /options.owner/],
  ])('refuses %s with a TypeError', async (_name, call, message) => {
    await expect(call()).rejects.toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
  });
});

describe('memoryStateStore: lock', () => {
  it('hands the lock to waiters in order as each holder releases it', async () => {
    const store = memoryStateStore();
    const first = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    const order: string[] = [];
    const second = store.lock('acme', { timeoutMs: Number.POSITIVE_INFINITY, owner: 'run-2' }).then((lock) => (order.push('run-2'), lock));
    const third = store.lock('acme', { timeoutMs: Number.POSITIVE_INFINITY, owner: 'run-3' }).then((lock) => (order.push('run-3'), lock));
    const other = await store.lock('globex', { timeoutMs: 0, owner: 'run-4' });

    await Promise.resolve();
    const waitedWhileHeld = [...order];
    await first.release();
    await (await second).release();
    await (await third).release();

    expect(waitedWhileHeld).toEqual([]);
    expect(order).toEqual(['run-2', 'run-3']);
    expect(other.tenant).toBe('globex');
  });

  it('gives up after timeoutMs with a LockTimeoutError naming the holder', async () => {
    vi.useFakeTimers({ now: T0 });
    const store = memoryStateStore();
    await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });

    const waiting = store.lock('acme', { timeoutMs: 30_000, owner: 'run-2' }).catch((caught: unknown) => caught);
    await vi.advanceTimersByTimeAsync(29_999);
    const settledEarly = await Promise.race([waiting, Promise.resolve('pending')]);
    await vi.advanceTimersByTimeAsync(1);
    const error = await waiting;

    expect(settledEarly).toBe('pending');
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as Error).message).toBe(
      'tenant "acme" is locked by another run (owner "run-1", since 2027-01-01T00:00:00.000Z); gave up after waiting 30000 ms. ' +
        'Wait for that run to finish and try again (or allow a longer lock timeout).',
    );
  });

  it('fails at once with timeoutMs 0, and a timed-out waiter does not get the lock later', async () => {
    vi.useFakeTimers({ now: T0 });
    const store = memoryStateStore();
    const first = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    const timedOut = store.lock('acme', { timeoutMs: 10, owner: 'run-2' }).catch((caught: unknown) => caught);
    await vi.advanceTimersByTimeAsync(10);

    await expect(store.lock('acme', { timeoutMs: 0, owner: 'run-3' })).rejects.toThrow(LockTimeoutError);
    await first.release();
    const next = await store.lock('acme', { timeoutMs: 0, owner: 'run-4' });

    expect(await timedOut).toBeInstanceOf(LockTimeoutError);
    expect(next.tenant).toBe('acme');
  });

  it('releases idempotently, never releasing a later holder', async () => {
    const store = memoryStateStore();
    const first = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await first.release();
    const second = await store.lock('acme', { timeoutMs: 0, owner: 'run-2' });

    await first.release();

    await expect(store.lock('acme', { timeoutMs: 0, owner: 'run-3' })).rejects.toThrow(/owner "run-2"/);
    await second.release();
  });
});
