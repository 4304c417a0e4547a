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

/** After a rotation the previous secret stays valid this long (docs/architecture.md section 1). */
export const ROTATION_OVERLAP_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The instant the rotation overlap of a secret rotated on `rotatedAt` (YYYY-MM-DD) ends; undefined if not a date. */
export function overlapEndsAt(rotatedAt: string): number | undefined {
  const rotated = Date.parse(`${rotatedAt}T00:00:00Z`);
  return Number.isNaN(rotated) ? undefined : rotated + ROTATION_OVERLAP_DAYS * DAY_MS;
}
