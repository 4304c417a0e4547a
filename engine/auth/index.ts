export { AuthError, type AuthErrorCode, type AuthErrorDetails } from './errors.ts';
export { SCOPES, isScope, type Scope } from './scope.ts';
export { MAX_SECRET_AGE_MONTHS } from '../config/secret-age.ts';
export { createTenantTokens, type TenantTokens, type TenantTokensOptions } from './tenant-tokens.ts';
export { previousSecretWarning, type RunWarning } from './rotation-overlap.ts';
