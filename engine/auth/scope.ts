/** The OAuth scopes the engine asks for (docs/architecture.md section 1). */

export const SCOPES = ['core:read', 'core:write', 'audit:read'] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return (SCOPES as readonly unknown[]).includes(value);
}
