/**
 * Checks of an access token before any request is queued with it: its `tenant_id` is the tenant it
 * was requested for, and its `scope` covers what the command needs. The signature is not checked:
 * the token came over TLS from the discovered issuer's token endpoint, and the API checks it.
 */
import { decodeJwt, type JWTPayload } from 'jose';
import { AuthError } from './errors.ts';
import type { Scope } from './scope.ts';
import { splitScope } from './token-endpoint.ts';

function claimsOf(token: string, tenant: string): JWTPayload {
  try {
    return decodeJwt(token);
  } catch {
    // jose's message does not quote the token; the cause is left out all the same.
    throw new AuthError(`tenant ${tenant}: the access token is not a JWT, so its tenant_id cannot be checked`, { code: 'auth-invalid-token', tenant });
  }
}

/** The JWT's `scope` claim (RFC 9068: space-separated), or undefined when it has none. */
export function scopeClaim(claims: JWTPayload): readonly string[] | undefined {
  return typeof claims.scope === 'string' ? splitScope(claims.scope) : undefined;
}

export interface ExpectedClaims {
  /** The config key, as messages name the tenant. */
  readonly tenant: string;
  /** The service's id of the tenant (`tenants.<key>.tenantId`, default the key). */
  readonly tenantId: string;
  /** What the command needs, and what was asked for. */
  readonly scopes: readonly Scope[];
  /** The token response's `scope`, when it had one. */
  readonly responseScopes?: readonly string[];
}

function describeTenantId(value: unknown): string {
  if (typeof value === 'string') return `tenant_id "${value}"`;
  if (typeof value === 'number') return `tenant_id ${value}`;
  return 'no tenant_id';
}

/**
 * What was granted, by RFC 6749 section 5.1: the response's `scope` when present, else the token's
 * `scope` claim when present, else what was asked.
 */
function granted(claims: JWTPayload, expected: ExpectedClaims): { scopes: readonly string[]; from: string } {
  if (expected.responseScopes !== undefined) return { scopes: expected.responseScopes, from: 'the token response grants' };
  const claim = scopeClaim(claims);
  if (claim !== undefined) return { scopes: claim, from: 'it has' };
  return { scopes: expected.scopes, from: 'nothing says otherwise' };
}

/** Throws an AuthError naming the tenant and what is wrong; the message never holds the token. */
export function checkTokenClaims(token: string, expected: ExpectedClaims): void {
  const { tenant, tenantId } = expected;
  const claims = claimsOf(token, tenant);
  // A service tenant id may be a number in the token and an unquoted integer in the config: compared as text.
  const found = claims.tenant_id;
  if ((typeof found !== 'string' && typeof found !== 'number') || String(found) !== tenantId) {
    const where = tenantId === tenant ? '' : ` (tenants.${tenant}.tenantId)`;
    throw new AuthError(`tenant ${tenant}: the access token carries ${describeTenantId(found)}; expected tenant_id "${tenantId}"${where}`, {
      code: 'auth-wrong-tenant',
      tenant,
    });
  }
  const grant = granted(claims, expected);
  const missing = expected.scopes.filter((scope) => !grant.scopes.includes(scope));
  if (missing.length > 0) {
    const has = grant.scopes.length === 0 ? 'no scope' : `scope "${grant.scopes.join(' ')}"`;
    throw new AuthError(`tenant ${tenant}: the access token lacks scope ${missing.join(', ')} (${grant.from} ${has})`, { code: 'auth-missing-scope', tenant });
  }
}
