/**
 * A tenant's problem said once: errors of the auth layer already start with `tenant acme: `, and a
 * caller that names the tenant again printed `acme: tenant acme: ...`. Pure.
 */

/** `message` without a leading `tenant TENANT: ` (or `tenant "TENANT": `). */
export function withoutTenantPrefix(tenant: string, message: string): string {
  for (const prefix of [`tenant ${tenant}: `, `tenant "${tenant}": `]) if (message.startsWith(prefix)) return message.slice(prefix.length);
  return message;
}

/** `tenant acme: MESSAGE`, naming the tenant once whether or not `message` already did. */
export function tenantMessage(tenant: string, message: string): string {
  return `tenant ${tenant}: ${withoutTenantPrefix(tenant, message)}`;
}
