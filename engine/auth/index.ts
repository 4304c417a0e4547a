export { AuthError, type AuthErrorCode, type AuthErrorDetails } from './errors.ts';
export { SCOPES, isScope, type Scope } from './scope.ts';
export { createTenantTokens, MAX_SECRET_AGE_MONTHS, type TenantTokens, type TenantTokensOptions } from './tenant-tokens.ts';
