import { describe, expect, it } from 'vitest';
import { createTokenCache, REFRESH_RETRY_MS, type FetchedToken, type TokenCache } from '../../engine/auth/token-cache.ts';
import { captureLog } from './log-capture.ts';

const START = Date.UTC(2027, 0, 1);

interface Deferred {
  readonly tenant: string;
  resolve(token: FetchedToken): void;
  reject(error: Error): void;
}

/** A cache over a token source whose every request stays open until the test answers it. */
function setup(): { cache: TokenCache; requests: Deferred[]; clock: { now: number }; lines: string[] } {
  const clock = { now: START };
  const requests: Deferred[] = [];
  const { logger, lines } = captureLog();
  function fetchToken(tenant: string): Promise<FetchedToken> {
    return new Promise((resolve, reject) => requests.push({ tenant, resolve, reject }));
  }
  const cache = createTokenCache({ fetchToken, now: () => clock.now, logger });
  return { cache, requests, clock, lines };
}

/** Lets settled promises run their reactions. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
}

function token(name: string, expiresInSeconds = 3600): FetchedToken {
  return { accessToken: name, expiresInSeconds };
}

/** Fetches the first token of `tenant` and returns it. */
async function prime(context: ReturnType<typeof setup>, name: string, expiresInSeconds = 3600, tenant = 'acme'): Promise<void> {
  const first = context.cache.get(tenant);
  await settle();
  context.requests.at(-1)!.resolve(token(name, expiresInSeconds));
  expect(await first).toBe(name);
}

describe('single flight', () => {
  it('makes one token request for 50 concurrent callers and gives each the same token', async () => {
    const { cache, requests } = setup();

    const callers = Array.from({ length: 50 }, () => cache.get('acme'));
    await settle();
    requests[0]!.resolve(token('t1'));

    expect(await Promise.all(callers)).toEqual(Array.from({ length: 50 }, () => 't1'));
    expect(requests).toHaveLength(1);
  });

  it('makes one request per tenant for two tenants in parallel', async () => {
    const { cache, requests } = setup();

    const callers = [...Array.from({ length: 20 }, () => cache.get('acme')), ...Array.from({ length: 20 }, () => cache.get('globex'))];
    await settle();
    for (const request of requests) request.resolve(token(`token-of-${request.tenant}`));

    const tokens = await Promise.all(callers);
    expect(requests.map((request) => request.tenant)).toEqual(['acme', 'globex']);
    expect(new Set(tokens.slice(0, 20))).toEqual(new Set(['token-of-acme']));
    expect(new Set(tokens.slice(20))).toEqual(new Set(['token-of-globex']));
  });

  it('rejects every waiter of a failed first request, and the next call tries again', async () => {
    const { cache, requests } = setup();
    const callers = Array.from({ length: 10 }, () => cache.get('acme'));
    await settle();

    requests[0]!.reject(new Error('token endpoint down'));
    const results = await Promise.allSettled(callers);
    const retried = cache.get('acme');
    await settle();
    requests[1]!.resolve(token('t2'));

    expect(results.every((result) => result.status === 'rejected' && (result.reason as Error).message === 'token endpoint down')).toBe(true);
    expect(await retried).toBe('t2');
    expect(requests).toHaveLength(2);
  });

  it('recovers when the token source throws synchronously', async () => {
    let calls = 0;
    const { logger } = captureLog();
    function fetchToken(): Promise<FetchedToken> {
      calls += 1;
      if (calls === 1) throw new Error('synchronous failure');
      return Promise.resolve(token('t2'));
    }
    const cache = createTokenCache({ fetchToken, now: () => START, logger });

    const first = cache.get('acme');
    await expect(first).rejects.toThrow('synchronous failure');
    const second = await cache.get('acme');

    expect(second).toBe('t2');
    expect(calls).toBe(2);
  });
});

describe('refresh on the injected clock', () => {
  it.each([
    ['a 1 h token, 60 s before expiry', 3600, 3540_000],
    ['a 121 s token, 60 s before expiry', 121, 61_000],
    ['a 120 s token, at half life', 120, 60_000],
    ['a 100 s token, at half life', 100, 50_000],
    ['a 1 s token, at half life', 1, 500],
  ])('refreshes %s, not a ms earlier, exactly once', async (_case, expiresIn, refreshAfterMs) => {
    const context = setup();
    await prime(context, 't1', expiresIn);

    context.clock.now = START + refreshAfterMs - 1;
    const before = await context.cache.get('acme');
    context.clock.now = START + refreshAfterMs;
    const during = Array.from({ length: 10 }, () => context.cache.get('acme'));
    await settle();
    context.requests[1]?.resolve(token('t2', expiresIn));
    const refreshed = await Promise.all(during);
    const after = await context.cache.get('acme');

    expect(before).toBe('t1');
    expect(new Set(refreshed)).toEqual(new Set(['t2']));
    expect(after).toBe('t2');
    expect(context.requests).toHaveLength(2);
  });

  it('counts the life from local receipt, not from when the request was sent', async () => {
    const context = setup();
    const first = context.cache.get('acme');
    await settle();

    context.clock.now = START + 30_000;
    context.requests[0]!.resolve(token('t1', 3600));
    await first;
    context.clock.now = START + 30_000 + 3540_000 - 1;
    const cached = await context.cache.get('acme');

    expect(cached).toBe('t1');
    expect(context.requests).toHaveLength(1);
  });

  it('serves the current token when a refresh fails before expiry, logs a warning, and waits before trying again', async () => {
    const context = setup();
    await prime(context, 't1', 3600);
    context.clock.now = START + 3550_000;

    const during = context.cache.get('acme');
    await settle();
    context.requests[1]!.reject(Object.assign(new Error('HTTP 503'), { code: 'auth-token-endpoint' }));
    const served = await during;
    context.clock.now += REFRESH_RETRY_MS - 1;
    const stillServed = await context.cache.get('acme');
    context.clock.now += 1;
    const retry = context.cache.get('acme');
    await settle();
    context.requests[2]!.resolve(token('t2'));

    expect(served).toBe('t1');
    expect(stillServed).toBe('t1');
    expect(await retry).toBe('t2');
    expect(context.requests).toHaveLength(3);
    const warnings = context.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        tenant: 'acme',
        code: 'auth-token-endpoint',
        validForSeconds: 50,
        msg: 'access token refresh failed; serving the current token until it expires',
      }),
    ]);
  });

  it('rejects when the refresh fails after the current token expired', async () => {
    const context = setup();
    await prime(context, 't1', 3600);
    context.clock.now = START + 3600_000;

    const after = context.cache.get('acme');
    await settle();
    context.requests[1]!.reject(new Error('token endpoint down'));

    await expect(after).rejects.toThrow('token endpoint down');
  });

  it('rejects when the token expires while its refresh is in flight', async () => {
    const context = setup();
    await prime(context, 't1', 3600);
    context.clock.now = START + 3550_000;

    const during = context.cache.get('acme');
    await settle();
    context.clock.now = START + 3600_000;
    context.requests[1]!.reject(new Error('token endpoint down'));

    await expect(during).rejects.toThrow('token endpoint down');
  });
});

describe('invalidate', () => {
  it('drops the cached token so that the next call fetches a new one, once for many invalidations', async () => {
    const context = setup();
    await prime(context, 't1');

    for (let request = 0; request < 10; request += 1) context.cache.invalidate('acme', 't1');
    const callers = Array.from({ length: 10 }, () => context.cache.get('acme'));
    for (let request = 0; request < 10; request += 1) context.cache.invalidate('acme', 't1');
    await settle();
    context.requests[1]!.resolve(token('t2'));

    expect(new Set(await Promise.all(callers))).toEqual(new Set(['t2']));
    expect(await context.cache.get('acme')).toBe('t2');
    expect(context.requests).toHaveLength(2);
  });

  it('keeps a newer token when a late request invalidates the old one', async () => {
    const context = setup();
    await prime(context, 't1');
    context.cache.invalidate('acme', 't1');
    await prime(context, 't2');

    context.cache.invalidate('acme', 't1');
    const current = await context.cache.get('acme');

    expect(current).toBe('t2');
    expect(context.requests).toHaveLength(2);
  });

  it('does not serve an invalidated token when the refresh that follows fails', async () => {
    const context = setup();
    await prime(context, 't1');
    context.cache.invalidate('acme', 't1');

    const after = context.cache.get('acme');
    await settle();
    context.requests[1]!.reject(new Error('token endpoint down'));

    await expect(after).rejects.toThrow('token endpoint down');
  });

  it('leaves other tenants alone', async () => {
    const context = setup();
    await prime(context, 'a1', 3600, 'acme');
    await prime(context, 'g1', 3600, 'globex');

    context.cache.invalidate('acme', 'g1');
    context.cache.invalidate('globex', 'a1');

    expect(await context.cache.get('acme')).toBe('a1');
    expect(await context.cache.get('globex')).toBe('g1');
    expect(context.requests).toHaveLength(2);
  });
});
