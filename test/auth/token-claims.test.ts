import { describe, expect, it } from 'vitest';
import { AuthError } from '../../engine/auth/index.ts';
import { checkTokenClaims } from '../../engine/auth/token-claims.ts';
import { craftToken } from './helpers.ts';

describe('checkTokenClaims', () => {
  it.each([
    ['both scopes', 'core:read core:write', ['core:read', 'core:write']],
    ['a wider scope than needed', 'openid core:read core:write', ['core:write']],
    ['scopes in another order, extra spaces', ' core:write  core:read', ['core:read', 'core:write']],
  ] as const)('accepts a token of the tenant with %s', async (_case, scope, needed) => {
    const token = await craftToken({ tenant_id: 'acme', scope });

    expect(() => checkTokenClaims(token, 'acme', needed)).not.toThrow();
  });

  it.each([
    ['another tenant_id', { tenant_id: 'globex', scope: 'core:write' }, ['core:write'], 'auth-wrong-tenant', 'tenant acme: the access token carries tenant_id "globex"; expected tenant_id "acme"'],
    ['no tenant_id', { scope: 'core:write' }, ['core:write'], 'auth-wrong-tenant', 'tenant acme: the access token carries no tenant_id; expected tenant_id "acme"'],
    ['a tenant_id that is not a string', { tenant_id: 7, scope: 'core:write' }, ['core:write'], 'auth-wrong-tenant', 'tenant acme: the access token carries no tenant_id; expected tenant_id "acme"'],
    ['a missing scope', { tenant_id: 'acme', scope: 'core:read' }, ['core:read', 'core:write'], 'auth-missing-scope', 'tenant acme: the access token lacks scope core:write (it has scope "core:read")'],
    ['a scope that only starts like the needed one', { tenant_id: 'acme', scope: 'core:writer' }, ['core:write'], 'auth-missing-scope', 'tenant acme: the access token lacks scope core:write (it has scope "core:writer")'],
    ['no scope at all', { tenant_id: 'acme' }, ['core:read', 'core:write'], 'auth-missing-scope', 'tenant acme: the access token lacks scope core:read, core:write (it has no scope)'],
  ] as const)('refuses a token with %s, naming the tenant and what is wrong', async (_case, claims, needed, code, message) => {
    const token = await craftToken(claims);

    function check(): void {
      checkTokenClaims(token, 'acme', needed);
    }

    expect(check).toThrow(AuthError);
    expect(check).toThrow(expect.objectContaining({ code, tenant: 'acme', message, retryable: false }));
  });

  it.each([
    ['an opaque token', 'opaque-access-token-value'],
    ['three parts that are not JSON', 'abc.def.ghi'],
  ])('refuses %s: its tenant cannot be checked', (_case, token) => {
    function check(): void {
      checkTokenClaims(token, 'acme', ['core:write']);
    }

    expect(check).toThrow(expect.objectContaining({ code: 'auth-invalid-token', tenant: 'acme' }));
    expect(check).toThrow(expect.not.objectContaining({ message: expect.stringContaining(token) }));
  });
});
