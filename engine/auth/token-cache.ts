/**
 * The access-token cache of one engine instance, per tenant (docs/architecture.md section 7): single-flight,
 * refreshed before expiry on the injected clock, and serving the current token while a refresh fails.
 * Pure apart from `fetchToken` and `now`: no HTTP, no timers.
 */
import type { Logger } from '../log/logger.ts';

export interface FetchedToken {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
}

export interface TokenCacheOptions {
  /** One token request for the tenant; a token it returns has already passed every check. */
  readonly fetchToken: (tenant: string) => Promise<FetchedToken>;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly logger: Logger;
}

export interface TokenCache {
  get(tenant: string): Promise<string>;
  invalidate(tenant: string, token: string): void;
}

/** Refresh this long before expiry: a request sent just before expiry may arrive after it. */
export const REFRESH_MARGIN_MS = 60_000;
/** A token living this long or less is refreshed at half its life instead: the margin would eat most of it. */
export const SHORT_TOKEN_SECONDS = 120;
/** After a failed refresh, the current token is served this long before the next refresh attempt. */
export const REFRESH_RETRY_MS = 5_000;

interface CachedToken {
  readonly value: string;
  /** From here on, get() fetches a new token. */
  readonly refreshAt: number;
  /** From here on, the token is never served. */
  readonly expiresAt: number;
}

interface TenantEntry {
  token: CachedToken | undefined;
  /** The one token request in flight for the tenant: every caller meanwhile waits for it. */
  inflight: Promise<string> | undefined;
}

/** When a token received at `receivedAt` (local clock) is to be refreshed. */
export function refreshTime(receivedAt: number, expiresInSeconds: number): number {
  const lifeMs = expiresInSeconds * 1000;
  return receivedAt + (expiresInSeconds <= SHORT_TOKEN_SECONDS ? lifeMs / 2 : lifeMs - REFRESH_MARGIN_MS);
}

function describe(error: unknown): { code: string | undefined; reason: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return { code: typeof code === 'string' ? code : undefined, reason: error instanceof Error ? error.message : String(error) };
}

export function createTokenCache(options: TokenCacheOptions): TokenCache {
  const { fetchToken, now, logger } = options;
  const entries = new Map<string, TenantEntry>();

  function entryOf(tenant: string): TenantEntry {
    let entry = entries.get(tenant);
    if (entry === undefined) {
      entry = { token: undefined, inflight: undefined };
      entries.set(tenant, entry);
    }
    return entry;
  }

  async function refresh(tenant: string, entry: TenantEntry): Promise<string> {
    try {
      const fetched = await fetchToken(tenant);
      // Life is counted from local receipt, on the local clock: the server's clock may differ.
      const receivedAt = now();
      entry.token = {
        value: fetched.accessToken,
        refreshAt: refreshTime(receivedAt, fetched.expiresInSeconds),
        expiresAt: receivedAt + fetched.expiresInSeconds * 1000,
      };
      logger.debug({ tenant, expiresInSeconds: fetched.expiresInSeconds }, 'access token received');
      return fetched.accessToken;
    } catch (error) {
      // The token cached now, not the one cached when the refresh began: invalidate() may have dropped it.
      const current = entry.token;
      const at = now();
      if (current === undefined || at >= current.expiresAt) throw error;
      entry.token = { ...current, refreshAt: Math.min(at + REFRESH_RETRY_MS, current.expiresAt) };
      logger.warn(
        { tenant, ...describe(error), validForSeconds: Math.floor((current.expiresAt - at) / 1000) },
        'access token refresh failed; serving the current token until it expires',
      );
      return current.value;
    }
  }

  function get(tenant: string): Promise<string> {
    const entry = entryOf(tenant);
    if (entry.token !== undefined && now() < entry.token.refreshAt) return Promise.resolve(entry.token.value);
    // Cleared in a reaction, which always runs after this assignment (even if fetchToken throws synchronously).
    entry.inflight ??= refresh(tenant, entry).finally(() => {
      entry.inflight = undefined;
    });
    return entry.inflight;
  }

  function invalidate(tenant: string, token: string): void {
    const entry = entries.get(tenant);
    // Many requests fail with 401 on the same token; only the first drop counts, never a newer token's.
    if (entry?.token?.value === token) entry.token = undefined;
  }

  return { get, invalidate };
}
