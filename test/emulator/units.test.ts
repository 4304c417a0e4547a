import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FaultInjector, validateFaults } from '../../emulator/faults.ts';
import { isJsonContentType, isLoopbackAddress } from '../../emulator/http.ts';
import { seededRandom } from '../../emulator/prng.ts';
import { RateLimiter } from '../../emulator/rate-limit.ts';

describe('FaultInjector', () => {
  it('draws each outcome with its probability', () => {
    const injector = new FaultInjector({ seed: 9, api: { status: { '503': 0.2, '500': 0.1 }, resetBefore: 0.05, resetAfter: 0.15 } });
    const counts = new Map<string, number>();

    for (let i = 0; i < 20_000; i += 1) {
      const fault = injector.next('api');
      const key = fault === null ? 'none' : fault.type === 'status' ? String(fault.status) : fault.type;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }

    function share(key: string): number {
      return (counts.get(key) ?? 0) / 20_000;
    }
    expect(share('503')).toBeCloseTo(0.2, 1);
    expect(share('500')).toBeCloseTo(0.1, 1);
    expect(share('resetBefore')).toBeCloseTo(0.05, 1);
    expect(share('resetAfter')).toBeCloseTo(0.15, 1);
    expect(share('none')).toBeCloseTo(0.5, 1);
  });

  it('gives the same sequence for the same seed, whatever the token traffic in between', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.array(fc.boolean(), { maxLength: 50 }), (seed, tokenFirst) => {
        const config = { seed, api: { status: { '503': 0.5 } }, token: { status: { '429': 0.5 } } };
        const plain = new FaultInjector(config);
        const mixed = new FaultInjector(config);

        const expected = tokenFirst.map(() => plain.next('api'));
        const actual = tokenFirst.map((token) => {
          if (token) mixed.next('token');
          return mixed.next('api');
        });

        expect(actual).toEqual(expected);
      }),
    );
  });

  it('keeps latency inside [min, max]', () => {
    const injector = new FaultInjector({ seed: 1, token: { latencyMs: [5, 9] } });

    const latencies = Array.from({ length: 500 }, () => injector.next('token')?.latencyMs);

    expect(new Set(latencies)).toEqual(new Set([5, 6, 7, 8, 9]));
  });

  it('accepts the fault body of docs/architecture.md section 6', () => {
    const body = {
      seed: 42,
      api: { status: { '503': 0.2, '429': 0.1 }, retryAfterSeconds: 1, latencyMs: [0, 50], resetBefore: 0.02, resetAfter: 0.05 },
      token: { status: { '503': 0.05 }, latencyMs: [0, 20] },
    };

    expect(validateFaults(body)).toEqual([]);
  });
});

describe('seededRandom', () => {
  it('stays in [0, 1) and repeats per seed', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);

    const values = Array.from({ length: 1000 }, () => a());

    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(Array.from({ length: 1000 }, () => b())).toEqual(values);
  });
});

describe('RateLimiter', () => {
  it('allows a burst, then refills at the rate', () => {
    let now = 0;
    const limiter = new RateLimiter({ requestsPerSecond: 4, burst: 2 }, () => now);

    const burst = [limiter.take('t'), limiter.take('t'), limiter.take('t')].map((d) => d.allowed);
    now += 250;
    const refilled = limiter.take('t');

    expect(burst).toEqual([true, true, false]);
    expect(refilled.allowed).toBe(true);
  });

  it('never allows more than burst + rate x time', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 200 }), (gaps) => {
        let now = 0;
        const limiter = new RateLimiter({ requestsPerSecond: 10, burst: 5 }, () => now);
        let allowed = 0;
        for (const gap of gaps) {
          now += gap;
          if (limiter.take('t').allowed) allowed += 1;
        }
        expect(allowed).toBeLessThanOrEqual(5 + Math.floor((now / 1000) * 10));
      }),
    );
  });

  it.each<[number, number, string]>([
    [20, 20, '"tenant";q=20;w=1'],
    [2, 3, '"tenant";q=4;w=2'],
    [20, 50, '"tenant";q=60;w=3'],
    [0.5, 1, '"tenant";q=1;w=2'],
    [0.3, 1, '"tenant";q=1;w=4'],
  ])('publishes a policy no faster than %d requests/second refill a bucket of %d: %s', (requestsPerSecond, burst, policy) => {
    const limiter = new RateLimiter({ requestsPerSecond, burst }, () => 0);

    const headers = limiter.headers(limiter.take('t'));

    expect(headers['RateLimit-Policy']).toBe(policy);
  });

  it('refuses a bad policy with a TypeError naming it', () => {
    expect(() => new RateLimiter({ requestsPerSecond: 0, burst: 1 }, Date.now)).toThrow(/requestsPerSecond must be > 0, got 0/);
  });
});

describe('http helpers', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:192.168.1.2', false],
    [undefined, false],
  ])('isLoopbackAddress(%s) is %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });

  it.each([
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/json-patch+json', false],
    ['text/json', false],
    [undefined, false],
  ])('isJsonContentType(%s) is %s', (type, expected) => {
    expect(isJsonContentType(type)).toBe(expected);
  });
});
