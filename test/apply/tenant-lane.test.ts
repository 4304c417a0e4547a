/**
 * TenantLane with a real p-queue and the real retry policy. Its injected dependencies stand in
 * around it: a TenantTokens that counts, a `send` that answers from a script, and a manual clock
 * whose sleeps end only when the test moves time on.
 */
import PQueue from 'p-queue';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type ApiErrorDetails } from '../../engine/api/errors.ts';
import { checkPatchResponse, patchRequest, type ApiClientOptions } from '../../engine/api/client.ts';
import type { QuotaPolicy, RateLimitState } from '../../engine/api/rate-headers.ts';
import { MAX_THROTTLE_WAIT_MS, retryBudget } from '../../engine/apply/retry-policy.ts';
import { TenantLane, type LaneOptions, type LaneRequest } from '../../engine/apply/tenant-lane.ts';
import type { TenantTokens } from '../../engine/auth/index.ts';
import type { Clock } from '../../engine/io/clock.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import { captureLog } from '../auth/log-capture.ts';

const PATCH: LaneRequest = { kind: 'patch', contractId: 'C-1', resendable: false };
const RESENDABLE: LaneRequest = { kind: 'patch', contractId: 'C-1', resendable: true };

/** Lets every promise reaction that is ready run, p-queue's included. Not a wait on time. */
async function flush(): Promise<void> {
  for (let turn = 0; turn < 3; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

interface ManualClock extends Clock {
  /** Every wait asked for, in ms, in order. */
  readonly sleeps: number[];
  /** Moves time on by `ms`, waking each sleeper at its own due time, earliest first. */
  advance(ms: number): Promise<void>;
  /** Moves time on to the earliest sleeper and wakes it; false when nobody sleeps. */
  wakeNext(): Promise<boolean>;
}

function manualClock(start = 0): ManualClock {
  let now = start;
  const sleepers: { until: number; wake: () => void }[] = [];
  const sleeps: number[] = [];
  function earliest(): { until: number; wake: () => void } | undefined {
    sleepers.sort((a, b) => a.until - b.until);
    return sleepers[0];
  }
  return {
    sleeps,
    now: () => now,
    sleep(ms) {
      sleeps.push(ms);
      return new Promise((resolve) => sleepers.push({ until: now + Math.max(0, ms), wake: resolve }));
    },
    async advance(ms) {
      const target = now + ms;
      await flush();
      for (let next = earliest(); next !== undefined && next.until <= target; next = earliest()) {
        sleepers.shift();
        now = next.until;
        next.wake();
        await flush();
      }
      now = target;
      await flush();
    },
    async wakeNext() {
      await flush();
      const next = earliest();
      if (next === undefined) return false;
      sleepers.shift();
      now = Math.max(now, next.until);
      next.wake();
      await flush();
      return true;
    },
  };
}

/** Runs the clock until `promise` settles; fails if it waits for something the clock cannot wake. */
async function drive<T>(clock: ManualClock, promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  let settled: PromiseSettledResult<T> | undefined;
  void promise.then(
    (value) => (settled = { status: 'fulfilled', value }),
    (reason: unknown) => (settled = { status: 'rejected', reason }),
  );
  await flush();
  while (settled === undefined) {
    if (!(await clock.wakeNext())) throw new Error('the lane waits for something the clock cannot wake');
  }
  return settled;
}

interface CountingTokens extends TenantTokens {
  /** The tokens handed out, in order. */
  readonly handedOut: string[];
  readonly invalidated: [string, string][];
}

/** One token per tenant and generation; invalidating the current one makes the next get() hand out a new one. */
function countingTokens(): CountingTokens {
  const generation = new Map<string, number>();
  const handedOut: string[] = [];
  const invalidated: [string, string][] = [];
  function current(tenant: string): string {
    return `${tenant}-token-${generation.get(tenant) ?? 1}`;
  }
  return {
    handedOut,
    invalidated,
    async get(tenant) {
      handedOut.push(current(tenant));
      return current(tenant);
    },
    invalidate(tenant, token) {
      invalidated.push([tenant, token]);
      if (token === current(tenant)) generation.set(tenant, (generation.get(tenant) ?? 1) + 1);
    },
  };
}

function apiError(status: number | null, details: Partial<ApiErrorDetails> = {}): ApiError {
  const kind = status === 401 ? 'auth' : status === null || [429, 502, 503, 504].includes(status) ? 'retryable' : 'permanent';
  return new ApiError(`PATCH /contract/C-1: ${status ?? 'connection failed'}`, { kind, status, excerpt: '', ambiguous: false, ...details });
}

interface Outcome {
  readonly rateLimit?: RateLimitState;
  readonly quotaPolicy?: QuotaPolicy;
}

type Answer = ApiError | Error | Outcome;

interface Sent {
  readonly token: string;
  readonly at: number;
}

/** A send answering from `answers` in order (the last one repeats), recording each token and time. */
function scripted(clock: Clock, answers: readonly Answer[]): { send: (token: string) => Promise<Outcome>; sent: Sent[] } {
  const sent: Sent[] = [];
  async function send(token: string): Promise<Outcome> {
    const answer = answers[Math.min(sent.length, answers.length - 1)]!;
    sent.push({ token, at: clock.now() });
    if (answer instanceof Error) throw answer;
    return answer;
  }
  return { send, sent };
}

function laneOptions(clock: Clock, overrides: Partial<LaneOptions> = {}): LaneOptions {
  return {
    tenant: 'acme',
    // High enough that pacing never holds a request back in these tests; pacing has its own test.
    requestsPerSecond: 1_000_000,
    concurrency: 2,
    budget: retryBudget(3),
    inFlight: new PQueue({ concurrency: 8 }),
    tokens: countingTokens(),
    clock,
    random: () => 0.5,
    logger: silentLogger(),
    ...overrides,
  };
}

describe('TenantLane: options', () => {
  it.each<[string, Partial<LaneOptions>, string]>([
    ['concurrency 0', { concurrency: 0 }, 'concurrency: expected a positive number, got 0'],
    ['concurrency NaN', { concurrency: Number.NaN }, 'concurrency: expected a positive number, got NaN'],
    ['requestsPerSecond -1', { requestsPerSecond: -1 }, 'requestsPerSecond: expected a positive number, got -1'],
    ['requestsPerSecond Infinity', { requestsPerSecond: Number.POSITIVE_INFINITY }, 'requestsPerSecond: expected a positive number, got Infinity'],
  ])('refuses %s with a TypeError naming the option', (_case, overrides, message) => {
    const clock = manualClock();

    expect(() => new TenantLane(laneOptions(clock, overrides))).toThrow(new TypeError(message));
  });
});

describe('TenantLane: one request', () => {
  it('sends with the tenant token and resolves with the answer', async () => {
    const clock = manualClock();
    const tokens = countingTokens();
    const lane = new TenantLane(laneOptions(clock, { tokens }));
    const { send, sent } = scripted(clock, [{}]);

    const result = await lane.call(PATCH, send);

    expect(result).toEqual({});
    expect(sent).toEqual([{ token: 'acme-token-1', at: 0 }]);
    expect(lane.counters).toEqual({ requests: 1, retries: 0, throttles: 0 });
  });

  it('sends nothing when no token can be had, and rejects with that error', async () => {
    const clock = manualClock();
    const refused = new Error('token endpoint refused the client');
    const tokens: TenantTokens = { get: () => Promise.reject(refused), invalidate: () => undefined };
    const lane = new TenantLane(laneOptions(clock, { tokens }));
    const { send, sent } = scripted(clock, [{}]);

    const call = lane.call(PATCH, send);

    await expect(call).rejects.toBe(refused);
    expect(sent).toEqual([]);
  });

  it('passes an error that is not an ApiError through without a retry', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const bug = new RangeError('a bug in send');
    const { send, sent } = scripted(clock, [bug, {}]);

    const call = lane.call(PATCH, send);

    await expect(call).rejects.toBe(bug);
    expect(sent).toHaveLength(1);
  });
});

describe('TenantLane: 401', () => {
  it('invalidates the refused token exactly once and retries once with a new one', async () => {
    const clock = manualClock();
    const tokens = countingTokens();
    const { logger, lines } = captureLog();
    const lane = new TenantLane(laneOptions(clock, { tokens, logger }));
    const { send, sent } = scripted(clock, [apiError(401), {}]);

    const result = await lane.call(PATCH, send);

    expect(result).toEqual({});
    expect(tokens.invalidated).toEqual([['acme', 'acme-token-1']]);
    expect(sent.map((entry) => entry.token)).toEqual(['acme-token-1', 'acme-token-2']);
    expect(clock.sleeps).toEqual([]);
    expect(lane.counters).toEqual({ requests: 2, retries: 1, throttles: 0 });
    expect(lines.join('')).not.toContain('acme-token-');
  });

  it('rejects with the second 401 after one renewal', async () => {
    const clock = manualClock();
    const tokens = countingTokens();
    const lane = new TenantLane(laneOptions(clock, { tokens }));
    const second = apiError(401);
    const { send, sent } = scripted(clock, [apiError(401), second]);

    const call = lane.call(PATCH, send);

    await expect(call).rejects.toBe(second);
    expect(tokens.invalidated).toEqual([['acme', 'acme-token-1']]);
    expect(sent.map((entry) => entry.token)).toEqual(['acme-token-1', 'acme-token-2']);
  });
});

describe('TenantLane: backoff', () => {
  it('sleeps the policy delays, one random draw per retry, before each resend', async () => {
    const clock = manualClock();
    const draws = [0.2, 0.9];
    const lane = new TenantLane(laneOptions(clock, { random: () => draws.shift()! }));
    const { send, sent } = scripted(clock, [apiError(502), apiError(502), {}]);

    const result = await drive(clock, lane.call(PATCH, send));

    expect(result.status).toBe('fulfilled');
    // Full jitter: floor(0.2 * 500) after the first failure, floor(0.9 * 1000) after the second.
    expect(clock.sleeps).toEqual([100, 900]);
    expect(sent.map((entry) => entry.at)).toEqual([0, 100, 1000]);
    expect(lane.counters).toEqual({ requests: 3, retries: 2, throttles: 0 });
  });

  it.each([1, 2, 4])('gives a plain 502 up after maxAttempts %i sends, rejecting with the last error', async (maxAttempts) => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { budget: retryBudget(maxAttempts) }));
    const last = apiError(502);
    const { send, sent } = scripted(clock, [...Array.from({ length: maxAttempts - 1 }, () => apiError(502)), last]);

    const result = await drive(clock, lane.call(PATCH, send));

    expect(result).toEqual({ status: 'rejected', reason: last });
    expect(sent).toHaveLength(maxAttempts);
    expect(clock.sleeps).toHaveLength(maxAttempts - 1);
  });

  it.each<[string, ApiError, LaneRequest, number]>([
    ['a permanent 409', apiError(409), RESENDABLE, 1],
    ['an ambiguous reset of a request that is not resendable', apiError(null, { ambiguous: true }), PATCH, 1],
    ['an ambiguous reset of a resendable request', apiError(null, { ambiguous: true }), RESENDABLE, 3],
    ['a refused connection (nothing was sent)', apiError(null, { ambiguous: false }), PATCH, 3],
  ])('%s: %i send(s)', async (_case, error, request, sends) => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send, sent } = scripted(clock, [error]);

    const result = await drive(clock, lane.call(request, send));

    expect(result).toEqual({ status: 'rejected', reason: error });
    expect(sent).toHaveLength(sends);
  });
});

describe('TenantLane: waits the service asks for', () => {
  it('holds the tenant for Retry-After, then resends without using up an attempt', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { budget: retryBudget(1) }));
    const { send, sent } = scripted(clock, [apiError(429, { retryAfterMs: 3000 }), {}]);

    const result = await drive(clock, lane.call(PATCH, send));

    expect(result.status).toBe('fulfilled');
    expect(sent.map((entry) => entry.at)).toEqual([0, 3000]);
    expect(lane.counters).toEqual({ requests: 2, retries: 1, throttles: 1 });
  });

  it('gives up after maxThrottles waits for a service that keeps asking', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { budget: retryBudget(1) }));
    const { send, sent } = scripted(clock, [apiError(503, { retryAfterMs: 1000 })]);

    const result = await drive(clock, lane.call(PATCH, send));

    expect(result.status).toBe('rejected');
    // maxThrottles = 4 for maxAttempts 1: four waits, five sends.
    expect(sent.map((entry) => entry.at)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(lane.counters.throttles).toBe(4);
  });

  it('pauses only its own tenant: another lane on the same in-flight queue keeps sending', async () => {
    const clock = manualClock();
    const inFlight = new PQueue({ concurrency: 4 });
    const acme = new TenantLane(laneOptions(clock, { tenant: 'acme', inFlight }));
    const globex = new TenantLane(laneOptions(clock, { tenant: 'globex', inFlight }));
    const log: string[] = [];
    const answers = [apiError(503, { retryAfterMs: 10_000 })];
    async function send(token: string): Promise<object> {
      log.push(`${token}@${clock.now()}`);
      const answer = answers.shift();
      if (answer !== undefined) throw answer;
      return {};
    }

    const throttled = acme.call(PATCH, send);
    await flush();
    const heldBack = acme.call(PATCH, send);
    await globex.call(PATCH, send);
    await globex.call(PATCH, send);
    await clock.advance(10_000);
    await Promise.all([throttled, heldBack]);

    expect(log.slice(0, 3)).toEqual(['acme-token-1@0', 'globex-token-1@0', 'globex-token-1@0']);
    expect(log.slice(3).sort()).toEqual(['acme-token-1@10000', 'acme-token-1@10000']);
    expect(acme.counters.throttles).toBe(1);
    expect(globex.counters).toEqual({ requests: 2, retries: 0, throttles: 0 });
  });

  // The lane's queue holds back only requests it has not started; a started request may still be
  // queued in the global in-flight queue, and goes out when a slot frees, pause or not.
  it('holds back a request of the paused tenant that was waiting for a global in-flight slot', async () => {
    const clock = manualClock();
    const inFlight = new PQueue({ concurrency: 1 });
    const lane = new TenantLane(laneOptions(clock, { inFlight, concurrency: 2 }));
    const log: string[] = [];
    const held: { refuse?: (error: ApiError) => void } = {};
    async function first(): Promise<object> {
      log.push(`first@${clock.now()}`);
      if (log.length === 1) return new Promise((_resolve, reject) => (held.refuse = reject));
      return {};
    }
    async function second(): Promise<object> {
      log.push(`second@${clock.now()}`);
      return {};
    }
    const calls = [lane.call(PATCH, first), lane.call(PATCH, second)];
    await flush();

    held.refuse!(apiError(503, { retryAfterMs: 10_000 }));
    await clock.advance(10_000);
    await Promise.all(calls);

    expect(log.filter((entry) => entry.startsWith('second'))).toEqual(['second@10000']);
  });

  it('a longer pause wins over a shorter one, whatever their order', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send, sent } = scripted(clock, [{}]);

    lane.pause(5000);
    lane.pause(1000);
    const call = lane.call(PATCH, send);
    await clock.advance(1000);
    lane.pause(2000);
    await clock.advance(1000);
    const beforeDeadline = sent.length;
    await clock.advance(3000);
    await call;

    expect(beforeDeadline).toBe(0);
    expect(sent.map((entry) => entry.at)).toEqual([5000]);
  });

  it('a pause asked for during a pause extends it', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send, sent } = scripted(clock, [{}]);

    lane.pause(1000);
    const call = lane.call(PATCH, send);
    await clock.advance(500);
    lane.pause(2000);
    await drive(clock, call);

    expect(sent.map((entry) => entry.at)).toEqual([2500]);
  });
});

describe('TenantLane: quota reported on success', () => {
  it.each<[string, RateLimitState | undefined, number, number]>([
    ['no RateLimit', undefined, 0, 0],
    ['remaining equal to the concurrency', { remaining: 2, resetMs: 5000 }, 0, 0],
    ['remaining below the concurrency', { remaining: 1, resetMs: 5000 }, 5000, 1],
    ['nothing remaining', { remaining: 0, resetMs: 5000 }, 5000, 1],
    ['nothing remaining but already reset', { remaining: 0, resetMs: 0 }, 0, 0],
  ])('%s: the next request goes out at %i ms', async (_case, rateLimit, nextAt, throttles) => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 2 }));
    const { send, sent } = scripted(clock, [rateLimit ? { rateLimit } : {}, {}]);

    await lane.call(PATCH, send);
    await drive(clock, lane.call(PATCH, send));

    expect(sent.map((entry) => entry.at)).toEqual([0, nextAt]);
    expect(lane.counters.throttles).toBe(throttles);
  });

  // A failure asking for more than MAX_THROTTLE_WAIT_MS is given up; a success reporting a far
  // reset (up to the one-day cap of the header parser) holds the whole tenant that long.
  it('a quota reset reported on success holds the tenant no longer than MAX_THROTTLE_WAIT_MS', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send, sent } = scripted(clock, [{ rateLimit: { remaining: 0, resetMs: 86_400_000 } }, {}]);

    await lane.call(PATCH, send);
    const next = lane.call(PATCH, send);
    await clock.advance(MAX_THROTTLE_WAIT_MS);
    await flush();

    expect(sent).toHaveLength(2);
    await next;
  });
});

describe('TenantLane: read tokens', () => {
  const READ: LaneRequest = { kind: 'read', contractId: 'C-1', resendable: true };

  function namedTokens(name: string): CountingTokens {
    const tokens = countingTokens();
    return {
      ...tokens,
      get: async (tenant) => `${name}-${await tokens.get(tenant)}`,
      invalidate: (tenant, token) => tokens.invalidate(tenant, token.slice(name.length + 1)),
    };
  }

  it('reads with readTokens and patches with tokens; a refused read token is dropped from readTokens', async () => {
    const clock = manualClock();
    const tokens = namedTokens('write');
    const readTokens = namedTokens('read');
    const lane = new TenantLane(laneOptions(clock, { tokens, readTokens }));
    const { send, sent } = scripted(clock, [{}, apiError(401), {}]);

    await lane.call(PATCH, send);
    await lane.call(READ, send);

    expect(sent.map((entry) => entry.token)).toEqual(['write-acme-token-1', 'read-acme-token-1', 'read-acme-token-2']);
    expect(readTokens.invalidated).toEqual([['acme', 'acme-token-1']]);
    expect(tokens.invalidated).toEqual([]);
  });

  it('reads with tokens when no readTokens are given', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send, sent } = scripted(clock, [{}]);

    await lane.call(READ, send);

    expect(sent.map((entry) => entry.token)).toEqual(['acme-token-1']);
  });
});

describe('TenantLane: close', () => {
  /** A clock whose sleeps never end by themselves, recording the signal each was given. */
  function signalClock(): Clock & { readonly signals: (AbortSignal | undefined)[] } {
    const signals: (AbortSignal | undefined)[] = [];
    return {
      signals,
      now: () => 0,
      sleep(_ms, signal) {
        signals.push(signal);
        return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      },
    };
  }

  it('ends the wait of a pause the last answer asked for, so that no timer outlives the run', async () => {
    const clock = signalClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send } = scripted(clock, [{ rateLimit: { remaining: 0, resetMs: 300_000 } }]);
    await lane.call(PATCH, send);
    await flush();
    const [signal] = clock.signals;

    lane.close();
    await flush();

    expect(clock.signals).toHaveLength(1);
    expect(signal?.aborted).toBe(true);
  });

  it('starts no pause after it', async () => {
    const clock = signalClock();
    const lane = new TenantLane(laneOptions(clock));

    lane.close();
    const paused = lane.pause(5000);
    await flush();

    expect(paused).toBe(false);
    expect(clock.signals).toEqual([]);
  });
});

describe('TenantLane: counters', () => {
  it('counts every send, every repeat and every wait the service asked for', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const { send } = scripted(clock, [apiError(401), apiError(503, { retryAfterMs: 1000 }), apiError(502), {}]);

    const result = await drive(clock, lane.call(RESENDABLE, send));

    expect(result.status).toBe('fulfilled');
    expect(lane.counters).toEqual({ requests: 4, retries: 3, throttles: 1 });
  });

  it('adds up over requests', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const first = scripted(clock, [apiError(502), {}]);
    const second = scripted(clock, [{}]);

    await drive(clock, lane.call(PATCH, first.send));
    await drive(clock, lane.call(PATCH, second.send));

    expect(lane.counters).toEqual({ requests: 3, retries: 1, throttles: 0 });
  });
});

describe('TenantLane: pacing', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('spaces the starts of 10 requests/second 100 ms apart, by p-queue timers', async () => {
    vi.useFakeTimers({ now: 0 });
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { requestsPerSecond: 10, concurrency: 5 }));
    const starts: number[] = [];
    async function send(): Promise<object> {
      starts.push(Date.now());
      return {};
    }

    const calls = [lane.call(PATCH, send), lane.call(PATCH, send), lane.call(PATCH, send)];
    await vi.advanceTimersByTimeAsync(250);
    await Promise.all(calls);

    expect(starts).toEqual([0, 100, 200]);
  });
});

describe('TenantLane: pacing to the published quota', () => {
  const TEN_PER_SECOND: QuotaPolicy = { quota: 10, windowMs: 1000 };

  /** `count` calls queued at once; resolves with the times they were sent. */
  async function sendTimes(clock: ManualClock, lane: TenantLane, send: (token: string) => Promise<Outcome>, count: number): Promise<void> {
    const calls = Promise.all(Array.from({ length: count }, () => lane.call(PATCH, send)));
    const result = await drive(clock, calls);
    expect(result.status).toBe('fulfilled');
  }

  it('learns the policy from the first answer and spaces the requests after it w/q apart', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const { send, sent } = scripted(clock, [{ quotaPolicy: TEN_PER_SECOND }]);

    await sendTimes(clock, lane, send, 4);

    expect(sent.map((entry) => entry.at)).toEqual([0, 100, 200, 300]);
    expect(lane.counters.throttles).toBe(0);
  });

  it('sends what the concurrency allows before any answer, then paces the rest', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 4 }));
    const { send, sent } = scripted(clock, [{ quotaPolicy: TEN_PER_SECOND }]);

    await sendTimes(clock, lane, send, 8);

    expect(sent.map((entry) => entry.at)).toEqual([0, 0, 0, 0, 100, 200, 300, 400]);
  });

  it('takes a policy changed mid-run from the next request on', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const twoPerSecond = { quotaPolicy: { quota: 2, windowMs: 1000 } };
    const { send, sent } = scripted(clock, [{ quotaPolicy: TEN_PER_SECOND }, { quotaPolicy: TEN_PER_SECOND }, twoPerSecond, twoPerSecond, twoPerSecond]);

    await sendTimes(clock, lane, send, 5);

    expect(sent.map((entry) => entry.at)).toEqual([0, 100, 200, 700, 1200]);
  });

  it('waits exactly until the reset when an answer leaves nothing, and paces on after it', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const { send, sent } = scripted(clock, [{ quotaPolicy: TEN_PER_SECOND, rateLimit: { remaining: 0, resetMs: 3000 } }, { quotaPolicy: TEN_PER_SECOND }]);

    await sendTimes(clock, lane, send, 3);

    expect(sent.map((entry) => entry.at)).toEqual([0, 3000, 3100]);
    expect(lane.counters.throttles).toBe(1);
  });

  it('sends at once what fits into the quota left', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const { send, sent } = scripted(clock, [{ quotaPolicy: TEN_PER_SECOND, rateLimit: { remaining: 9, resetMs: 1000 } }]);

    await sendTimes(clock, lane, send, 4);

    expect(sent.map((entry) => entry.at)).toEqual([0, 0, 0, 0]);
    expect(clock.sleeps).toEqual([]);
  });

  it('without published headers paces nothing: the configured rate alone, as before', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const { send, sent } = scripted(clock, [{}]);

    await sendTimes(clock, lane, send, 4);

    expect(sent.map((entry) => entry.at)).toEqual([0, 0, 0, 0]);
    expect(clock.sleeps).toEqual([]);
  });

  const CLIENT: ApiClientOptions = { baseUrl: 'https://cms.test', timeoutMs: 5000, userAgent: 'contract-sync/test', correlationId: 'run-1', now: () => 0 };

  // Through the real response checker: what the lane paces by is what the headers say. One left
  // each time: the second request is paced, the last fits into what is left and goes at once.
  it.each<[string, Record<string, string>, number[]]>([
    ['the structured fields of drafts -08 to -10', { 'RateLimit-Policy': '"tenant";q=10;w=1', RateLimit: '"tenant";r=1;t=1' }, [0, 100, 100]],
    [
      'the policy of drafts -05 to -07',
      { 'RateLimit-Policy': '10;w=1', 'RateLimit-Limit': '10', 'RateLimit-Remaining': '1', 'RateLimit-Reset': '1' },
      [0, 100, 100],
    ],
    ['a malformed policy, ignored', { 'RateLimit-Policy': '"tenant";q=ten;w=1', RateLimit: '"tenant";r=5;t=1' }, [0, 0, 0]],
    ['a policy without a window, ignored', { 'RateLimit-Policy': '"tenant";q=10' }, [0, 0, 0]],
    ['malformed quota state, ignored', { RateLimit: 'lots left' }, [0, 0, 0]],
  ])('%s', async (_case, headers, times) => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const sent: number[] = [];
    async function send(token: string): Promise<Outcome> {
      sent.push(clock.now());
      const request = patchRequest(CLIENT, 'C-1', [{ op: 'Replace', path: '/Contract/Name', value: 'x' }], token);
      return checkPatchResponse(request, new Response(null, { status: 204, headers }), CLIENT);
    }

    await sendTimes(clock, lane, send, 3);

    expect(sent).toEqual(times);
  });
});

describe('TenantLane: the configured rate stays the ceiling', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('paces to the configured 10 requests/second when the service publishes 100', async () => {
    vi.useFakeTimers({ now: 0 });
    // The lane's clock on the faked timers, so that p-queue's interval and the pacing share one time.
    const clock: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
    const lane = new TenantLane(laneOptions(clock, { requestsPerSecond: 10, concurrency: 5 }));
    const starts: number[] = [];
    async function send(): Promise<Outcome> {
      starts.push(Date.now());
      return { quotaPolicy: { quota: 100, windowMs: 1000 } };
    }

    const calls = Array.from({ length: 4 }, () => lane.call(PATCH, send));
    await vi.advanceTimersByTimeAsync(350);
    await Promise.all(calls);

    expect(starts).toEqual([0, 100, 200, 300]);
  });
});

describe('TenantLane: the tenant lock lost', () => {
  it('sends nothing more once the lock is lost: queued, paused and new requests reject unsent; requests sent are answered', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { concurrency: 1 }));
    const lost = new AbortController();
    lane.haltOn(lost.signal);
    let answer: (() => void) | undefined;
    const sent: string[] = [];
    function send(id: string): (token: string) => Promise<Outcome> {
      return async () => {
        sent.push(id);
        if (id === 'first') await new Promise<void>((resolve) => (answer = resolve));
        return {};
      };
    }

    const first = lane.call({ ...PATCH, contractId: 'first' }, send('first'));
    const queued = lane.call({ ...PATCH, contractId: 'queued' }, send('queued'));
    await flush();
    lost.abort(new Error('lost the lock of tenant acme: the connection holding its PostgreSQL advisory lock ended'));
    answer!();
    const late = lane.call({ ...PATCH, contractId: 'late' }, send('late'));

    await expect(first).resolves.toEqual({});
    await expect(queued).rejects.toThrow('not sent: lost the lock of tenant acme: the connection holding its PostgreSQL advisory lock ended');
    await expect(late).rejects.toMatchObject({ code: 'lane-halted' });
    expect(sent).toEqual(['first']);
    expect(lane.counters.requests).toBe(1);
  });

  it('hands back the error of a send that broke off ambiguously instead of resending it once the lock is lost', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock));
    const lost = new AbortController();
    lane.haltOn(lost.signal);
    const broken = apiError(null, { ambiguous: true });
    let sends = 0;
    async function send(): Promise<Outcome> {
      sends += 1;
      lost.abort(new Error('lost the lock of tenant acme'));
      throw broken;
    }

    const result = await drive(clock, lane.call(RESENDABLE, send));

    expect(result).toEqual({ status: 'rejected', reason: broken });
    expect(sends).toBe(1);
  });
});

function refused(): ApiError {
  return new ApiError('PATCH /contract/C-1: connection refused (ECONNREFUSED)', { kind: 'retryable', status: null, excerpt: '', ambiguous: false });
}

describe('TenantLane: a service that cannot be reached', () => {
  it('stops after 3 connection failures in a row: one error naming the host and the cause, and nothing more sent', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { serviceHost: 'cms.example.com', budget: retryBudget(10) }));
    const { send, sent } = scripted(clock, [refused()]);

    const first = await drive(clock, lane.call(RESENDABLE, send));
    const second = await drive(clock, lane.call(RESENDABLE, send));

    expect(sent).toHaveLength(3);
    for (const result of [first, second]) {
      expect(result).toMatchObject({
        status: 'rejected',
        reason: {
          code: 'service-unreachable',
          message:
            'the service at cms.example.com (api.baseUrl) cannot be reached: connection refused (ECONNREFUSED), 3 times in a row; nothing more sent for this tenant',
        },
      });
    }
  });

  it('counts only failures in a row: an answer of the service starts the count again', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { serviceHost: 'cms.example.com', budget: retryBudget(10) }));
    const { send, sent } = scripted(clock, [refused(), refused(), apiError(503), refused(), refused(), {}]);

    const result = await drive(clock, lane.call(RESENDABLE, send));

    expect(result).toEqual({ status: 'fulfilled', value: {} });
    expect(sent).toHaveLength(6);
  });

  it('without serviceHost, retries by the policy as before', async () => {
    const clock = manualClock();
    const lane = new TenantLane(laneOptions(clock, { budget: retryBudget(5) }));
    const { send, sent } = scripted(clock, [refused()]);

    const result = await drive(clock, lane.call(RESENDABLE, send));

    expect(result).toMatchObject({ status: 'rejected', reason: { code: 'api' } });
    expect(sent).toHaveLength(5);
  });

  it('a failure after sending (ambiguous: a reset) is not counted', async () => {
    const clock = manualClock();
    const reset = new ApiError('PATCH /contract/C-1: connection reset (ECONNRESET)', { kind: 'retryable', status: null, excerpt: '', ambiguous: true });
    const lane = new TenantLane(laneOptions(clock, { serviceHost: 'cms.example.com', budget: retryBudget(5) }));
    const { send, sent } = scripted(clock, [reset]);

    const result = await drive(clock, lane.call(RESENDABLE, send));

    expect(result).toMatchObject({ status: 'rejected', reason: { code: 'api' } });
    expect(sent).toHaveLength(5);
  });
});
