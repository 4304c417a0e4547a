/**
 * `startEmulator(seed)`: the reference CMS and its identity provider on one loopback HTTP port.
 * Routes: /realms/{realm}/... (oidc-provider), /contract/:id (the API), /__admin/... (admin).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { pino, type Logger } from 'pino';
import { createTokenVerifier } from './access-token.ts';
import { ADMIN_PREFIX, createAdminHandler } from './admin.ts';
import { createApiHandler, isApiPath } from './api.ts';
import { AuditLog } from './audit-log.ts';
import { ContractStore } from './contract-store.ts';
import { FaultInjector, type FaultConfig, type FaultEndpoint, type InjectedFault } from './faults.ts';
import { delay, dropConnection, pathOf, sendJson } from './http.ts';
import { createIdentityProvider, REALM_ROUTES } from './identity-provider.ts';
import { RateLimiter } from './rate-limit.ts';
import { RequestLog } from './request-log.ts';
import { resolveSeed, type ResolvedSeed } from './seed.ts';

export interface EmulatorUrls {
  /** `{base_url}`: PATCH at `{baseUrl}/contract/:id`. Also the `aud` of every access token. */
  readonly baseUrl: string;
  /** `{auth_url}`: discovery at `{authUrl}/realms/{realm}/.well-known/openid-configuration`. */
  readonly authUrl: string;
  readonly realm: string;
  readonly adminUrl: string;
}

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  /** The API's clock (token expiry, rate limit, request log, audit events), in ms since the epoch. Default Date.now. */
  readonly now?: () => number;
  /** Request logs; default: silent. */
  readonly logger?: Logger;
}

export interface Emulator {
  readonly urls: EmulatorUrls;
  close(): Promise<void>;
}

/** The host in the advertised URLs; a wildcard address is advertised as loopback. */
function hostForUrl(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

async function createSigningKey(): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `emulator-${Date.now().toString(36)}`;
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { privateJwk, publicJwk };
}

/** The answer of an injected status fault: RFC 6749 shape for the token endpoint, the API's shape otherwise. */
function sendInjectedStatus(res: ServerResponse, endpoint: FaultEndpoint, fault: InjectedFault): void {
  const status = fault.status ?? 503;
  // 429 and 503 always say when to come back (default 1 s); the other statuses never do.
  const retryAfter = status === 429 || status === 503 ? (fault.retryAfterSeconds ?? 1) : undefined;
  const headers: Record<string, string> = retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  const body =
    endpoint === 'token'
      ? { error: status === 503 ? 'temporarily_unavailable' : 'server_error', error_description: `injected fault: ${status}` }
      : { error: 'injected_fault', message: `injected fault: ${status}` };
  sendJson(res, status, body, headers);
}

/** Keeps the handler from answering: it runs (and commits) but the client sees the connection drop. */
function swallowResponse(res: ServerResponse): void {
  Object.assign(res, {
    writeHead(status: number) {
      res.statusCode = status;
      return res;
    },
    write() {
      return true;
    },
    end() {
      dropConnection(res);
      return res;
    },
  });
}

export async function startEmulator(seedInput: unknown, options: EmulatorOptions = {}): Promise<Emulator> {
  const seed: ResolvedSeed = resolveSeed(seedInput);
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const logger = options.logger ?? pino({ level: 'silent' });

  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${hostForUrl(host)}:${port}`;
  const realmPath = `/realms/${seed.realm}`;
  const urls: EmulatorUrls = { baseUrl: origin, authUrl: origin, realm: seed.realm, adminUrl: `${origin}${ADMIN_PREFIX}` };
  const issuer = `${origin}${realmPath}`;
  const tokenPath = `${realmPath}${REALM_ROUTES.token}`;

  const { privateJwk, publicJwk } = await createSigningKey();
  const idp = createIdentityProvider({ seed, issuer, audience: urls.baseUrl, signingKey: privateJwk, logger });
  const store = new ContractStore(seed);
  const log = new RequestLog();
  const audit = new AuditLog(now);
  const rateLimiter = new RateLimiter(seed.rateLimit, now);
  let faults = new FaultInjector({});

  const handleApi = createApiHandler({
    store,
    audit,
    ...(seed.behaviours === undefined ? {} : { behaviours: seed.behaviours }),
    rateLimiter,
    verify: createTokenVerifier({ publicKey: publicJwk, issuer, audience: urls.baseUrl, now, isRevoked: idp.isRevoked }),
  });
  const handleAdmin = createAdminHandler({
    store,
    audit,
    log,
    getFaults: () => faults.config,
    setFaults(config: FaultConfig) {
      faults = new FaultInjector(config);
    },
    revokeTokens: idp.revokeIssued,
    reset() {
      store.reset();
      audit.clear();
      log.clear();
      rateLimiter.reset();
      faults = new FaultInjector({});
    },
  });

  /** Faults, then the handler, then one request-log entry. */
  async function logged(
    endpoint: FaultEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    handler: () => Promise<string | null>,
  ): Promise<void> {
    const started = now();
    const fault = faults.next(endpoint);
    let tenant: string | null = null;
    let status: number | null = null;
    try {
      if (fault?.latencyMs) await delay(fault.latencyMs);
      if (fault?.type === 'resetBefore') {
        dropConnection(res);
      } else if (fault?.type === 'status') {
        sendInjectedStatus(res, endpoint, fault);
        status = res.statusCode;
      } else {
        if (fault?.type === 'resetAfter') swallowResponse(res);
        tenant = await handler();
        status = res.statusCode;
      }
    } finally {
      const entry = { time: new Date(started).toISOString(), kind: endpoint, method: req.method ?? '', path, tenant, status, fault };
      log.add(entry);
      // The log line has its own "time" (pino's, when it is written): the request's start is `startedAt`.
      const { time: startedAt, ...logged } = entry;
      logger.info({ ...logged, startedAt, ms: now() - started }, 'request');
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    if (path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`)) return handleAdmin(req, res, path);
    if (path === tokenPath) {
      return logged('token', req, res, path, async () => {
        await idp.handle(req, res);
        return idp.tenantOf(req);
      });
    }
    if (path === realmPath || path.startsWith(`${realmPath}/`)) return idp.handle(req, res);
    if (isApiPath(path)) return logged('api', req, res, path, async () => (await handleApi(req, res, path)).tenant);
    sendJson(res, 404, { error: 'not_found', message: `nothing at ${path}` });
  }

  server.on('request', function onRequest(req: IncomingMessage, res: ServerResponse) {
    route(req, res).catch(function onError(error: unknown) {
      logger.error({ error: error instanceof Error ? error.message : String(error) }, 'emulator error');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: 'the emulator failed; see its log' });
      else res.destroy();
    });
  });

  async function close(): Promise<void> {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  return { urls, close };
}
