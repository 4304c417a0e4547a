/**
 * One tenant's way to the service: its own p-queue (concurrency and requests/second from the
 * config) inside the global in-flight cap, its own pacing to the quota the service publishes, its
 * own pauses, its own token. A tenant that is throttled, failing or unauthorised holds up no other
 * tenant.
 */
import PQueue from 'p-queue';
import { ApiError, withNote } from '../api/errors.ts';
import type { QuotaPolicy, RateLimitState } from '../api/rate-headers.ts';
import type { TenantTokens } from '../auth/index.ts';
import type { Clock } from '../io/clock.ts';
import type { Logger } from '../log/logger.ts';
import { RunInterrupted } from './interrupted.ts';
import { QuotaPacer } from './quota-pacer.ts';
import { decideRetry, MAX_THROTTLE_WAIT_MS, type AttemptHistory, type RetryBudget } from './retry-policy.ts';
import { isConnectionFailure, ServiceUnreachable, UNREACHABLE_AFTER } from './service-unreachable.ts';

export interface LaneOptions {
  readonly tenant: string;
  readonly requestsPerSecond: number;
  readonly concurrency: number;
  readonly budget: RetryBudget;
  /** The global in-flight cap, shared by every lane of a run. */
  readonly inFlight: PQueue;
  readonly tokens: TenantTokens;
  /**
   * Tokens for reads, when `tokens` are asked for without core:read (an apply without refresh):
   * asked for only when the run reads, to settle an uncertain contract or a 409 (docs/architecture.md
   * section 7). Default: `tokens`.
   */
  readonly readTokens?: TenantTokens;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  /**
   * The run's stop: once aborted, no new request starts. A request queued or waiting for its turn
   * fails with RunInterrupted (nothing sent); one already sent is answered, and a retry of it that
   * was not sent yet gives up with the last answer's error.
   */
  readonly signal?: AbortSignal;
  /**
   * The service's host (api.baseUrl's): when set, UNREACHABLE_AFTER connection failures in a row
   * stop the lane, and every request not sent yet rejects with one ServiceUnreachable naming it.
   */
  readonly serviceHost?: string;
}

export interface LaneCounters {
  /** Requests sent, retries included. */
  requests: number;
  /** Sends that were repeats of an earlier one. */
  retries: number;
  /** Waits the service asked for (429/503 Retry-After, or a RateLimit quota used up). */
  throttles: number;
}

export interface LaneRequest {
  /** For logs: `patch` or `read`, and the contract. */
  readonly kind: 'patch' | 'read';
  readonly contractId: string;
  /** Whether an ambiguous failure may be resent as it is (reads, Replace-only patches). */
  readonly resendable: boolean;
}

/** Spacing: at most ~50 starts per window, so that requests go out evenly rather than in bursts. */
function pacing(requestsPerSecond: number): { intervalCap: number; interval: number } {
  const intervalCap = Math.max(1, Math.ceil(requestsPerSecond / 50));
  return { intervalCap, interval: (1000 * intervalCap) / requestsPerSecond };
}

/**
 * A request the lane did not send because the run lost the tenant's lock (TenantLock.lost): another
 * run may be sending for the tenant now.
 */
export class LaneHaltedError extends Error {
  readonly code = 'lane-halted';
  constructor(reason: unknown) {
    super(`not sent: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

/** A request that found its lane paused when its in-flight slot came: it goes back to the queue unsent. */
class PausedBeforeSending extends Error {
  readonly code = 'paused';
}

export class TenantLane {
  readonly tenant: string;
  readonly counters: LaneCounters = { requests: 0, retries: 0, throttles: 0 };
  readonly #options: LaneOptions;
  readonly #queue: PQueue;
  readonly #pacer: QuotaPacer;
  /** Requests sent and not answered yet. */
  #sending = 0;
  #pausedUntil = 0;
  #resuming = false;
  /** Aborted by close(): ends the wait for a pause that no request needs any more. */
  readonly #closing = new AbortController();
  /** Once aborted, no request of the lane is sent any more (haltOn). */
  #halt: AbortSignal | undefined;
  /** Requests not sent yet, when the run has a signal: each rejects with RunInterrupted once it aborts. */
  readonly #unsent = new Set<() => void>();
  /** Connection failures since the last request that was answered. */
  #connectionFailures = 0;
  /** Set once the service could not be reached UNREACHABLE_AFTER times in a row: nothing more is sent. */
  #unreachable: ServiceUnreachable | undefined;

  constructor(options: LaneOptions) {
    for (const name of ['requestsPerSecond', 'concurrency'] as const) {
      const value = options[name];
      if (!(Number.isFinite(value) && value > 0)) throw new TypeError(`${name}: expected a positive number, got ${value}`);
    }
    this.tenant = options.tenant;
    this.#options = options;
    // strict: a sliding window, so that no window boundary lets two intervals' worth through at once.
    this.#queue = new PQueue({ concurrency: options.concurrency, ...pacing(options.requestsPerSecond), strict: true });
    this.#pacer = new QuotaPacer({ configuredIntervalMs: 1000 / options.requestsPerSecond, maxIntervalMs: MAX_THROTTLE_WAIT_MS });
    // Requests waiting for their turn are dropped at once, not paced out one by one (one listener per lane, not per request).
    options.signal?.addEventListener(
      'abort',
      () => {
        this.#queue.clear();
        for (const stop of this.#unsent) stop();
        this.#unsent.clear();
      },
      { once: true },
    );
  }

  /**
   * Sends `send(token)` through the lane and retries it by the policy. Resolves with its result or
   * rejects with the last ApiError (or the AuthError of a token that could not be had).
   */
  async call<T extends { readonly rateLimit?: RateLimitState; readonly quotaPolicy?: QuotaPolicy }>(
    request: LaneRequest,
    send: (token: string) => Promise<T>,
  ): Promise<T> {
    const { budget, clock, random, logger } = this.#options;
    const tokens = request.kind === 'read' ? (this.#options.readTokens ?? this.#options.tokens) : this.#options.tokens;
    let history: AttemptHistory = { failures: 0, throttles: 0, reauthenticated: false };
    let last: ApiError | undefined;
    for (let sends = 0; ;) {
      let token: string | undefined;
      try {
        const result = await this.#startable(async (started) => {
          await this.#paced();
          // Taken when the request's turn comes, not when it was queued: a pause can outlast a token.
          token = await tokens.get(this.tenant);
          const answer = await this.#options.inFlight.add(() => {
            started();
            return this.#send(sends, token!, send);
          });
          // Before the task ends, so that the lane's next request is paced by this answer.
          this.#observe(answer);
          return answer;
        });
        return result;
      } catch (error) {
        // Paused while waiting for an in-flight slot: back into the queue, nothing was sent.
        if (error instanceof PausedBeforeSending) continue;
        // An earlier send that broke off may have landed: its caller must know (see haltOn).
        if (error instanceof LaneHaltedError && last?.ambiguous === true) throw last;
        // A retry not sent because the run stopped: the request ends with what its last send was answered.
        if (error instanceof RunInterrupted && last !== undefined) throw last;
        if (!(error instanceof ApiError)) throw error;
        // The service is not there: no retry of a connection that will be refused again.
        if (this.#unreachable !== undefined && isConnectionFailure(error)) throw this.#unreachable;
        last = error;
        sends += 1;
        const decision = decideRetry(
          error,
          { ...history, failures: history.failures + (error.retryAfterMs === undefined ? 1 : 0) },
          budget,
          request.resendable,
          random,
        );
        const details = { tenant: this.tenant, contractId: request.contractId, request: request.kind, status: error.status, attempt: sends };
        switch (decision.action) {
          case 'give-up':
            throw decision.reason === undefined ? error : withNote(error, decision.reason);
          case 'reauthenticate':
            // Many requests may fail with the same revoked token; invalidate drops it only once.
            logger.info(details, 'token refused; renewing it');
            tokens.invalidate(this.tenant, token!);
            history = { ...history, reauthenticated: true };
            break;
          case 'throttle':
            // #send paused the lane already; this only counts it.
            logger.debug({ ...details, waitMs: decision.waitMs }, 'service asked to wait; tenant paused');
            this.counters.throttles += 1;
            history = { ...history, throttles: history.throttles + 1 };
            break;
          case 'backoff':
            logger.debug({ ...details, waitMs: decision.waitMs }, 'request failed; retrying');
            history = { ...history, failures: history.failures + 1 };
            await clock.sleep(decision.waitMs);
            break;
        }
      }
    }
  }

  /**
   * Runs `task` in the lane's queue. A task not sent when the run's signal aborts rejects with
   * RunInterrupted; `started()` marks the moment it is sent (a cleared queue's task never settles,
   * so the rejection comes from here).
   */
  #startable<T>(task: (started: () => void) => Promise<T>): Promise<T> {
    const { signal } = this.#options;
    if (signal === undefined) return this.#queue.add(() => task(() => undefined));
    if (signal.aborted) return Promise.reject(new RunInterrupted());
    return new Promise<T>((resolve, reject) => {
      const unsent = this.#unsent;
      function stop(): void {
        reject(new RunInterrupted());
      }
      unsent.add(stop);
      this.#queue
        .add(() =>
          task(() => {
            if (signal.aborted) throw new RunInterrupted();
            unsent.delete(stop);
          }),
        )
        .then(resolve, reject)
        .finally(() => unsent.delete(stop));
    });
  }

  /**
   * From the moment `signal` fires (the tenant's lock is lost), the lane sends nothing more: every
   * request not yet sent, queued, paused or waiting for a slot, rejects with LaneHaltedError, or,
   * for a request whose earlier send broke off ambiguously, with that send's error, so that its
   * caller treats it as possibly applied. Requests already sent are answered as usual.
   */
  haltOn(signal: AbortSignal): void {
    this.#halt = signal;
    signal.addEventListener(
      'abort',
      () => {
        this.#options.logger.warn({ tenant: this.tenant, inFlight: this.#sending }, 'tenant lock lost; sending stopped');
        // Paused requests need not wait to be refused.
        this.#pausedUntil = 0;
        this.#queue.start();
      },
      { once: true },
    );
  }

  /** Holds back every request of this tenant for `ms` (from now); a longer pause already set wins. True when it extended the pause. */
  pause(ms: number): boolean {
    if (this.#closing.signal.aborted) return false;
    const until = this.#options.clock.now() + ms;
    if (until <= this.#pausedUntil) return false;
    this.#pausedUntil = until;
    this.#queue.pause();
    void this.#resumeWhenDue();
    return true;
  }

  async #resumeWhenDue(): Promise<void> {
    if (this.#resuming) return;
    this.#resuming = true;
    const { clock } = this.#options;
    const signal = this.#closing.signal;
    try {
      // The deadline may move while we sleep (another 429); sleep until the latest one.
      for (let left = this.#pausedUntil - clock.now(); left > 0 && !signal.aborted; left = this.#pausedUntil - clock.now()) await clock.sleep(left, signal);
    } catch (error) {
      if (!signal.aborted) throw error;
    } finally {
      this.#resuming = false;
    }
    if (!signal.aborted) this.#queue.start();
  }

  /**
   * The run is over: a pause still running (a Retry-After or RateLimit reset that came with the
   * last answer) is dropped with its timer, so that it does not keep the process alive after the
   * report is written (docs/architecture.md section 7). Called once every request has finished;
   * a request queued after it would never be sent.
   */
  close(): void {
    this.#closing.abort();
  }

  async #send<T>(sends: number, token: string, send: (token: string) => Promise<T>): Promise<T> {
    if (this.#halt?.aborted === true) throw new LaneHaltedError(this.#halt.reason);
    if (this.#unreachable !== undefined) throw this.#unreachable;
    // p-queue's pause stops only tasks not yet started; this one may have waited for a global slot.
    if (this.#options.clock.now() < this.#pausedUntil) throw new PausedBeforeSending();
    this.counters.requests += 1;
    if (sends > 0) this.counters.retries += 1;
    this.#sending += 1;
    try {
      const answer = await send(token);
      this.#connectionFailures = 0;
      return answer;
    } catch (error) {
      this.#countConnection(error);
      // Paused before the answer is handed on, so that no request of this tenant slips out meanwhile.
      if (error instanceof ApiError && error.retryAfterMs !== undefined && error.retryAfterMs <= MAX_THROTTLE_WAIT_MS) this.pause(error.retryAfterMs);
      // A 429 that publishes the quota teaches the pacer as a success would: the requests after the
      // pause are spaced by the policy instead of going out at once into the next 429. The
      // throttle is counted by call(), not again here; this request is still among those sending.
      if (error instanceof ApiError && (error.rateLimit !== undefined || error.quotaPolicy !== undefined)) this.#observe(error, this.#sending - 1, false);
      throw error;
    } finally {
      this.#sending -= 1;
    }
  }

  /** A connection failure counts towards the lane's stop (when it knows its service's host); any answer from the service resets the count. */
  #countConnection(error: unknown): void {
    const host = this.#options.serviceHost;
    if (host === undefined) return;
    if (!isConnectionFailure(error)) {
      if (error instanceof ApiError && error.status !== null) this.#connectionFailures = 0;
      return;
    }
    this.#connectionFailures += 1;
    if (this.#connectionFailures >= UNREACHABLE_AFTER && this.#unreachable === undefined) {
      this.#unreachable = new ServiceUnreachable(host, error, this.#connectionFailures);
      this.#options.logger.info({ tenant: this.tenant, host, failures: this.#connectionFailures }, 'service unreachable; tenant stopped');
    }
  }

  /**
   * Waits for this request's start by the published policy. The wait holds one of the lane's
   * concurrency slots, which keeps the requests in their order.
   */
  async #paced(): Promise<void> {
    const { clock } = this.#options;
    const now = clock.now();
    // Waiting: the queue's, and the started tasks that have not sent yet (this one among them).
    const backlog = this.#queue.size + this.#queue.pending - this.#sending;
    const at = this.#pacer.reserve(now, backlog);
    if (at > now) await clock.sleep(at - now);
  }

  /**
   * Learns the published policy, and holds the tenant when the quota left will be used up by the
   * requests already in flight: for the shortfall only, instead of spending requests on 429s.
   */
  #observe(
    { rateLimit, quotaPolicy }: { readonly rateLimit?: RateLimitState | undefined; readonly quotaPolicy?: QuotaPolicy | undefined },
    othersInFlight = this.#sending,
    countThrottle = true,
  ): void {
    const before = this.#pacer.intervalMs;
    const holdMs = this.#pacer.observe(rateLimit, quotaPolicy, othersInFlight, this.#options.concurrency);
    if (this.#pacer.intervalMs !== before)
      this.#options.logger.debug(
        { tenant: this.tenant, quota: quotaPolicy?.quota, windowMs: quotaPolicy?.windowMs },
        'pacing to the quota the service publishes',
      );
    if (holdMs > 0 && this.pause(Math.min(holdMs, MAX_THROTTLE_WAIT_MS)) && countThrottle) this.counters.throttles += 1;
  }

  /** Resolves when every request added so far has finished. */
  async idle(): Promise<void> {
    await this.#queue.onIdle();
  }
}
