/** `/__admin`: inspect and steer the emulator (docs/architecture.md section 6). Loopback callers only, no auth. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isContractId, readContract, TENANT_PATTERN, type ContractFields } from '../engine/model/index.ts';
import { changedFields, type AuditLog } from './audit-log.ts';
import type { ContractStore } from './contract-store.ts';
import { validateFaults, type FaultConfig } from './faults.ts';
import { isLoopbackAddress, readBody, sendEmpty, sendJson } from './http.ts';
import type { RequestLog } from './request-log.ts';

export const ADMIN_PREFIX = '/__admin';
/** The actor of an out-of-band edit without an X-Actor header: someone in the service's UI. */
export const DEFAULT_ACTOR = 'admin';
const ACTOR_PATTERN = /^[^\p{Cc}]{1,256}$/u;

export interface AdminDependencies {
  readonly store: ContractStore;
  /** Every out-of-band PUT that changes a field records an event (actor: its X-Actor header). */
  readonly audit: AuditLog;
  readonly log: RequestLog;
  readonly getFaults: () => FaultConfig;
  readonly setFaults: (config: FaultConfig) => void;
  readonly revokeTokens: () => void;
  readonly reset: () => void;
}

const ENDPOINTS = [
  'GET /__admin/contracts/:tenant/:id',
  'PUT /__admin/contracts/:tenant/:id',
  'GET /__admin/requests',
  'GET /__admin/faults',
  'POST /__admin/faults',
  'POST /__admin/revoke-tokens',
  'POST /__admin/reset',
];

async function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const body = await readBody(req);
  if (!body.ok) {
    sendJson(res, 413, { error: 'payload_too_large', message: 'the body is larger than 1 MiB' });
    return { ok: false };
  }
  try {
    return { ok: true, value: body.text.trim() === '' ? {} : JSON.parse(body.text) };
  } catch {
    sendJson(res, 400, { error: 'invalid_json', message: 'the body is not valid JSON' });
    return { ok: false };
  }
}

export function createAdminHandler(deps: AdminDependencies) {
  const tenantPattern = new RegExp(TENANT_PATTERN);

  async function contract(req: IncomingMessage, res: ServerResponse, tenant: string, id: string): Promise<void> {
    if (!tenantPattern.test(tenant) || !isContractId(id)) {
      sendJson(res, 404, { error: 'not_found', message: 'invalid tenant or contract id' });
      return;
    }
    if (req.method === 'GET') {
      const fields = deps.store.get(tenant, id);
      if (fields === undefined) sendJson(res, 404, { error: 'not_found', message: `no contract ${id} for tenant ${tenant}` });
      else sendJson(res, 200, fields);
      return;
    }
    if (req.method !== 'PUT') {
      sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET or PUT' }, { Allow: 'GET, PUT' });
      return;
    }
    const body = await readJson(req, res);
    if (!body.ok) return;
    // What a service may hold: checked against the read schema, so that keys the model does not
    // list (a Company member's Name) are kept and served by reads, as an unpublished read shape may.
    const { issues } = readContract(body.value);
    if (issues.length > 0) {
      sendJson(res, 400, { error: 'invalid_contract', problems: issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })) });
      return;
    }
    const header = req.headers['x-actor'];
    const actor = typeof header === 'string' ? header.trim() : DEFAULT_ACTOR;
    if (!ACTOR_PATTERN.test(actor)) {
      sendJson(res, 400, { error: 'invalid_actor', message: 'X-Actor must be 1 to 256 characters without control characters' });
      return;
    }
    const before = deps.store.get(tenant, id);
    deps.store.put(tenant, id, body.value as ContractFields);
    deps.audit.record(tenant, id, actor, changedFields(before, body.value as ContractFields));
    sendEmpty(res, before === undefined ? 201 : 204);
  }

  async function faults(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') {
      sendJson(res, 200, deps.getFaults());
      return;
    }
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET or POST' }, { Allow: 'GET, POST' });
      return;
    }
    const body = await readJson(req, res);
    if (!body.ok) return;
    const problems = validateFaults(body.value);
    if (problems.length > 0) {
      sendJson(res, 400, { error: 'invalid_faults', problems });
      return;
    }
    deps.setFaults(body.value as FaultConfig);
    sendEmpty(res, 204);
  }

  function action(req: IncomingMessage, res: ServerResponse, run: () => void): void {
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: 'method_not_allowed', message: 'use POST' }, { Allow: 'POST' });
      return;
    }
    run();
    sendEmpty(res, 204);
  }

  return async function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (!isLoopbackAddress(req.socket.remoteAddress)) {
      sendJson(res, 403, { error: 'forbidden', message: 'the admin endpoints answer loopback callers only' });
      return;
    }
    const rest = path.slice(ADMIN_PREFIX.length);
    const contractMatch = /^\/contracts\/([^/]+)\/([^/]+)$/.exec(rest);
    if (contractMatch) {
      let tenant: string;
      let id: string;
      try {
        tenant = decodeURIComponent(contractMatch[1]!);
        id = decodeURIComponent(contractMatch[2]!);
      } catch {
        sendJson(res, 404, { error: 'not_found', message: 'invalid tenant or contract id' });
        return;
      }
      await contract(req, res, tenant, id);
      return;
    }
    switch (rest) {
      case '':
      case '/':
        sendJson(res, 200, { endpoints: ENDPOINTS });
        return;
      case '/requests':
        if (req.method === 'GET') sendJson(res, 200, deps.log.entries());
        else sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET' }, { Allow: 'GET' });
        return;
      case '/faults':
        await faults(req, res);
        return;
      case '/revoke-tokens':
        action(req, res, deps.revokeTokens);
        return;
      case '/reset':
        action(req, res, deps.reset);
        return;
      default:
        sendJson(res, 404, { error: 'not_found', message: 'unknown admin endpoint', endpoints: ENDPOINTS });
    }
  };
}
