import { describe, expect, it } from 'vitest';
import { AuthError } from '../../engine/auth/index.ts';
import { checkTokenClaims, type ExpectedClaims } from '../../engine/auth/token-claims.ts';
import { craftToken } from './helpers.ts';

const ACME: ExpectedClaims = { tenant: 'acme', tenantId: 'acme', scopes: ['core:read', 'core:write'] };

describe('checkTokenClaims', () => {
  it.each<[string, Record<string, unknown>, Partial<ExpectedClaims>]>([
    ['both scopes', { tenant_id: 'acme', scope: 'core:read core:write' }, {}],
    ['a wider scope than needed', { tenant_id: 'acme', scope: 'openid core:read core:write' }, { scopes: ['core:write'] }],
    ['scopes in another order, extra spaces', { tenant_id: 'acme', scope: ' core:write  core:read' }, {}],
    ['no scope claim and no scope in the response: it granted what was asked (RFC 6749 section 5.1)', { tenant_id: 'acme' }, {}],
    ["the response's scope, which wins over a narrower claim", { tenant_id: 'acme', scope: 'core:read' }, { responseScopes: ['core:read', 'core:write'] }],
    ['a numeric tenant_id equal to the configured tenantId as text', { tenant_id: 4711, scope: 'core:read core:write' }, { tenantId: '4711' }],
    [
      'a GUID tenant_id equal to the configured tenantId',
      { tenant_id: '0f8fad5b-d9cb-469f-a165-70867728950e' },
      { tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' },
    ],
  ])('accepts a token of the tenant with %s', async (_case, claims, expected) => {
    const token = await craftToken(claims);

    expect(() => checkTokenClaims(token, { ...ACME, ...expected })).not.toThrow();
  });

  it.each<[string, Record<string, unknown>, Partial<ExpectedClaims>, string, string]>([
    [
      'another tenant_id',
      { tenant_id: 'globex', scope: 'core:write' },
      {},
      'auth-wrong-tenant',
      'tenant acme: the access token carries tenant_id "globex"; expected tenant_id "acme"',
    ],
    ['no tenant_id', { scope: 'core:write' }, {}, 'auth-wrong-tenant', 'tenant acme: the access token carries no tenant_id; expected tenant_id "acme"'],
    [
      'a tenant_id that is an object',
      { tenant_id: { id: 'acme' } },
      {},
      'auth-wrong-tenant',
      'tenant acme: the access token carries no tenant_id; expected tenant_id "acme"',
    ],
    [
      'a tenant_id other than the configured tenantId, naming both and the setting',
      { tenant_id: 4712 },
      { tenantId: '4711' },
      'auth-wrong-tenant',
      'tenant acme: the access token carries tenant_id 4712; expected tenant_id "4711" (tenants.acme.tenantId)',
    ],
    [
      'the key when a tenantId is configured',
      { tenant_id: 'acme' },
      { tenantId: '4711' },
      'auth-wrong-tenant',
      'tenant acme: the access token carries tenant_id "acme"; expected tenant_id "4711" (tenants.acme.tenantId)',
    ],
    [
      'a scope claim that lacks one',
      { tenant_id: 'acme', scope: 'core:read' },
      {},
      'auth-missing-scope',
      'tenant acme: the access token lacks scope core:write (it has scope "core:read")',
    ],
    [
      'a scope that only starts like the needed one',
      { tenant_id: 'acme', scope: 'core:writer' },
      { scopes: ['core:write'] },
      'auth-missing-scope',
      'tenant acme: the access token lacks scope core:write (it has scope "core:writer")',
    ],
    [
      'an empty scope claim',
      { tenant_id: 'acme', scope: '' },
      {},
      'auth-missing-scope',
      'tenant acme: the access token lacks scope core:read, core:write (it has no scope)',
    ],
    [
      'a response scope that lacks one, whatever the claim says',
      { tenant_id: 'acme', scope: 'core:read core:write' },
      { responseScopes: ['core:read'] },
      'auth-missing-scope',
      'tenant acme: the access token lacks scope core:write (the token response grants scope "core:read")',
    ],
  ])('refuses a token with %s', async (_case, claims, expected, code, message) => {
    const token = await craftToken(claims);

    function check(): void {
      checkTokenClaims(token, { ...ACME, ...expected });
    }

    expect(check).toThrow(AuthError);
    expect(check).toThrow(expect.objectContaining({ code, tenant: 'acme', message, retryable: false }));
  });

  it.each([
    ['an opaque token', 'opaque-access-token-value'],
    ['three parts that are not JSON', 'abc.def.ghi'],
  ])('refuses %s: its tenant cannot be checked', (_case, token) => {
    function check(): void {
      checkTokenClaims(token, ACME);
    }

    expect(check).toThrow(expect.objectContaining({ code: 'auth-invalid-token', tenant: 'acme' }));
    expect(check).toThrow(expect.not.objectContaining({ message: expect.stringContaining(token) }));
  });
});
