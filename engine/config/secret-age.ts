/** The secret-age rule, shared by validate's hygiene warnings and the token cache's run-time warning. */

/** A client secret is rotated at least every 12 months (docs/architecture.md section 1). */
export const MAX_SECRET_AGE_MONTHS = 12;

/** The first instant at which a secret rotated on `rotatedAt` (YYYY-MM-DD) is overdue; undefined if not a date. */
export function secretOverdueAt(rotatedAt: string): number | undefined {
  const date = new Date(`${rotatedAt}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return undefined;
  date.setUTCMonth(date.getUTCMonth() + MAX_SECRET_AGE_MONTHS);
  return date.getTime();
}
