import { describe, expect, it } from 'vitest';
import { ApiError, type ApiErrorDetails } from '../../engine/api/errors.ts';
import {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  MAX_THROTTLE_WAIT_MS,
  THROTTLE_FACTOR,
  backoffDelay,
  decideRetry,
  retryBudget,
  type AttemptHistory,
  type RetryDecision,
} from '../../engine/apply/retry-policy.ts';

function apiError(details: Partial<ApiErrorDetails> & Pick<ApiErrorDetails, 'kind'>): ApiError {
  return new ApiError('PATCH /contract/C-1: failed', { status: null, excerpt: '', ambiguous: false, ...details });
}

const HTTP_502 = apiError({ kind: 'retryable', status: 502 });
const HTTP_401 = apiError({ kind: 'auth', status: 401 });
const HTTP_409 = apiError({ kind: 'permanent', status: 409 });
const RESET = apiError({ kind: 'retryable', ambiguous: true });
const REFUSED = apiError({ kind: 'retryable', ambiguous: false });
const HTTP_429 = apiError({ kind: 'retryable', status: 429, retryAfterMs: 2000 });

const FRESH: AttemptHistory = { failures: 1, throttles: 0, reauthenticated: false };
const BUDGET = retryBudget(3);

function half(): number {
  return 0.5;
}

describe('retryBudget', () => {
  it.each([1, 3, 10])('allows maxAttempts %i sends and THROTTLE_FACTOR times as many throttles', (maxAttempts) => {
    const budget = retryBudget(maxAttempts);

    expect(budget).toEqual({ maxAttempts, maxThrottles: maxAttempts * THROTTLE_FACTOR });
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses maxAttempts %s with a TypeError naming the option', (maxAttempts) => {
    expect(() => retryBudget(maxAttempts)).toThrow(new TypeError(`retry.maxAttempts: expected an integer >= 1, got ${maxAttempts}`));
  });
});

describe('backoffDelay: full jitter in [0, min(cap, base * 2^(n-1)))', () => {
  it.each([
    [1, 0, 0],
    [1, 0.999, 499],
    [2, 0.999, 999],
    [3, 0.999, 1998],
    [7, 0.999, 29_970],
    [20, 0.999, 29_970],
    [2, 0.5, 500],
    [0, 0.999, 499],
  ])('failures %i, random() %s -> %i ms', (failures, random, expected) => {
    const delay = backoffDelay(failures, () => random);

    expect(delay).toBe(expected);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8, 30])('stays below min(cap, base * 2^(n-1)) for failures %i', (failures) => {
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (failures - 1));

    const lowest = backoffDelay(failures, () => 0);
    const highest = backoffDelay(failures, () => 0.999_999);

    expect(lowest).toBe(0);
    expect(highest).toBeLessThan(ceiling);
    expect(highest).toBeGreaterThanOrEqual(ceiling - 1);
  });
});

describe('decideRetry', () => {
  it.each<[string, ApiError, AttemptHistory, boolean, RetryDecision]>([
    ['401, first time: renew the token', HTTP_401, FRESH, false, { action: 'reauthenticate' }],
    ['401 after a renewal: give up', HTTP_401, { ...FRESH, reauthenticated: true }, false, { action: 'give-up' }],
    ['401 is renewed once even at the last attempt', HTTP_401, { ...FRESH, failures: 3 }, true, { action: 'reauthenticate' }],
    ['409: give up', HTTP_409, FRESH, true, { action: 'give-up' }],
    ['400 with a Retry-After: still permanent', apiError({ kind: 'permanent', status: 400, retryAfterMs: 1000 }), FRESH, true, { action: 'give-up' }],
    ['a reset, not resendable: give up for the caller to reconcile', RESET, FRESH, false, { action: 'give-up' }],
    ['a reset, resendable: back off', RESET, FRESH, true, { action: 'backoff', waitMs: 250 }],
    ['a refused connection, not resendable: back off (nothing was sent)', REFUSED, FRESH, false, { action: 'backoff', waitMs: 250 }],
    ['502, first failure: back off', HTTP_502, FRESH, false, { action: 'backoff', waitMs: 250 }],
    ['502, second failure: back off longer', HTTP_502, { ...FRESH, failures: 2 }, false, { action: 'backoff', waitMs: 500 }],
    ['502 reaching maxAttempts: give up', HTTP_502, { ...FRESH, failures: 3 }, false, { action: 'give-up' }],
    ['502 beyond maxAttempts: give up', HTTP_502, { ...FRESH, failures: 4 }, true, { action: 'give-up' }],
    ['429 with Retry-After: wait what was asked', HTTP_429, FRESH, false, { action: 'throttle', waitMs: 2000 }],
    ['429 with Retry-After, failures used up: throttles are counted apart', HTTP_429, { ...FRESH, failures: 3 }, false, { action: 'throttle', waitMs: 2000 }],
    ['429 with Retry-After, one throttle left', HTTP_429, { ...FRESH, throttles: 11 }, false, { action: 'throttle', waitMs: 2000 }],
    [
      '429 with Retry-After, throttles used up: give up, saying why',
      HTTP_429,
      { ...FRESH, throttles: 12 },
      false,
      {
        action: 'give-up',
        reason: 'not retried: the service asked to wait 13 times (Retry-After), more than the 12 waits retry.maxAttempts 3 allows (4 per attempt)',
      },
    ],
    [
      '503 asking for exactly the longest wait',
      apiError({ kind: 'retryable', status: 503, retryAfterMs: MAX_THROTTLE_WAIT_MS }),
      FRESH,
      false,
      { action: 'throttle', waitMs: MAX_THROTTLE_WAIT_MS },
    ],
    [
      '503 asking for more than the longest wait: give up, saying why',
      apiError({ kind: 'retryable', status: 503, retryAfterMs: MAX_THROTTLE_WAIT_MS + 1 }),
      FRESH,
      false,
      {
        action: 'give-up',
        reason: 'not retried: the service asked to wait 300.001 s (Retry-After), longer than the 300 s contract-sync waits for one request; run again later',
      },
    ],
    ['503 asking for no wait: throttle 0', apiError({ kind: 'retryable', status: 503, retryAfterMs: 0 }), FRESH, false, { action: 'throttle', waitMs: 0 }],
  ])('%s', (_case, error, history, resendable, expected) => {
    const decision = decideRetry(error, history, BUDGET, resendable, half);

    expect(decision).toEqual(expected);
  });

  it('with maxAttempts 1, gives up after the first failed send', () => {
    const decision = decideRetry(HTTP_502, FRESH, retryBudget(1), true, half);

    expect(decision).toEqual({ action: 'give-up' });
  });

  it('does not draw a random number for anything but a backoff', () => {
    let draws = 0;
    function counting(): number {
      draws += 1;
      return 0.5;
    }

    for (const error of [HTTP_401, HTTP_409, HTTP_429]) decideRetry(error, FRESH, BUDGET, true, counting);

    expect(draws).toBe(0);
  });
});
