/**
 * The side of a run that talks to the world: its id, the redactor, the log, the token cache and
 * the API client, built once per run from the config and the run's effects.
 */
import { randomUUID } from 'node:crypto';
import { apiClientSettings, createApiClient, type ApiClient } from '../api/client.ts';
import { createTenantTokens, type Scope, type TenantTokens } from '../auth/index.ts';
import type { Config } from '../config/types.ts';
import { systemClock, type Clock } from '../io/clock.ts';
import { Redactor, silentLogger, type Logger } from '../log/logger.ts';
import { recordingApiClient, recordingFetch, recordingTokens } from '../telemetry/requests.ts';
import type { RunEffects } from './types.ts';
import { packageVersion } from './version.ts';

const USER_AGENT = `contract-sync/${packageVersion()}`;

export interface EngineSetup {
  /** A fresh id per run: X-Correlation-Id of every request, and the run report's runId. */
  readonly runId: string;
  readonly redactor: Redactor;
  readonly logger: Logger;
  readonly tokens: TenantTokens;
  /** Another token cache, for tokens of other scopes than `tokens` (sharing the logger and redactor). */
  tokensFor(scopes: readonly Scope[]): TenantTokens;
  readonly api: ApiClient;
}

/** `runId`: a shared run's (`--shard auto`), the same in every worker; else a fresh one. */
export function createEngineSetup(
  effects: Pick<RunEffects, 'env' | 'logger' | 'requests'> & { readonly clock?: Clock },
  config: Config,
  scopes: readonly Scope[],
  runId: string = randomUUID(),
): EngineSetup {
  const redactor = new Redactor();
  const logger = effects.logger?.({ runId, redactor }) ?? silentLogger();
  const clock = effects.clock ?? systemClock;
  function tokensFor(wanted: readonly Scope[]): TenantTokens {
    const recorded = effects.requests === undefined ? {} : { fetch: recordingFetch(globalThis.fetch, effects.requests, () => clock.now()) };
    const tokens = createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: wanted, env: effects.env, logger, redactor, ...recorded });
    // A run that exports telemetry knows each request's tenant by the token it carries.
    return effects.requests === undefined ? tokens : recordingTokens(tokens, effects.requests);
  }
  const tokens = tokensFor(scopes);
  const client = createApiClient({
    ...apiClientSettings(config.api),
    userAgent: USER_AGENT,
    correlationId: runId,
    redactor,
  });
  // Recorded only when the run exports telemetry: otherwise the client is used as it is.
  const api =
    effects.requests === undefined
      ? client
      : recordingApiClient(client, effects.requests, {
          baseUrl: config.api.baseUrl,
          ...(config.api.read === undefined ? {} : { readPath: config.api.read.path }),
          now: () => clock.now(),
        });
  return { runId, redactor, logger, tokens, tokensFor, api };
}
