/**
 * The waits a service asks for, read from response headers. Pure: `now` is passed in.
 *
 * - `Retry-After` (RFC 9110 section 10.2.3): delay-seconds or an HTTP date.
 * - `RateLimit` (draft-ietf-httpapi-ratelimit-headers): the structured form of the current drafts
 *   (`"policy";r=0;t=3`, draft -08 to -10), the older dictionary form (`limit=10, remaining=0,
 *   reset=3`, draft -07), and the separate `RateLimit-Remaining` / `RateLimit-Reset` (drafts up to
 *   -06) or `X-RateLimit-*` fields many services send.
 * - `RateLimit-Policy` (same drafts): the quota q per window w seconds. Draft -08 to -10 name each
 *   policy (`"default";q=100;w=60`, with an optional quota unit `qu`, "requests" by default);
 *   drafts -05 to -07 send the quota as the item itself (`100;w=60`), which drafts up to -05 also
 *   allowed after the number in `RateLimit-Limit` (`100, 100;w=60`). Source: the IETF HTTPAPI
 *   working group's draft-ietf-httpapi-ratelimit-headers, revisions -05, -07 and -10
 *   (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/).
 */

export interface RateLimitState {
  /** Requests left in the current quota. */
  readonly remaining: number;
  /** Milliseconds until the quota is restored. */
  readonly resetMs: number;
}

/** A published quota: `quota` requests per `windowMs`. */
export interface QuotaPolicy {
  readonly quota: number;
  readonly windowMs: number;
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

/**
 * Drafts -08 on: one member per policy, `"name";r=0;t=3`. With several, the one that runs out
 * first binds: the fewest remaining, and of those the latest reset.
 */
function structuredState(text: string): RateLimitState | undefined {
  let binding: RateLimitState | undefined;
  for (const { parameters } of listMembers(text)) {
    const remaining = nonNegative(parameters.get('r'));
    const reset = nonNegative(parameters.get('t'));
    if (remaining === undefined || reset === undefined) continue;
    const state = { remaining, resetMs: Math.min(reset * 1000, MAX_WAIT_MS) };
    if (binding === undefined || state.remaining < binding.remaining || (state.remaining === binding.remaining && state.resetMs > binding.resetMs))
      binding = state;
  }
  return binding;
}

/** Draft -07: a dictionary, `limit=10, remaining=0, reset=3`. */
function dictionaryState(text: string): RateLimitState | undefined {
  const remaining = parameter(text, 'remaining');
  const reset = parameter(text, 'reset');
  return remaining === undefined || reset === undefined ? undefined : { remaining, resetMs: Math.min(reset * 1000, MAX_WAIT_MS) };
}

function nonNegative(text: string | undefined): number | undefined {
  return text !== undefined && /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : undefined;
}

/** The quota state the response reports; undefined when it reports none. */
export function parseRateLimit(headers: HeaderSource): RateLimitState | undefined {
  const combined = headers.get('ratelimit');
  if (combined !== null) {
    const state = structuredState(combined) ?? dictionaryState(combined);
    if (state !== undefined) return state;
  }
  const remaining = numberHeader(headers, 'ratelimit-remaining', 'x-ratelimit-remaining');
  const reset = numberHeader(headers, 'ratelimit-reset', 'x-ratelimit-reset');
  // X-RateLimit-Reset is an epoch time at some services; a value that large is not a delay.
  if (remaining === undefined || reset === undefined || reset > MAX_WAIT_MS / 1000) return undefined;
  return { remaining, resetMs: reset * 1000 };
}

interface ListMember {
  /** The bare item: a number, or a string / token (a policy's name). */
  readonly item: string;
  readonly parameters: ReadonlyMap<string, string>;
}

/** Splits at `separator` outside double quotes. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\' && quoted) index += 1;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/**
 * A structured-field list (RFC 9651 section 3.1), read leniently: members `item;key=value;...`
 * separated by commas. Enough for the RateLimit fields; a member that does not parse is left out.
 */
function listMembers(text: string): ListMember[] {
  const members: ListMember[] = [];
  for (const member of splitOutsideQuotes(text, ',')) {
    const [item = '', ...rest] = splitOutsideQuotes(member, ';').map((part) => part.trim());
    const parameters = new Map<string, string>();
    for (const parameter of rest) {
      const match = /^([a-z*][a-z0-9_.*-]*)\s*(?:=\s*(.*))?$/.exec(parameter);
      if (match) parameters.set(match[1]!, (match[2] ?? '?1').trim());
    }
    members.push({ item, parameters });
  }
  return members;
}

/** A positive decimal number (no sign, no exponent), or undefined. */
function positive(text: string | undefined): number | undefined {
  const value = nonNegative(text);
  return value !== undefined && value > 0 ? value : undefined;
}

function unquoted(text: string): string {
  return text.startsWith('"') && text.endsWith('"') && text.length >= 2 ? text.slice(1, -1) : text;
}

/** One member of RateLimit-Policy (or of a RateLimit-Limit that carries windows); undefined when it is not a request quota. */
function policyOf(member: ListMember): QuotaPolicy | undefined {
  const windowSeconds = positive(member.parameters.get('w'));
  // Drafts -08 on: the item names the policy and q is the quota; before: the item is the quota.
  const quota = positive(member.parameters.get('q')) ?? positive(member.item);
  // A quota counted in another unit (content-bytes, concurrent-requests) does not pace requests.
  const unit = member.parameters.get('qu');
  if (quota === undefined || windowSeconds === undefined || (unit !== undefined && unquoted(unit) !== 'requests')) return undefined;
  return { quota, windowMs: Math.min(windowSeconds * 1000, MAX_WAIT_MS) };
}

/**
 * The quota policy to pace by; undefined when the response publishes none, or none that reads as a
 * request quota. With several (a quota per second and one per day, say), the one of the shortest
 * window (of those, the lowest rate): it is the one a run can pace to, while a long quota is a
 * budget that a run of a few hundred requests rarely uses up, and that `RateLimit` reports when it
 * does. Pacing a run to a daily quota would spread it over the day.
 */
export function parseQuotaPolicy(headers: HeaderSource): QuotaPolicy | undefined {
  let chosen: QuotaPolicy | undefined;
  for (const name of ['ratelimit-policy', 'ratelimit-limit']) {
    const value = headers.get(name);
    if (value === null) continue;
    for (const member of listMembers(value)) {
      const policy = policyOf(member);
      if (
        policy !== undefined &&
        (chosen === undefined || policy.windowMs < chosen.windowMs || (policy.windowMs === chosen.windowMs && policy.quota < chosen.quota))
      )
        chosen = policy;
    }
    if (chosen !== undefined) return chosen;
  }
  return undefined;
}
