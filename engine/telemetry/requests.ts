/**
 * The requests a run sends to the service, as telemetry sees them: one record per read or PATCH
 * (method, the path template, the server, the answer's status or the failure's kind, start and
 * end, and the tenant whose token it carried), kept by an object the run owns, and exported with
 * the run as spans under their tenant's span and as the request-duration histogram. Only the
 * template is kept, never the URL with its id, a header or a body: nothing of a token or a
 * contract's value. The clock is injected.
 */
import type { ApiClient } from '../api/client.ts';
import type { TenantTokens } from '../auth/index.ts';

export interface RequestRecord {
  /** GET and PATCH to the service; GET (discovery) and POST (a token) to the identity provider. */
  readonly method: 'GET' | 'PATCH' | 'POST';
  /** `identity`: a request to the identity provider (discovery, a token); else one to the service. */
  readonly to?: 'identity';
  /** The tenant whose token the request carried (recordingTokens), when the run's tokens are recorded. */
  readonly tenant?: string;
  /** e.g. `/contract/{id}` (the configured path, not the contract's), or the identity provider's path. */
  readonly template: string;
  readonly server: string;
  readonly port: number;
  /**
   * A failed request's status; null when there was none (network, timeout), and for a success,
   * whose exact 2xx the client does not hand back (a PATCH succeeds on 204 or an empty 200).
   */
  readonly status: number | null;
  /** A failure's kind (`retryable`, `permanent`, ...) when the request failed. */
  readonly errorType?: string;
  /** ms since the epoch. */
  readonly start: number;
  readonly end: number;
}

export interface RequestRecorder {
  readonly records: RequestRecord[];
  /**
   * Each access token the run's token caches handed out, and its tenant: a request is its tenant's
   * by the token it carries (one token cache per tenant, never shared). Held in memory for the run,
   * as the caches hold the tokens; never recorded or exported.
   */
  readonly tenantOfToken: Map<string, string>;
}

export function requestRecorder(): RequestRecorder {
  return { records: [], tenantOfToken: new Map() };
}

/** `tokens` with every token it hands out known to `recorder` as its tenant's. */
export function recordingTokens(tokens: TenantTokens, recorder: RequestRecorder): TenantTokens {
  return {
    async get(tenant) {
      const token = await tokens.get(tenant);
      recorder.tenantOfToken.set(token, tenant);
      return token;
    },
    invalidate: (tenant, token) => tokens.invalidate(tenant, token),
    ...(tokens.warnings ? { warnings: () => tokens.warnings!() } : {}),
  };
}

export interface RecordedApi {
  readonly baseUrl: string;
  readonly readPath?: string;
  readonly now: () => number;
}

/** `api` with each read and PATCH recorded in `recorder`; answers and failures pass through unchanged. */
export function recordingApiClient(api: ApiClient, recorder: RequestRecorder, options: RecordedApi): ApiClient {
  const url = new URL(options.baseUrl);
  const server = url.hostname;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const base = url.pathname.replace(/\/+$/, '');
  async function recorded<T>(method: RequestRecord['method'], template: string, token: string, send: () => Promise<T>): Promise<T> {
    const start = options.now();
    const tenant = recorder.tenantOfToken.get(token);
    const mine = tenant === undefined ? {} : { tenant };
    try {
      const answer = await send();
      recorder.records.push({ method, ...mine, template, server, port, status: null, start, end: options.now() });
      return answer;
    } catch (error) {
      const failure = error as { status?: unknown; kind?: unknown };
      recorder.records.push({
        method,
        ...mine,
        template,
        server,
        port,
        status: typeof failure.status === 'number' ? failure.status : null,
        errorType: typeof failure.kind === 'string' ? failure.kind : 'error',
        start,
        end: options.now(),
      });
      throw error;
    }
  }
  return {
    canRead: api.canRead,
    patch: (contractId, ops, token) => recorded('PATCH', `${base}/contract/{id}`, token, () => api.patch(contractId, ops, token)),
    read: (contractId, token) => recorded('GET', `${base}${options.readPath ?? '/contract/{id}'}`, token, () => api.read(contractId, token)),
  };
}

/**
 * `fetchImpl` (the token cache's: discovery and token requests to the identity provider) with each
 * request recorded: its method and path (no query, no body: the body carries the client secret),
 * the server, the answer's status, start and end (when the answer's head came).
 */
export function recordingFetch(fetchImpl: typeof fetch, recorder: RequestRecorder, now: () => number): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase() === 'POST' ? 'POST' : 'GET';
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const start = now();
    function record(status: number | null, errorType?: string): void {
      recorder.records.push({
        method,
        to: 'identity',
        template: url.pathname,
        server: url.hostname,
        port,
        status,
        ...(errorType === undefined ? {} : { errorType }),
        start,
        end: now(),
      });
    }
    try {
      const answer = await fetchImpl(input, init);
      if (answer.ok) record(null);
      else record(answer.status, String(answer.status));
      return answer;
    } catch (error) {
      record(null, 'network');
      throw error;
    }
  };
}
