/**
 * The service's audit events of one contract (`api.audit`, docs/architecture.md section 5), read
 * with an `audit:read` token. The seed says they exist and publishes nothing of their shape, so the
 * path, the list's pointer and the pointers inside an event are configured, as `api.read` is. A
 * request/answer pair like the client's: `auditRequest` builds the request as plain data,
 * `checkAuditResponse` turns an answer into events, and `createAuditReader` sends with an injected
 * fetch. The body is read up to a bound.
 */
import type { AuditConfig } from '../config/types.ts';
import { readResponseBounded } from '../io/bounded-body.ts';
import { describeNetworkError } from '../io/network-error.ts';
import { REDACTED, type Redactor } from '../log/logger.ts';
import { FIELD_NAMES } from '../model/fields.ts';
import { isJsonObject } from '../model/normalise.ts';
import { describeRequest, parseAnswerJson, unreadBodyError } from './answer-json.ts';
import { ApiError, classifyStatus } from './errors.ts';
import type { ApiRequest } from './http-transport.ts';
import { pointerTokens } from './read-body.ts';

/** One change of a contract, as the configured pointers read it. */
export interface AuditEvent {
  /** The event's id, when `api.audit.fields.id` is configured and the event has one. */
  readonly id?: string;
  readonly actor: string;
  /** ISO 8601 UTC. */
  readonly time: string;
  /** Field names; `/Contract/<Field>` op paths are read as `<Field>`. */
  readonly fields: readonly string[];
}

/** Events the configured pointers could not read, counted per setting: reported once, never guessed at. */
export interface AuditProblem {
  /** The setting to look at, e.g. `api.audit.fields.actor`. */
  readonly setting: string;
  readonly message: string;
  /** How many events of the answer it kept out. */
  readonly events: number;
}

export interface AuditRead {
  /** Oldest first, as far as their times say (the answer's order among equal times). */
  readonly events: readonly AuditEvent[];
  readonly problems: readonly AuditProblem[];
}

/** The answer does not hold a list of events where `api.audit.pointer` says. */
export class AuditShapeError extends Error {
  readonly code = 'audit-shape';
  readonly setting = 'api.audit.pointer';
}

export interface AuditReaderOptions {
  readonly baseUrl: string;
  readonly audit: AuditConfig;
  readonly timeoutMs: number;
  readonly userAgent: string;
  readonly correlationId: string;
  /** Default: globalThis.fetch. */
  readonly fetch?: typeof fetch;
  /** The bound of an answer's body (default 8 MiB). */
  readonly maxBytes?: number;
  /** Censors secrets a service might echo into an error body. */
  readonly redactor?: Redactor;
}

export interface AuditReader {
  /** Throws ApiError (status, network, timeout, a body past the bound) or AuditShapeError. */
  read(contractId: string, token: string): Promise<AuditRead>;
}

export const AUDIT_SCOPE = 'audit:read';
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
const EXCERPT_CHARS = 300;
// RFC 3339 with an offset: a time without one would be a guess at its zone.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const KNOWN_FIELDS: ReadonlySet<string> = new Set(FIELD_NAMES);

export function auditRequest(options: AuditReaderOptions, contractId: string, token: string): ApiRequest {
  return {
    method: 'GET',
    url: `${options.baseUrl.replace(/\/+$/, '')}${options.audit.path.replaceAll('{id}', encodeURIComponent(contractId))}`,
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'User-Agent': options.userAgent, 'X-Correlation-Id': options.correlationId },
  };
}

/** The value at `pointer`, or undefined when the pointer leads nowhere. */
function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const token of pointerTokens(pointer)) {
    if (isJsonObject(value) && Object.hasOwn(value, token)) value = value[token];
    else if (Array.isArray(value) && /^(0|[1-9]\d*)$/.test(token)) value = value[Number(token)];
    else return undefined;
  }
  return value;
}

function describeKind(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (isJsonObject(value)) return `an object (keys: ${Object.keys(value).slice(0, 8).join(', ') || 'none'})`;
  return `a ${typeof value}`;
}

function fieldName(value: string): string {
  const name = value.startsWith('/Contract/') ? value.slice('/Contract/'.length) : value;
  return KNOWN_FIELDS.has(name) ? name : value;
}

type EventReading = { readonly event: AuditEvent } | { readonly setting: string; readonly message: string } | { readonly otherContract: true };

function readEvent(raw: unknown, contractId: string, audit: AuditConfig): EventReading {
  const { fields: pointers } = audit;
  if (pointers.contractId !== undefined) {
    const about = valueAt(raw, pointers.contractId);
    if (typeof about !== 'string' && typeof about !== 'number') {
      return { setting: 'api.audit.fields.contractId', message: `no contract id at ${JSON.stringify(pointers.contractId)}` };
    }
    if (String(about) !== contractId) return { otherContract: true };
  }
  const actor = valueAt(raw, pointers.actor);
  if (typeof actor !== 'string' || actor.trim() === '') {
    return { setting: 'api.audit.fields.actor', message: `no actor (a non-empty string) at ${JSON.stringify(pointers.actor)}` };
  }
  const time = valueAt(raw, pointers.time);
  if (typeof time !== 'string' || !RFC3339.test(time) || Number.isNaN(Date.parse(time))) {
    return { setting: 'api.audit.fields.time', message: `no RFC 3339 time with an offset at ${JSON.stringify(pointers.time)}` };
  }
  const changed = valueAt(raw, pointers.contractFields);
  if (!Array.isArray(changed) || !changed.every((name) => typeof name === 'string')) {
    return { setting: 'api.audit.fields.contractFields', message: `no list of field names at ${JSON.stringify(pointers.contractFields)}` };
  }
  const id = pointers.id === undefined ? undefined : valueAt(raw, pointers.id);
  return {
    event: {
      ...(typeof id === 'string' || typeof id === 'number' ? { id: String(id) } : {}),
      actor: actor.trim(),
      time: new Date(Date.parse(time)).toISOString(),
      fields: [...new Set((changed as string[]).map(fieldName))],
    },
  };
}

/** The events of `body` for `contractId`: events the pointers cannot read are counted per setting, not guessed at. */
export function auditEventsOf(body: unknown, contractId: string, audit: AuditConfig): AuditRead {
  const list = valueAt(body, audit.pointer);
  if (!Array.isArray(list)) {
    const found = list === undefined ? `nothing there (the answer is ${describeKind(body)})` : describeKind(list);
    throw new AuditShapeError(`expected a list of events at ${JSON.stringify(audit.pointer)}, found ${found}: set api.audit.pointer`);
  }
  const events: AuditEvent[] = [];
  const problems = new Map<string, { message: string; events: number }>();
  for (const raw of list) {
    const reading = readEvent(raw, contractId, audit);
    if ('event' in reading) events.push(reading.event);
    else if ('setting' in reading) {
      const known = problems.get(reading.setting);
      problems.set(reading.setting, { message: known?.message ?? reading.message, events: (known?.events ?? 0) + 1 });
    }
  }
  // Stable: events of one time keep the answer's order.
  events.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  return { events, problems: [...problems].map(([setting, { message, events: count }]) => ({ setting, message, events: count })) };
}

function excerptOf(request: ApiRequest, text: string, redactor: Redactor | undefined): string {
  const token = /^Bearer (.+)$/.exec(request.headers.Authorization ?? '')?.[1];
  let censored = token === undefined ? text : text.replaceAll(token, REDACTED);
  if (redactor) censored = redactor.redact(censored);
  const flat = censored.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

async function bodyText(request: ApiRequest, response: Response, options: AuditReaderOptions): Promise<string> {
  try {
    return (await readResponseBounded(response, options.maxBytes ?? DEFAULT_MAX_BYTES)).toString('utf8');
  } catch (error) {
    throw unreadBodyError(request, response.status, error, false);
  }
}

export async function checkAuditResponse(request: ApiRequest, response: Response, options: AuditReaderOptions, contractId: string): Promise<AuditRead> {
  const text = await bodyText(request, response, options);
  if (!response.ok) {
    const excerpt = excerptOf(request, text, options.redactor);
    const hint = response.status === 403 ? `; the tenant's client needs the scope ${AUDIT_SCOPE}` : '';
    throw new ApiError(
      `${describeRequest(request)}: ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${excerpt ? `: ${excerpt}` : ''}${hint}`,
      {
        kind: classifyStatus(response.status),
        status: response.status,
        excerpt,
        ambiguous: false,
      },
    );
  }
  const body = parseAnswerJson(request, response.status, text);
  return auditEventsOf(body, contractId, options.audit);
}

export function createAuditReader(options: AuditReaderOptions): AuditReader {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  return {
    async read(contractId, token) {
      const request = auditRequest(options, contractId, token);
      const signal = AbortSignal.timeout(options.timeoutMs);
      let response: Response;
      try {
        response = await fetchImpl(request.url, { method: request.method, headers: request.headers, redirect: 'manual', signal });
      } catch (error) {
        const what = signal.aborted ? `no answer within ${options.timeoutMs} ms` : describeNetworkError(error);
        throw new ApiError(`${describeRequest(request)}: ${what}`, { kind: 'retryable', status: null, excerpt: '', ambiguous: false, cause: error });
      }
      return checkAuditResponse(request, response, options, contractId);
    },
  };
}
