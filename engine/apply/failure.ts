/** What a run reports of a failure it caught: any thrown value, never assumed to be an Error. */

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The HTTP status an error carries (ApiError, AuthError), or null. */
export function statusOf(error: unknown): number | null {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : null;
}
