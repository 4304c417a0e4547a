/**
 * The waits a service asks for, read from response headers. Pure: `now` is passed in.
 *
 * - `Retry-After` (RFC 9110 section 10.2.3): delay-seconds or an HTTP date.
 * - `RateLimit` (draft-ietf-httpapi-ratelimit-headers): the structured form of the current drafts
 *   (`"policy";r=0;t=3`), the older dictionary form (`limit=10, remaining=0, reset=3`), and the
 *   separate `RateLimit-Remaining` / `RateLimit-Reset` or `X-RateLimit-*` fields many services send.
 */

export interface RateLimitState {
  /** Requests left in the current quota. */
  readonly remaining: number;
  /** Milliseconds until the quota is restored. */
  readonly resetMs: number;
}

/** Headers as a Fetch `Headers` object or anything with `get(name)`. */
export interface HeaderSource {
  get(name: string): string | null;
}

// Waits are capped at a day: a longer one is a misreading (an epoch time), not a real request.
const MAX_WAIT_MS = 86_400_000;

/** The wait `Retry-After` asks for, in ms (0 for a date in the past); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_WAIT_MS);
  // The three forms of RFC 9110 section 5.6.7 all start with a weekday; this refuses numbers with
  // fractions or signs. asctime (`Sun Nov  6 08:49:37 1994`) names no zone and means UTC.
  const asctime = /^[A-Za-z]{3} [A-Za-z]{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}$/.test(text);
  if (!asctime && !/^[A-Za-z]{3,9}, /.test(text)) return undefined;
  const at = Date.parse(asctime ? `${text} GMT` : text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - nowMs), MAX_WAIT_MS);
}

function parameter(text: string, name: string): number | undefined {
  const match = new RegExp(`(?:^|[;,\\s])${name}\\s*=\\s*(\\d+(?:\\.\\d+)?)`).exec(text);
  return match ? Number(match[1]) : undefined;
}

function numberHeader(headers: HeaderSource, ...names: string[]): number | undefined {
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null && /^\s*\d+(?:\.\d+)?\s*$/.test(value)) return Number(value);
  }
  return undefined;
}

/** The quota state the response reports; undefined when it reports none. */
export function parseRateLimit(headers: HeaderSource): RateLimitState | undefined {
  const combined = headers.get('ratelimit');
  if (combined !== null) {
    const remaining = parameter(combined, 'r') ?? parameter(combined, 'remaining');
    const reset = parameter(combined, 't') ?? parameter(combined, 'reset');
    if (remaining !== undefined && reset !== undefined) return { remaining, resetMs: Math.min(reset * 1000, MAX_WAIT_MS) };
  }
  const remaining = numberHeader(headers, 'ratelimit-remaining', 'x-ratelimit-remaining');
  const reset = numberHeader(headers, 'ratelimit-reset', 'x-ratelimit-reset');
  // X-RateLimit-Reset is an epoch time at some services; a value that large is not a delay.
  if (remaining === undefined || reset === undefined || reset > MAX_WAIT_MS / 1000) return undefined;
  return { remaining, resetMs: reset * 1000 };
}
