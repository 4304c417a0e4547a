/**
 * Adapter: posts a ready message, retrying what may pass on a later try (a network failure, a
 * timeout, 408, 429, 5xx) with exponential backoff and full jitter (../io/backoff.ts), honouring a
 * Retry-After that fits. Everything is injected: fetch, the clock, sleep, the random source.
 * Bounded: each attempt by `timeoutMs`, the whole delivery by `deadlineMs` (no retry starts that
 * could not finish before it), so a receiver that hangs delays a run by at most the deadline.
 * Never throws: a delivery that fails is a warning value naming the channel, never its URL.
 */
import { backoffDelayMs } from '../io/backoff.ts';
import { readResponseBounded } from '../io/bounded-body.ts';
import { describeNetworkError } from '../io/network-error.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import type { ReadyDelivery } from './channels.ts';

export interface DeliveryOptions {
  readonly fetch: typeof fetch;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** In [0, 1): backoff jitter. */
  readonly random: () => number;
  /** Default 4. */
  readonly maxAttempts?: number;
  /** Per attempt, the answer's body included; default 10 000. */
  readonly timeoutMs?: number;
  /** The whole delivery, waits included; default 30 000. */
  readonly deadlineMs?: number;
  /** Backoff before the first retry (doubled after each); default 1000, at most 8000. */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

export const DELIVERY_DEFAULTS = { maxAttempts: 4, timeoutMs: 10_000, deadlineMs: 30_000, baseDelayMs: 1000, maxDelayMs: 8000 } as const;

export type DeliveryResult =
  | { readonly channel: string; readonly ok: true; readonly status: number; readonly attempts: number; readonly answer: string }
  | { readonly channel: string; readonly ok: false; readonly status: number | null; readonly attempts: number; readonly warning: string };

const ANSWER_BYTES = 16 * 1024;
const ANSWER_CHARS = 200;

interface Attempt {
  readonly status: number | null;
  readonly answer: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  /** What went wrong, for the warning; undefined on success. */
  readonly failure?: string;
}

function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Retry-After in seconds or as an HTTP date, in ms from `now`. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The answer as a short, inert excerpt; the URL (a credential for Slack and Teams) cut out should a receiver echo it. */
function excerpt(text: string, url: string): string {
  const flat = escapeForTerminal(text.replaceAll(url, '[url]').replace(/\s+/g, ' ').trim());
  return flat.length > ANSWER_CHARS ? `${flat.slice(0, ANSWER_CHARS)}…` : flat;
}

async function attempt(delivery: ReadyDelivery, options: DeliveryOptions, timeoutMs: number): Promise<Attempt> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await options.fetch(delivery.url, {
      method: 'POST',
      headers: delivery.message.headers,
      body: delivery.message.body,
      redirect: 'manual',
      signal,
    });
    const answer = excerpt(
      await readResponseBounded(response, ANSWER_BYTES).then(
        (bytes) => bytes.toString('utf8'),
        () => '',
      ),
      delivery.url,
    );
    if (response.status >= 200 && response.status <= 299) return { status: response.status, answer, retryable: false };
    const wait = retryAfterMs(response.headers.get('retry-after'), options.now());
    return {
      status: response.status,
      answer,
      retryable: retryableStatus(response.status),
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
      failure: `answered ${response.status}${answer === '' ? '' : `: ${answer}`}`,
    };
  } catch (error) {
    const failure = signal.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
    return { status: null, answer: '', retryable: true, failure };
  }
}

export async function deliver(delivery: ReadyDelivery, options: DeliveryOptions): Promise<DeliveryResult> {
  const maxAttempts = options.maxAttempts ?? DELIVERY_DEFAULTS.maxAttempts;
  const timeoutMs = options.timeoutMs ?? DELIVERY_DEFAULTS.timeoutMs;
  const deadline = options.now() + (options.deadlineMs ?? DELIVERY_DEFAULTS.deadlineMs);
  const shape = {
    baseDelayMs: options.baseDelayMs ?? DELIVERY_DEFAULTS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? DELIVERY_DEFAULTS.maxDelayMs,
    random: options.random,
  };
  const host = new URL(delivery.url).host;
  let attempts = 0;
  for (;;) {
    // The last attempt gets what is left of the deadline, never more than its own timeout.
    const result = await attempt(delivery, options, Math.max(1, Math.min(timeoutMs, deadline - options.now())));
    attempts += 1;
    if (result.failure === undefined) return { channel: delivery.channel, ok: true, status: result.status!, attempts, answer: result.answer };
    const wait = Math.max(result.retryAfterMs ?? 0, backoffDelayMs(attempts - 1, shape));
    // A retry must be able to start, wait and get its answer before the deadline.
    const fits = options.now() + wait + 1 < deadline;
    if (!result.retryable || attempts >= maxAttempts || !fits) {
      const why = !result.retryable
        ? ''
        : attempts >= maxAttempts
          ? ` after ${attempts} attempts`
          : ` after ${attempts} attempt${attempts === 1 ? '' : 's'} (no time left for another)`;
      return {
        channel: delivery.channel,
        ok: false,
        status: result.status,
        attempts,
        warning: `notify channel ${delivery.channel}: ${host} ${result.failure}${why}; the message was not delivered`,
      };
    }
    await options.sleep(wait);
  }
}
