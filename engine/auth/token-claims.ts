/**
 * Checks of an access token before any request is queued with it: its `tenant_id` is the tenant it
 * was requested for, and its `scope` covers what the command needs. The signature is not checked:
 * the token came over TLS from the discovered issuer's token endpoint, and the API checks it.
 */
import { decodeJwt, type JWTPayload } from 'jose';
import { AuthError } from './errors.ts';
import type { Scope } from './scope.ts';

function claimsOf(token: string, tenant: string): JWTPayload {
  try {
    return decodeJwt(token);
  } catch {
    // jose's message does not quote the token; the cause is left out all the same.
    throw new AuthError(`tenant ${tenant}: the access token is not a JWT, so its tenant_id cannot be checked`, { code: 'auth-invalid-token', tenant });
  }
}

/** The scopes a token grants: RFC 9068's space-separated `scope` claim. */
export function grantedScopes(claims: JWTPayload): readonly string[] {
  return typeof claims.scope === 'string' ? claims.scope.split(' ').filter((scope) => scope !== '') : [];
}

/** Throws an AuthError naming the tenant and what is wrong; the message never holds the token. */
export function checkTokenClaims(token: string, tenant: string, scopes: readonly Scope[]): void {
  const claims = claimsOf(token, tenant);
  const tenantId = claims.tenant_id;
  if (tenantId !== tenant) {
    const found = typeof tenantId === 'string' ? `tenant_id "${tenantId}"` : 'no tenant_id';
    throw new AuthError(`tenant ${tenant}: the access token carries ${found}; expected tenant_id "${tenant}"`, { code: 'auth-wrong-tenant', tenant });
  }
  const granted = grantedScopes(claims);
  const missing = scopes.filter((scope) => !granted.includes(scope));
  if (missing.length > 0) {
    const has = granted.length === 0 ? 'no scope' : `scope "${granted.join(' ')}"`;
    throw new AuthError(`tenant ${tenant}: the access token lacks scope ${missing.join(', ')} (it has ${has})`, { code: 'auth-missing-scope', tenant });
  }
}
