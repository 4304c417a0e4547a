/** The scopes the service defines (docs/architecture.md sections 1 and 6) and the operation each guards. */
export const READ_SCOPE = 'core:read';
export const WRITE_SCOPE = 'core:write';
export const AUDIT_SCOPE = 'audit:read';
/** The identity provider knows these whether or not a seed client holds them. */
export const SERVICE_SCOPES = [READ_SCOPE, WRITE_SCOPE, AUDIT_SCOPE] as const;
