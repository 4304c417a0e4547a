import { describe, expect, it } from 'vitest';
import type { QuotaPolicy, RateLimitState } from '../../engine/api/rate-headers.ts';
import { QuotaPacer } from '../../engine/apply/quota-pacer.ts';

const TEN_PER_SECOND: QuotaPolicy = { quota: 10, windowMs: 1000 };

/** Books `count` starts at `now` with a backlog far above any credit. */
function book(pacer: QuotaPacer, now: number, count: number): number[] {
  return Array.from({ length: count }, () => pacer.reserve(now, 1_000_000));
}

describe('QuotaPacer: spacing', () => {
  it('spaces nothing while no policy is known', () => {
    const pacer = new QuotaPacer();

    expect(book(pacer, 5, 3)).toEqual([5, 5, 5]);
    expect(pacer.intervalMs).toBeUndefined();
  });

  it('spaces starts w/q apart once a policy is learned, from the last start sent unpaced', () => {
    const pacer = new QuotaPacer();
    pacer.reserve(0, 1_000_000);

    pacer.observe(undefined, TEN_PER_SECOND, 0, 2);

    expect(book(pacer, 0, 3)).toEqual([100, 200, 300]);
  });

  it('books each start from the one before, not from when it is asked: a late timer does not shift the rest', () => {
    const pacer = new QuotaPacer();
    pacer.observe(undefined, TEN_PER_SECOND, 0, 2);
    const [first] = book(pacer, 0, 1);

    const second = pacer.reserve(30, 1_000_000);
    const third = pacer.reserve(130, 1_000_000);

    expect([first, second, third]).toEqual([0, 100, 200]);
  });

  it('starts at once after an idle spell longer than the interval', () => {
    const pacer = new QuotaPacer();
    pacer.observe(undefined, TEN_PER_SECOND, 0, 2);
    pacer.reserve(0, 1_000_000);

    expect(pacer.reserve(5000, 1_000_000)).toBe(5000);
  });

  it('takes a changed policy from the next start on', () => {
    const pacer = new QuotaPacer();
    pacer.observe(undefined, TEN_PER_SECOND, 0, 2);
    const before = book(pacer, 0, 2);

    pacer.observe(undefined, { quota: 2, windowMs: 1000 }, 0, 2);

    expect([...before, ...book(pacer, 0, 2)]).toEqual([0, 100, 600, 1100]);
  });

  it.each<[string, QuotaPolicy, number[]]>([
    ['as fast as the configured rate: the queue spaces it already', TEN_PER_SECOND, [0, 0, 0]],
    ['faster than the configured rate: the configured rate is the ceiling', { quota: 100, windowMs: 1000 }, [0, 0, 0]],
    ['slower than the configured rate: spaced by the policy', { quota: 5, windowMs: 1000 }, [0, 200, 400]],
  ])('a policy %s', (_case, policy, starts) => {
    const pacer = new QuotaPacer({ configuredIntervalMs: 100, maxIntervalMs: Number.POSITIVE_INFINITY });
    pacer.observe(undefined, policy, 0, 2);

    expect(book(pacer, 0, 3)).toEqual(starts);
  });

  it('spaces no more than its longest interval, however slow the policy', () => {
    const pacer = new QuotaPacer({ configuredIntervalMs: 0, maxIntervalMs: 300_000 });
    pacer.observe(undefined, { quota: 1, windowMs: 3_600_000 }, 0, 2);

    expect(book(pacer, 0, 2)).toEqual([0, 300_000]);
    expect(pacer.intervalMs).toBe(300_000);
  });

  it('does not space what fits into the quota left, and spaces again once it does not', () => {
    const pacer = new QuotaPacer();
    pacer.observe({ remaining: 3, resetMs: 1000 }, TEN_PER_SECOND, 0, 2);

    const starts = [pacer.reserve(0, 3), pacer.reserve(0, 2), pacer.reserve(0, 1), pacer.reserve(0, 5)];

    // The credit is spent: the fourth is paced after the third.
    expect(starts).toEqual([0, 0, 0, 100]);
  });

  it('spaces a backlog larger than the quota left', () => {
    const pacer = new QuotaPacer();
    pacer.observe({ remaining: 3, resetMs: 1000 }, TEN_PER_SECOND, 0, 2);

    expect([pacer.reserve(0, 4), pacer.reserve(0, 3)]).toEqual([0, 100]);
  });
});

describe('QuotaPacer: holds after an answer', () => {
  it.each<[string, RateLimitState | undefined, QuotaPolicy | undefined, number, number]>([
    ['nothing reported', undefined, undefined, 0, 0],
    ['a policy and no quota state', undefined, TEN_PER_SECOND, 0, 0],
    // Without a policy: the rule of old, until the reset once fewer are left than the concurrency.
    ['no policy, remaining equal to the concurrency', { remaining: 2, resetMs: 5000 }, undefined, 0, 0],
    ['no policy, remaining below the concurrency', { remaining: 1, resetMs: 5000 }, undefined, 0, 5000],
    ['no policy, nothing remaining', { remaining: 0, resetMs: 5000 }, undefined, 0, 5000],
    ['no policy, nothing remaining but already reset', { remaining: 0, resetMs: 0 }, undefined, 0, 0],
    // With a policy: only for the shortfall.
    ['a policy, one left and nothing in flight', { remaining: 1, resetMs: 5000 }, TEN_PER_SECOND, 0, 0],
    ['a policy, one left and one in flight: short of one request', { remaining: 1, resetMs: 5000 }, TEN_PER_SECOND, 1, 100],
    ['a policy, two left and four in flight: short of three', { remaining: 2, resetMs: 5000 }, TEN_PER_SECOND, 4, 300],
    ['a policy, a shortfall longer than the reset: until the reset', { remaining: 1, resetMs: 150 }, TEN_PER_SECOND, 4, 150],
    ['a policy, nothing remaining: exactly until the reset', { remaining: 0, resetMs: 3000 }, TEN_PER_SECOND, 0, 3000],
    ['a policy, nothing remaining but already reset', { remaining: 0, resetMs: 0 }, TEN_PER_SECOND, 0, 0],
  ])('%s', (_case, state, policy, othersInFlight, holdMs) => {
    const pacer = new QuotaPacer();

    const hold = pacer.observe(state, policy, othersInFlight, 2);

    expect(hold).toBe(holdMs);
  });

  it('keeps a policy learned earlier when an answer publishes none', () => {
    const pacer = new QuotaPacer();
    pacer.observe(undefined, TEN_PER_SECOND, 0, 2);

    const hold = pacer.observe({ remaining: 1, resetMs: 5000 }, undefined, 1, 2);

    expect(pacer.intervalMs).toBe(100);
    expect(hold).toBe(100);
  });
});
