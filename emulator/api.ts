/**
 * The CMS API: `PATCH /contract/:ContractId` (published), `GET /contract/:ContractId` (the
 * emulator's assumption of a read) and `GET /audit/events?contractId=ID` (its assumption of the
 * audit events the seed says exist). Status codes and bodies are documented in specs/openapi.yaml.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getField, InvalidOpsError, isContractId, OpConflictError, validateOps, type ContractFields, type Op } from '../engine/model/index.ts';
import { TokenRejected, type TokenVerifier, type VerifiedToken } from './access-token.ts';
import { orderFields, type AuditLog } from './audit-log.ts';
import type { ContractStore } from './contract-store.ts';
import { mediaTypeOf, MAX_BODY_BYTES, readBody, sendEmpty, sendJson } from './http.ts';
import type { RateLimiter } from './rate-limit.ts';
import { AUDIT_SCOPE, READ_SCOPE, WRITE_SCOPE } from './scopes.ts';
import type { SeedBehaviours } from './seed.ts';

const CONTRACT_PATH = /^\/contract\/([^/]+)$/;
export const AUDIT_PATH = '/audit/events';

export interface ApiDependencies {
  readonly store: ContractStore;
  /** Where every successful PATCH records its event (actor: the token's client id). */
  readonly audit: AuditLog;
  /** The seed's optional behaviours (read envelope, naive timestamps, content type, conflict status). */
  readonly behaviours?: SeedBehaviours;
  readonly verify: TokenVerifier;
  readonly rateLimiter: RateLimiter;
}

/** The tenant a request was made for, once known from its token (for the request log). */
export interface ApiOutcome {
  readonly tenant: string | null;
}

export function isApiPath(path: string): boolean {
  return path === '/contract' || path.startsWith('/contract/') || path === AUDIT_PATH;
}

interface OpProblemBody {
  readonly index: number;
  readonly op?: string;
  readonly path?: string;
  readonly message: string;
}

function problemBodies(ops: unknown, problems: readonly { index: number; message: string }[]): OpProblemBody[] {
  return problems.map(({ index, message }) => {
    const op = Array.isArray(ops) ? (ops[index] as Record<string, unknown> | undefined) : undefined;
    const name = typeof op?.op === 'string' ? { op: op.op } : {};
    const at = typeof op?.path === 'string' ? { path: op.path } : {};
    return { index, ...name, ...at, message };
  });
}

function contractIdOf(path: string): string | undefined {
  const match = CONTRACT_PATH.exec(path);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/** A read as the seed's behaviours shape it: timestamps without an offset, the contract inside an envelope. */
function readAnswer(contract: ContractFields, id: string, behaviours: SeedBehaviours): unknown {
  let fields: Record<string, unknown> = contract;
  if (behaviours.naiveTimestamps) {
    fields = Object.fromEntries(
      Object.entries(fields).map(([key, value]) => [key, isTimestampField(key) && typeof value === 'string' ? value.replace(/Z$/, '') : value]),
    );
  }
  if (behaviours.readEnvelope === undefined) return fields;
  return { [behaviours.readEnvelope]: fields, Links: { self: `/contract/${encodeURIComponent(id)}` } };
}

function isTimestampField(name: string): boolean {
  return getField(name)?.kind === 'timestamp';
}

export function createApiHandler(deps: ApiDependencies) {
  const { store, audit, verify, rateLimiter, behaviours = {} } = deps;
  const contentType = behaviours.patchContentType ?? 'application/json';
  const conflictStatus = behaviours.conflictStatus ?? 409;

  /**
   * The checks every API request passes, in order: bearer token (401), the tenant's rate limit
   * (429), the scope `needed` (403). When one fails, answers and returns the tenant known so far.
   */
  async function authorize(
    req: IncomingMessage,
    res: ServerResponse,
    needed: string,
  ): Promise<{ token: VerifiedToken; rateHeaders: Record<string, string> } | { tenant: string | null }> {
    let token: VerifiedToken;
    try {
      token = await verify(req.headers.authorization);
    } catch (error) {
      if (!(error instanceof TokenRejected)) throw error;
      sendJson(
        res,
        401,
        { error: 'invalid_token', message: error.message },
        {
          'WWW-Authenticate': `Bearer error="invalid_token", error_description="${error.message.replaceAll('"', "'")}"`,
        },
      );
      return { tenant: null };
    }
    const { tenant, scopes } = token;

    const decision = rateLimiter.take(tenant);
    const rateHeaders = rateLimiter.headers(decision);
    if (!decision.allowed) {
      sendJson(
        res,
        429,
        { error: 'rate_limited', message: 'too many requests for this tenant', retryAfterSeconds: decision.retryAfterSeconds },
        {
          ...rateHeaders,
          'Retry-After': String(decision.retryAfterSeconds),
        },
      );
      return { tenant };
    }

    if (!scopes.has(needed)) {
      sendJson(
        res,
        403,
        { error: 'insufficient_scope', scope: needed, message: `the access token lacks the scope ${needed}` },
        {
          ...rateHeaders,
          'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed}"`,
        },
      );
      return { tenant };
    }
    return { token, rateHeaders };
  }

  /** `GET /audit/events?contractId=ID`: the token's tenant's events of one contract, oldest first. */
  async function handleAudit(req: IncomingMessage, res: ServerResponse): Promise<ApiOutcome> {
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'method_not_allowed', message: `${req.method ?? ''} is not supported here` }, { Allow: 'GET' });
      return { tenant: null };
    }
    const authorized = await authorize(req, res, AUDIT_SCOPE);
    if (!('token' in authorized)) return authorized;
    const { token, rateHeaders } = authorized;
    const contractId = new URL(req.url ?? '/', 'http://emulator.invalid').searchParams.get('contractId');
    if (contractId === null || !isContractId(contractId)) {
      sendJson(res, 400, { error: 'invalid_query', message: 'give the contract as ?contractId=ID (a valid contract id)' }, rateHeaders);
      return { tenant: token.tenant };
    }
    // The token's tenant only: another tenant's contract has no events for this caller.
    sendJson(res, 200, { events: audit.forContract(token.tenant, contractId) }, rateHeaders);
    return { tenant: token.tenant };
  }

  return async function handleApi(req: IncomingMessage, res: ServerResponse, path: string): Promise<ApiOutcome> {
    if (path === AUDIT_PATH) return handleAudit(req, res);
    const id = contractIdOf(path);
    if (id === undefined) {
      sendJson(res, 404, { error: 'not_found', message: 'no such resource; the API serves /contract/{ContractId}' });
      return { tenant: null };
    }
    if (req.method !== 'PATCH' && req.method !== 'GET') {
      sendJson(res, 405, { error: 'method_not_allowed', message: `${req.method ?? ''} is not supported here` }, { Allow: 'GET, PATCH' });
      return { tenant: null };
    }

    const authorized = await authorize(req, res, req.method === 'GET' ? READ_SCOPE : WRITE_SCOPE);
    if (!('token' in authorized)) return authorized;
    const { token, rateHeaders } = authorized;
    const { tenant } = token;

    // Tenant only from tenant_id: another tenant's contract does not exist for this caller.
    if (!store.has(tenant, id)) {
      sendJson(res, 404, { error: 'not_found', message: `no contract ${id}` }, rateHeaders);
      return { tenant };
    }

    if (req.method === 'GET') {
      sendJson(res, 200, readAnswer(store.get(tenant, id)!, id, behaviours), rateHeaders);
      return { tenant };
    }

    if (mediaTypeOf(req.headers['content-type']) !== contentType) {
      sendJson(
        res,
        415,
        { error: 'unsupported_media_type', message: `send the operations as Content-Type: ${contentType}` },
        {
          ...rateHeaders,
          'Accept-Patch': contentType,
        },
      );
      return { tenant };
    }
    const body = await readBody(req);
    if (!body.ok) {
      sendJson(
        res,
        413,
        { error: 'payload_too_large', message: `the body is larger than ${MAX_BODY_BYTES} bytes`, limitBytes: MAX_BODY_BYTES },
        {
          ...rateHeaders,
          Connection: 'close',
        },
      );
      return { tenant };
    }
    let ops: unknown;
    try {
      ops = JSON.parse(body.text);
    } catch {
      sendJson(res, 400, { error: 'invalid_json', message: 'the body is not valid JSON' }, rateHeaders);
      return { tenant };
    }
    const problems = validateOps(ops);
    if (problems.length > 0) {
      sendJson(
        res,
        400,
        { error: 'invalid_ops', message: 'the operations are invalid; nothing was applied', problems: problemBodies(ops, problems) },
        rateHeaders,
      );
      return { tenant };
    }
    try {
      store.patch(tenant, id, ops as Op[]);
    } catch (error) {
      if (error instanceof OpConflictError) {
        sendJson(res, conflictStatus, { error: 'conflict', message: `${error.message}; nothing was applied`, index: error.index }, rateHeaders);
        return { tenant };
      }
      if (error instanceof InvalidOpsError) {
        sendJson(
          res,
          400,
          { error: 'invalid_ops', message: 'the operations are invalid; nothing was applied', problems: problemBodies(ops, error.problems) },
          rateHeaders,
        );
        return { tenant };
      }
      throw error;
    }
    audit.record(tenant, id, token.clientId, orderFields((ops as Op[]).map((op) => op.path.slice('/Contract/'.length))));
    sendEmpty(res, 204, rateHeaders);
    return { tenant };
  };
}
