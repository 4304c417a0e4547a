import { describe, expect, it } from 'vitest';
import { parseQuotaPolicy, parseRateLimit, parseRetryAfter, type QuotaPolicy, type RateLimitState } from '../../engine/api/rate-headers.ts';

// Thursday 2026-01-01T00:00:00Z.
const NOW = Date.UTC(2026, 0, 1, 0, 0, 0);
const DAY_MS = 86_400_000;

describe('parseRetryAfter', () => {
  it.each<[string, string | null, number | undefined]>([
    ['absent', null, undefined],
    ['delay-seconds', '7', 7000],
    ['zero seconds', '0', 0],
    ['seconds with surrounding whitespace', ' 12 ', 12_000],
    ['an HTTP date 30 s in the future', 'Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    ['an HTTP date in the past', 'Wed, 31 Dec 2025 23:59:00 GMT', 0],
    ['an HTTP date equal to now', 'Thu, 01 Jan 2026 00:00:00 GMT', 0],
    ['more than a day of seconds, capped', '200000', DAY_MS],
    ['an HTTP date a week ahead, capped', 'Thu, 08 Jan 2026 00:00:00 GMT', DAY_MS],
    ['garbage', 'soon', undefined],
    ['empty', '', undefined],
    ['negative seconds', '-5', undefined],
    ['fractional seconds', '1.5', undefined],
    ['seconds with a unit', '5s', undefined],
    ['a weekday with an unreadable date', 'Thu, the first of January', undefined],
  ])('%s: %j -> %j ms', (_case, value, expected) => {
    const waitMs = parseRetryAfter(value, NOW);

    expect(waitMs).toBe(expected);
  });

  // RFC 9110 section 5.6.7: "A recipient that parses a timestamp value in an HTTP field MUST accept
  // all three HTTP-date formats." Only the IMF-fixdate form is accepted today.
  it.each<[string, string]>([
    ['the obsolete RFC 850 form', 'Thursday, 01-Jan-26 00:00:30 GMT'],
    ['the obsolete asctime form (always UTC)', 'Thu Jan  1 00:00:30 2026'],
  ])('accepts %s of an HTTP date', (_case, value) => {
    const waitMs = parseRetryAfter(value, NOW);

    expect(waitMs).toBe(30_000);
  });
});

/** A header source over a plain record, names case-insensitive like Fetch Headers. */
function headers(values: Record<string, string>): Headers {
  return new Headers(values);
}

describe('parseRateLimit', () => {
  it.each<[string, Record<string, string>, RateLimitState | undefined]>([
    ['no rate limit headers', {}, undefined],
    ['the structured form of the current drafts', { RateLimit: '"tenant";r=0;t=3' }, { remaining: 0, resetMs: 3000 }],
    ['the structured form with quota left', { RateLimit: '"default";r=42;t=60' }, { remaining: 42, resetMs: 60_000 }],
    ['the older dictionary form', { RateLimit: 'limit=10, remaining=0, reset=3' }, { remaining: 0, resetMs: 3000 }],
    ['the dictionary form in another order', { RateLimit: 'reset=5, limit=10, remaining=2' }, { remaining: 2, resetMs: 5000 }],
    ['separate RateLimit-Remaining / -Reset', { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '4' }, { remaining: 0, resetMs: 4000 }],
    ['X-RateLimit-* headers', { 'X-RateLimit-Remaining': '3', 'X-RateLimit-Reset': '10' }, { remaining: 3, resetMs: 10_000 }],
    ['a fractional reset', { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1.5' }, { remaining: 0, resetMs: 1500 }],
    ['the structured form with a reset beyond a day, capped', { RateLimit: '"tenant";r=0;t=1767225630' }, { remaining: 0, resetMs: DAY_MS }],
    ['an epoch-looking X-RateLimit-Reset, refused', { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1767225630' }, undefined],
    ['an epoch-looking RateLimit-Reset, refused', { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1767225630' }, undefined],
    ['a remaining without a reset', { 'X-RateLimit-Remaining': '0' }, undefined],
    ['a reset without a remaining', { 'RateLimit-Reset': '3' }, undefined],
    ['an unreadable remaining', { 'RateLimit-Remaining': 'none', 'RateLimit-Reset': '3' }, undefined],
    [
      'a structured form without t, falling back to separate headers',
      { RateLimit: '"tenant";r=0', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '2' },
      { remaining: 0, resetMs: 2000 },
    ],
    ['a structured form without t and nothing else', { RateLimit: '"tenant";r=0' }, undefined],
    [
      'several structured policies: the one with the fewest left binds',
      { RateLimit: '"burst";r=5;t=1, "daily";r=2;t=3600' },
      { remaining: 2, resetMs: 3_600_000 },
    ],
    ['several equally short: the latest reset binds', { RateLimit: '"burst";r=0;t=1, "daily";r=0;t=60' }, { remaining: 0, resetMs: 60_000 }],
    ['a structured member with a partition key', { RateLimit: '"default";r=7;t=2;pk=:dXNlcjEyMw==:' }, { remaining: 7, resetMs: 2000 }],
    ['a negative remaining, ignored', { RateLimit: '"tenant";r=-1;t=3' }, undefined],
  ])('%s', (_case, values, expected) => {
    const state = parseRateLimit(headers(values));

    expect(state).toEqual(expected);
  });

  it('reads any object with get(name), not only Fetch Headers', () => {
    const source = { get: (name: string) => ({ 'ratelimit-remaining': '1', 'ratelimit-reset': '2' })[name] ?? null };

    const state = parseRateLimit(source);

    expect(state).toEqual({ remaining: 1, resetMs: 2000 });
  });
});

describe('parseQuotaPolicy', () => {
  it.each<[string, Record<string, string>, QuotaPolicy | undefined]>([
    ['none published', {}, undefined],
    ['the structured form of drafts -08 to -10', { 'RateLimit-Policy': '"default";q=100;w=60' }, { quota: 100, windowMs: 60_000 }],
    ["the emulator's", { 'RateLimit-Policy': '"tenant";q=20;w=1' }, { quota: 20, windowMs: 1000 }],
    ['quota unit requests, stated', { 'RateLimit-Policy': '"default";q=10;qu="requests";w=1' }, { quota: 10, windowMs: 1000 }],
    ['the quota as the item, drafts -05 to -07', { 'RateLimit-Policy': '10;w=1' }, { quota: 10, windowMs: 1000 }],
    ['the window in RateLimit-Limit, drafts up to -05', { 'RateLimit-Limit': '100, 100;w=60' }, { quota: 100, windowMs: 60_000 }],
    [
      'a quota per second and one per day: the shortest window',
      { 'RateLimit-Policy': '"daily";q=1000;w=86400, "burst";q=100;w=1' },
      { quota: 100, windowMs: 1000 },
    ],
    ['two of the same window: the lower quota', { 'RateLimit-Policy': '"a";q=30;w=1, "b";q=20;w=1' }, { quota: 20, windowMs: 1000 }],
    ['RateLimit-Policy wins over RateLimit-Limit', { 'RateLimit-Policy': '"p";q=5;w=1', 'RateLimit-Limit': '1;w=1' }, { quota: 5, windowMs: 1000 }],
    ['a policy name holding a comma and a semicolon', { 'RateLimit-Policy': '"a,b;c";q=3;w=2' }, { quota: 3, windowMs: 2000 }],
    ['one malformed member among good ones is skipped', { 'RateLimit-Policy': '"bad";q=x;w=1, "good";q=4;w=2' }, { quota: 4, windowMs: 2000 }],
    ['a quota in bytes does not pace requests', { 'RateLimit-Policy': '"bytes";q=65536;qu="content-bytes";w=1' }, undefined],
    ['no window', { 'RateLimit-Policy': '"default";q=100' }, undefined],
    ['a window of 0', { 'RateLimit-Policy': '"default";q=100;w=0' }, undefined],
    ['a quota of 0', { 'RateLimit-Policy': '"default";q=0;w=1' }, undefined],
    ['a negative quota', { 'RateLimit-Policy': '"default";q=-5;w=1' }, undefined],
    ['garbage', { 'RateLimit-Policy': 'unlimited' }, undefined],
    ['a bare RateLimit-Limit says no window', { 'RateLimit-Limit': '100' }, undefined],
    ['X-RateLimit-Limit says no window', { 'X-RateLimit-Limit': '100' }, undefined],
    ['a window beyond a day, capped', { 'RateLimit-Policy': '"p";q=1;w=999999' }, { quota: 1, windowMs: DAY_MS }],
  ])('%s', (_case, values, expected) => {
    const policy = parseQuotaPolicy(headers(values));

    expect(policy).toEqual(expected);
  });
});
