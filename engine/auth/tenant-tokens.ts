/**
 * `createTenantTokens`: one instance per engine run holds the realm's discovery (once, shared by
 * every tenant) and one token cache per tenant. Wires secrets, discovery, the grant, the claim
 * checks and the cache; owns no module state.
 */
import { READ_LIMITS, readTextBounded } from '../io/bounded-read.ts';
import { DEFAULTS, type AuthConfig, type Config, type SecretRef } from '../config/types.ts';
import { MAX_SECRET_AGE_MONTHS, secretOverdueAt } from '../config/secret-age.ts';
import { describeSecretRef, resolveSecret, SecretError } from '../config/secrets.ts';
import { Redactor, silentLogger, type Logger } from '../log/logger.ts';
import { discoverAuthorizationServer, secureEndpoint, type AuthorizationServer } from './discovery.ts';
import { AuthError } from './errors.ts';
import { requestTenantToken } from './grant.ts';
import { createTransport } from './oauth-failure.ts';
import { isScope, type Scope } from './scope.ts';
import { previousSecretWarning, type RunWarning } from './rotation-overlap.ts';
import { checkTokenClaims } from './token-claims.ts';
import { createTokenCache, type FetchedToken } from './token-cache.ts';

export interface TenantTokens {
  /** A valid access token for the tenant, checked for tenant_id and scopes. Single-flight. Throws AuthError. */
  get(tenant: string): Promise<string>;
  /** After a 401: drop `token` if it is still the cached one, so the next get() fetches a new one. */
  invalidate(tenant: string, token: string): void;
  /** What the run should say about its tokens (a previousClientSecret used past the overlap), one per tenant. */
  warnings?(): readonly RunWarning[];
}

export interface TenantTokensOptions {
  /** `timeoutMs` defaults to 10 s, as in the config. */
  readonly auth: Omit<AuthConfig, 'timeoutMs'> & { readonly timeoutMs?: number };
  readonly tenants: Config['tenants'];
  /** Asked for in every grant and required in every token. */
  readonly scopes: readonly Scope[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Default: node:fs, UTF-8. */
  readonly readFile?: (path: string) => Promise<string>;
  /** Default: globalThis.fetch. */
  readonly fetch?: typeof fetch;
  /** The bound of one answer's body, in bytes; default ANSWER_LIMITS.identityProvider (1 MiB). */
  readonly maxAnswerBytes?: number;
  /** ms since the epoch; default Date.now. */
  readonly now?: () => number;
  /** In [0, 1): backoff jitter; default Math.random. */
  readonly random?: () => number;
  /** Default: a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Default: silentLogger(). */
  readonly logger?: Logger;
  /** Every resolved secret and every received access token is registered with it (the run's logger redacts them). */
  readonly redactor?: Redactor;
}

function readUtf8(path: string): Promise<string> {
  return readTextBounded(path, READ_LIMITS.secret);
}

function timerSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function checkFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`createTenantTokens: option "${name}" must be a function; got ${typeof value}`);
  }
}

function checkOptions(options: TenantTokensOptions): readonly Scope[] {
  if (!URL.canParse(options.auth.url)) throw new TypeError(`createTenantTokens: option "auth.url" must be a URL; got "${options.auth.url}"`);
  if (options.auth.realm === '') throw new TypeError('createTenantTokens: option "auth.realm" must not be empty');
  const { timeoutMs, tokenEndpoint } = options.auth;
  if (tokenEndpoint !== undefined && secureEndpoint(tokenEndpoint) === undefined) {
    throw new TypeError(`createTenantTokens: option "auth.tokenEndpoint" must be an https:// URL (http:// only on a loopback host); got "${tokenEndpoint}"`);
  }
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1)) {
    throw new TypeError(`createTenantTokens: option "auth.timeoutMs" must be a positive integer; got ${String(timeoutMs)}`);
  }
  if (!Array.isArray(options.scopes) || options.scopes.length === 0) {
    throw new TypeError(`createTenantTokens: option "scopes" must list at least one scope; got ${JSON.stringify(options.scopes)}`);
  }
  for (const scope of options.scopes) {
    if (!isScope(scope)) throw new TypeError(`createTenantTokens: option "scopes" holds an unknown scope ${JSON.stringify(scope)}`);
  }
  const { maxAnswerBytes } = options;
  if (maxAnswerBytes !== undefined && (!Number.isInteger(maxAnswerBytes) || maxAnswerBytes < 1)) {
    throw new TypeError(`createTenantTokens: option "maxAnswerBytes" must be a positive integer; got ${String(maxAnswerBytes)}`);
  }
  for (const name of ['readFile', 'fetch', 'now', 'random', 'sleep'] as const) checkFunction(name, options[name]);
  return [...new Set(options.scopes)];
}

export function createTenantTokens(options: TenantTokensOptions): TenantTokens {
  const scopes = checkOptions(options);
  const { tenants, env } = options;
  const auth: AuthConfig = { ...options.auth, timeoutMs: options.auth.timeoutMs ?? DEFAULTS.authTimeoutMs };
  // Without one passed in, a private one still scrubs secrets a server echoes into an error text.
  const redactor = options.redactor ?? new Redactor();
  const readFile = options.readFile ?? readUtf8;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? timerSleep;
  const logger = options.logger ?? silentLogger();
  const transport = createTransport(options.fetch ?? globalThis.fetch, {
    timeoutMs: auth.timeoutMs,
    ...(options.maxAnswerBytes === undefined ? {} : { maxAnswerBytes: options.maxAnswerBytes }),
  });
  // Tenants whose overdue secret was already reported by this instance.
  const warnedSecretAge = new Set<string>();
  // Tenant -> the warning about its previousClientSecret, once per instance (the run).
  const overlapWarnings = new Map<string, RunWarning>();
  let discovery: Promise<AuthorizationServer> | undefined;

  /** Single-flight and once per instance; a failure is forgotten so that the next get() tries again. */
  function discover(): Promise<AuthorizationServer> {
    discovery ??= discoverAuthorizationServer(auth, { transport, timeoutMs: auth.timeoutMs, random, sleep }).catch((error: unknown) => {
      discovery = undefined;
      throw error;
    });
    return discovery;
  }

  // Resolved for every token request, not once: a rotated secret file is picked up by a long run.
  async function secret(tenant: string, name: 'clientSecret' | 'previousClientSecret', ref: SecretRef): Promise<string> {
    try {
      const value = await resolveSecret(ref, { env, readFile });
      redactor.add(value);
      return value;
    } catch (error) {
      const reason = error instanceof SecretError ? error.message : `${describeSecretRef(ref)} cannot be read`;
      throw new AuthError(`tenant ${tenant}: ${name} cannot be resolved: ${reason}`, { code: 'secret-unresolved', tenant, cause: error });
    }
  }

  function warnIfSecretOld(tenant: string, rotatedAt: string | undefined): void {
    if (rotatedAt === undefined || warnedSecretAge.has(tenant)) return;
    const overdueAt = secretOverdueAt(rotatedAt);
    if (overdueAt === undefined || now() < overdueAt) return;
    warnedSecretAge.add(tenant);
    logger.warn({ tenant, secretRotatedAt: rotatedAt, maxAgeMonths: MAX_SECRET_AGE_MONTHS }, 'client secret is older than 12 months; rotate it');
  }

  // The run goes on (the service decides whether the old secret still works), but says so.
  function warnIfOverlapEnded(tenant: string, rotatedAt: string | undefined): void {
    if (overlapWarnings.has(tenant)) return;
    const warning = previousSecretWarning(tenant, rotatedAt, now());
    if (warning === undefined) return;
    overlapWarnings.set(tenant, warning);
    logger.warn(
      { tenant, secretRotatedAt: rotatedAt ?? null, overlapEndedOn: warning.overlapEndedOn },
      'a token was obtained with previousClientSecret after the rotation overlap; register the new secret and remove previousClientSecret',
    );
  }

  async function fetchToken(tenant: string): Promise<FetchedToken> {
    const config = tenants[tenant]!;
    warnIfSecretOld(tenant, config.secretRotatedAt);
    const current = await secret(tenant, 'clientSecret', config.clientSecret);
    const previousRef = config.previousClientSecret;
    const server = await discover();
    const granted = await requestTenantToken(
      {
        tenant,
        clientId: config.clientId,
        scopes,
        secret: current,
        ...(previousRef === undefined ? {} : { previousSecret: () => secret(tenant, 'previousClientSecret', previousRef) }),
      },
      { server, transport, random, sleep, logger, redactor },
    );
    checkTokenClaims(granted.accessToken, {
      tenant,
      tenantId: config.tenantId ?? tenant,
      scopes,
      ...(granted.scopes === undefined ? {} : { responseScopes: granted.scopes }),
    });
    if (granted.usedPreviousSecret) warnIfOverlapEnded(tenant, config.secretRotatedAt);
    return granted;
  }

  const cache = createTokenCache({ fetchToken, now, logger });

  function get(tenant: string): Promise<string> {
    if (!Object.hasOwn(tenants, tenant)) {
      return Promise.reject(new AuthError(`tenant ${tenant} is not declared in the config`, { code: 'auth-unknown-tenant', tenant }));
    }
    return cache.get(tenant);
  }

  function invalidate(tenant: string, token: string): void {
    cache.invalidate(tenant, token);
  }

  function warnings(): readonly RunWarning[] {
    return [...overlapWarnings.values()];
  }

  return { get, invalidate, warnings };
}
