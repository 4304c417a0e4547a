/**
 * The CMS client (docs/architecture.md section 1): PATCH, and GET when `api.read` is configured. Each call
 * is a request/answer pair: a builder that makes the request as plain data and a checker that turns
 * the answer (ApiAnswer: a Fetch `Response` is one) into a result or an ApiError, so both are
 * testable without a network. Requests go over node:http (./http-transport.ts), or a Fetch
 * implementation when one is given.
 */
import { readContract } from '../model/read-schema.ts';
import type { SchemaIssue } from '../model/schema-validator.ts';
import type { ContractFields, Op } from '../model/types.ts';
import { ANSWER_LIMITS, AnswerTooLargeError, readResponseBounded } from '../io/bounded-body.ts';
import { systemClock } from '../io/clock.ts';
import { describeNetworkError, networkErrorCode } from '../io/network-error.ts';
import { REDACTED, type Redactor } from '../log/logger.ts';
import { formatPath } from '../yaml/yaml-source.ts';
import { DEFAULTS, type ApiConfig, type NaiveTimestamps } from '../config/types.ts';
import { describeRequest, parseAnswerJson, unreadBodyError } from './answer-json.ts';
import { ApiError, classifyStatus, isAmbiguousPatchStatus } from './errors.ts';
import { headerOf, NotConnectedError, sendOverHttp, type ApiAnswer, type ApiRequest } from './http-transport.ts';
import { contractAt, ReadShapeError, withReadTimestamps } from './read-body.ts';
import { parseQuotaPolicy, parseRateLimit, parseRetryAfter, type QuotaPolicy, type RateLimitState } from './rate-headers.ts';

export interface ApiClientOptions {
  /** `{base_url}`: PATCH goes to `{baseUrl}/contract/:ContractId`. */
  readonly baseUrl: string;
  /** `api.read.path`, e.g. `/contract/{id}`; reads are unavailable without it. */
  readonly readPath?: string;
  /** `api.read.pointer`: RFC 6901 pointer to the contract in a read's body (default '', the whole body). */
  readonly readPointer?: string;
  /** `api.read.timestamps`: how a read timestamp without an offset is read (default `error`). */
  readonly readTimestamps?: NaiveTimestamps;
  /** `api.patch.contentType` (default application/json). */
  readonly patchContentType?: string;
  /** `api.conflictStatuses`: answers to a PATCH that mean "other members than known" (default [409]). */
  readonly conflictStatuses?: readonly number[];
  readonly timeoutMs: number;
  /** The bound of one answer's body, in bytes (default ANSWER_LIMITS.api); past it the request fails naming it. */
  readonly maxAnswerBytes?: number;
  /** `contract-sync/<version>` */
  readonly userAgent: string;
  /** One per run, sent as X-Correlation-Id so the service's audit events lead back to the run. */
  readonly correlationId: string;
  /** Sends with this Fetch implementation instead of node:http (tests; a fetch that goes through a proxy). */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** Censors secrets that a service might echo into an error body. */
  readonly redactor?: Redactor;
}

/** What a successful response says beyond success: the quota left and the quota policy, when the service reports them. */
export interface ApiOutcome {
  readonly rateLimit?: RateLimitState;
  readonly quotaPolicy?: QuotaPolicy;
}

function rateOutcome(response: ApiAnswer): ApiOutcome {
  const rateLimit = parseRateLimit(response.headers);
  const quotaPolicy = parseQuotaPolicy(response.headers);
  return { ...(rateLimit ? { rateLimit } : {}), ...(quotaPolicy ? { quotaPolicy } : {}) };
}

export interface ReadOutcome extends ApiOutcome {
  /** The live contract's patchable fields, as the model knows them; anything else of the response is dropped. */
  readonly fields: ContractFields;
}

export interface ApiClient {
  readonly canRead: boolean;
  patch(contractId: string, ops: readonly Op[], token: string): Promise<ApiOutcome>;
  read(contractId: string, token: string): Promise<ReadOutcome>;
}

const EXCERPT_CHARS = 300;

function contractUrl(baseUrl: string, pathTemplate: string, contractId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${pathTemplate.replaceAll('{id}', encodeURIComponent(contractId))}`;
}

function headers(options: ApiClientOptions, token: string): Record<string, string> {
  return {
    Authorization: `Bearer ${token}`,
    Accept: 'application/json',
    'User-Agent': options.userAgent,
    'X-Correlation-Id': options.correlationId,
  };
}

/** The client options that come from the config's `api` section. */
export function apiClientSettings(
  api: ApiConfig,
): Pick<ApiClientOptions, 'baseUrl' | 'readPath' | 'readPointer' | 'readTimestamps' | 'patchContentType' | 'conflictStatuses' | 'timeoutMs'> {
  return {
    baseUrl: api.baseUrl,
    ...(api.read ? { readPath: api.read.path, readPointer: api.read.pointer, readTimestamps: api.read.timestamps } : {}),
    patchContentType: api.patch.contentType,
    conflictStatuses: api.conflictStatuses,
    timeoutMs: api.timeoutMs,
  };
}

export function patchRequest(options: ApiClientOptions, contractId: string, ops: readonly Op[], token: string): ApiRequest {
  return {
    method: 'PATCH',
    url: contractUrl(options.baseUrl, '/contract/{id}', contractId),
    headers: { ...headers(options, token), 'Content-Type': options.patchContentType ?? DEFAULTS.patchContentType },
    body: JSON.stringify(ops),
  };
}

export function readRequest(options: ApiClientOptions, contractId: string, token: string): ApiRequest {
  if (options.readPath === undefined) throw new TypeError('reads are not configured (api.read)');
  return { method: 'GET', url: contractUrl(options.baseUrl, options.readPath, contractId), headers: headers(options, token) };
}

/** `METHOD /path` of a request, for messages: never its query, headers or body. */

/** The token a request carries, so that an error body echoing it can be censored without a Redactor. */
function bearerOf(request: ApiRequest): string | undefined {
  return /^Bearer (.+)$/.exec(headerOf(request, 'authorization') ?? '')?.[1];
}

/** Censored whole before it is cut, so that no part of a secret at the cut survives. */
function excerptOfText(request: ApiRequest, text: string, redactor: Redactor | undefined): string {
  const token = bearerOf(request);
  let censored = token === undefined ? text : text.replaceAll(token, REDACTED);
  if (redactor) censored = redactor.redact(censored);
  const flat = censored.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

/** A body that stopped coming and was cut off by the request's timeout: said as a timeout, not as a break. */
class BodyTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, cause: unknown) {
    super(`no complete answer within ${timeoutMs} ms: the body stopped coming`, { cause });
    this.name = 'BodyTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** What of a body was read: all of it, or its first bytes when it was past the bound; undefined when it broke off. */
interface ReadBody {
  readonly text: string;
  readonly tooLarge?: AnswerTooLargeError;
}

/** A body that did not arrive whole: broken off, or stopped until the timeout. */
interface LostBody {
  readonly timedOut?: BodyTimeoutError;
}

async function bodyOf(response: ApiAnswer): Promise<ReadBody | LostBody> {
  try {
    return { text: await response.text() };
  } catch (error) {
    if (error instanceof AnswerTooLargeError) return { text: error.head, tooLarge: error };
    return error instanceof BodyTimeoutError ? { timedOut: error } : {};
  }
}

function isRead(body: ReadBody | LostBody): body is ReadBody {
  return 'text' in body;
}

/** `; the answer's body is larger than 16 MiB, ...`, or nothing. */
function tooLargeNote(body: ReadBody | LostBody): string {
  return isRead(body) && body.tooLarge !== undefined ? `; ${body.tooLarge.message}` : '';
}

/** A proxy's or gateway's page rather than the service's answer: the service publishes no HTML. */
function isHtml(response: ApiAnswer, text: string): boolean {
  const type = response.headers.get('content-type')?.toLowerCase() ?? '';
  return type.startsWith('text/html') || type.startsWith('application/xhtml') || /^\s*<(!doctype html|html[\s>])/i.test(text);
}

function statusLine(response: ApiAnswer): string {
  return `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
}

/**
 * The service publishes no content type: a 415 names the setting that changes it, and what the
 * service says it accepts when it says so (Accept-Patch, RFC 5789; or Accept).
 */
function unsupportedMediaHint(request: ApiRequest, response: ApiAnswer): string {
  const accepted = response.headers.get('accept-patch') ?? response.headers.get('accept');
  const sent = headerOf(request, 'content-type') ?? '(none)';
  return `; the service refuses Content-Type ${sent}: set api.patch.contentType${accepted ? ` (it accepts ${accepted})` : ', e.g. to application/json-patch+json'}`;
}

/**
 * An error status. An HTML page is not the service's answer (docs/architecture.md section 7): a
 * proxy may have answered after the request went on, so it is ambiguous like `ambiguous` statuses.
 */
async function failure(request: ApiRequest, response: ApiAnswer, options: ApiClientOptions, ambiguous = false): Promise<ApiError> {
  const now = (options.now ?? systemClock.now)();
  const rateLimit = parseRateLimit(response.headers);
  const quotaPolicy = parseQuotaPolicy(response.headers);
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), now) ?? (rateLimit && rateLimit.remaining < 1 ? rateLimit.resetMs : undefined);
  const body = await bodyOf(response);
  const text = isRead(body) ? body.text : '';
  const excerpt = excerptOfText(request, text, options.redactor);
  const html = isHtml(response, text);
  const what = html ? `unexpected answer ${statusLine(response)} (an HTML page) from ${new URL(request.url).origin}` : statusLine(response);
  const isPatch = request.method === 'PATCH';
  const conflict = isPatch && (options.conflictStatuses ?? DEFAULTS.conflictStatuses).includes(response.status);
  return new ApiError(
    `${describeRequest(request)}: ${what}${excerpt ? `: ${excerpt}` : ''}${isPatch && response.status === 415 ? unsupportedMediaHint(request, response) : ''}${tooLargeNote(body)}`,
    {
      kind: classifyStatus(response.status),
      status: response.status,
      excerpt,
      ambiguous: ambiguous || html,
      conflict,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(rateLimit === undefined ? {} : { rateLimit }),
      ...(quotaPolicy === undefined ? {} : { quotaPolicy }),
    },
  );
}

/**
 * A PATCH succeeded only when answered 204, or 200 with an empty body (docs/architecture.md section
 * 7). Any other answer is not the published one: a proxy or gateway may have answered, before or
 * after the service applied the patch, so it is an ambiguous error; a PATCH answered 500 or 504
 * may have been applied too.
 */
export async function checkPatchResponse(request: ApiRequest, response: ApiAnswer, options: ApiClientOptions): Promise<ApiOutcome> {
  if (!response.ok) throw await failure(request, response, options, isAmbiguousPatchStatus(response.status));
  // A 204 has no body to wait for; any other answer is read, to tell an empty 200 from the rest.
  const body: ReadBody | LostBody = response.status === 204 ? { text: '' } : await bodyOf(response);
  if (response.status !== 204 && !(response.status === 200 && isRead(body) && body.tooLarge === undefined && body.text.trim() === '')) {
    const excerpt = excerptOfText(request, isRead(body) ? body.text : '', options.redactor);
    const what = isRead(body)
      ? isHtml(response, body.text)
        ? ' (an HTML page)'
        : ''
      : body.timedOut !== undefined
        ? ` whose body stopped coming (no complete answer within ${body.timedOut.timeoutMs} ms)`
        : ' whose body broke off';
    // Resendable only as any ambiguous failure is: a Replace-only patch; Add/Remove are settled by a read.
    throw new ApiError(
      `${describeRequest(request)}: unexpected answer ${statusLine(response)}${what} from ${new URL(request.url).origin}${excerpt ? `: ${excerpt}` : ''}${tooLargeNote(body)}`,
      {
        kind: 'retryable',
        status: response.status,
        excerpt,
        ambiguous: true,
      },
    );
  }
  return rateOutcome(response);
}

/**
 * A read answers the contract as a JSON object, checked against the read schema
 * (specs/contract-read.schema.json): fields and member keys the model does not list are dropped,
 * a known field of the wrong type is a permanent error naming it.
 */
export async function checkReadResponse(request: ApiRequest, response: ApiAnswer, options: ApiClientOptions): Promise<ReadOutcome> {
  if (!response.ok) throw await failure(request, response, options);
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    // The body stopped until the timeout: the answer is lost, not wrong; a read may be repeated.
    if (error instanceof BodyTimeoutError) {
      throw new ApiError(`${describeRequest(request)}: ${error.message}`, { kind: 'retryable', status: null, excerpt: '', ambiguous: true, cause: error });
    }
    // Past the bound (not retried: the same read answers the same), or broken off (reset; may be repeated).
    throw unreadBodyError(request, response.status, error, true);
  }
  const body = parseAnswerJson(request, response.status, text);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(`${describeRequest(request)}: expected a JSON object, got ${Array.isArray(body) ? 'an array' : typeof body}`, {
      kind: 'permanent',
      status: response.status,
      excerpt: '',
      ambiguous: false,
    });
  }
  let contract: Record<string, unknown>;
  try {
    contract = withReadTimestamps(contractAt(body, options.readPointer ?? DEFAULTS.readPointer), options.readTimestamps ?? DEFAULTS.readTimestamps);
  } catch (error) {
    if (!(error instanceof ReadShapeError)) throw error;
    // Never read as an empty contract: that would plan Adds of members the service holds.
    throw new ApiError(`${describeRequest(request)}: ${error.message}`, {
      kind: 'permanent',
      status: response.status,
      excerpt: '',
      ambiguous: false,
      cause: error,
    });
  }
  const { fields, issues } = readContract(contract);
  if (issues.length > 0) {
    // Nothing may be planned from a contract the engine cannot understand: permanent, not retried.
    throw new ApiError(`${describeRequest(request)}: the contract does not fit the contract model: ${describeReadIssues(issues)}`, {
      kind: 'permanent',
      status: response.status,
      excerpt: '',
      ambiguous: false,
    });
  }
  return { fields, ...rateOutcome(response) };
}

const LISTED_READ_ISSUES = 5;

/** `Company: expected a list, got null; Owner[0].User.Id: ...`: the fields at fault, by path. */
function describeReadIssues(issues: readonly SchemaIssue[]): string {
  const listed = issues.slice(0, LISTED_READ_ISSUES).map((issue) => `${formatPath(issue.path) || '(contract)'}: ${issue.message}`);
  const more = issues.length - listed.length;
  return `${listed.join('; ')}${more > 0 ? ` (and ${more} more)` : ''}`;
}

// undici's codes for a connection that was never made: the request cannot have been applied.
const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * `request` through a Fetch implementation; redirects are not followed (a followed 303 turns a PATCH
 * into a GET). The body is read as node:http's is, at most `maxBodyBytes` of it.
 */
async function sendOverFetch(fetchImpl: typeof fetch, request: ApiRequest, signal: AbortSignal, maxBodyBytes: number): Promise<ApiAnswer> {
  const { method, url, headers, body } = request;
  const response = await fetchImpl(new Request(url, { method, headers, ...(body === undefined ? {} : { body }), redirect: 'manual' }), { signal });
  let text: Promise<string> | undefined;
  return {
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    headers: response.headers,
    text() {
      text ??= readResponseBounded(response, maxBodyBytes).then((bytes) => bytes.toString('utf8'));
      return text;
    },
  };
}

/**
 * Sends `request` with the timeout. A failure without a response is retryable; it is ambiguous
 * unless the connection was never made, because a reset or timeout after sending tells nothing
 * about whether the service applied the request.
 */
async function send(request: ApiRequest, options: ApiClientOptions): Promise<ApiAnswer> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const maxBodyBytes = options.maxAnswerBytes ?? ANSWER_LIMITS.api;
    const answer = await (options.fetch === undefined
      ? sendOverHttp(request, signal, maxBodyBytes)
      : sendOverFetch(options.fetch, request, signal, maxBodyBytes));
    return timedBody(answer, signal, options.timeoutMs);
  } catch (error) {
    const timedOut = signal.aborted;
    const notConnected = error instanceof NotConnectedError;
    const code = timedOut ? 'timeout' : (networkErrorCode(error) ?? 'network error');
    const ambiguous = !notConnected && (timedOut || !NOT_SENT_CODES.has(code));
    const what = timedOut
      ? `${notConnected ? 'no connection' : 'no answer'} within ${options.timeoutMs} ms`
      : describeNetworkError(notConnected ? error.cause : error);
    return Promise.reject(new ApiError(`${describeRequest(request)}: ${what}`, { kind: 'retryable', status: null, excerpt: '', ambiguous, cause: error }));
  }
}

/** `answer` whose body, when the timeout cuts it off, rejects with a BodyTimeoutError rather than as a break. */
function timedBody(answer: ApiAnswer, signal: AbortSignal, timeoutMs: number): ApiAnswer {
  return {
    status: answer.status,
    statusText: answer.statusText,
    ok: answer.ok,
    headers: answer.headers,
    text: () =>
      answer.text().catch((error: unknown) => {
        throw signal.aborted ? new BodyTimeoutError(timeoutMs, error) : error;
      }),
  };
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  return {
    canRead: options.readPath !== undefined,
    async patch(contractId, ops, token) {
      const request = patchRequest(options, contractId, ops, token);
      return checkPatchResponse(request, await send(request, options), options);
    },
    async read(contractId, token) {
      const request = readRequest(options, contractId, token);
      return checkReadResponse(request, await send(request, options), options);
    },
  };
}
