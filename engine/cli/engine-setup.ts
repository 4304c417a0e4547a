/**
 * The side of a run that talks to the world: logger with redaction, token cache, API client and
 * state store, built once per command from the config. Shared by every command that sends requests.
 */
import { randomUUID } from 'node:crypto';
import { apiClientSettings, createApiClient, type ApiClient } from '../api/client.ts';
import { createTenantTokens, type Scope, type TenantTokens } from '../auth/index.ts';
import type { Config } from '../config/types.ts';
import { createLogger, Redactor, type Logger } from '../log/logger.ts';
import { logSettings, type CliIo } from './io.ts';
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

/** Logs go to stderr, as text at a terminal and JSON lines otherwise (logSettings: --log-format, CONTRACT_SYNC_LOG_*). */
function createRunLogger(io: CliIo, redactor: Redactor, runId: string): Logger {
  const { format, level, color, terminal } = logSettings(io);
  return createLogger({ redactor, destination: io.stderr, level, format, color, clearLine: terminal, base: { runId } });
}

export function createEngineSetup(io: CliIo, config: Config, scopes: readonly Scope[]): EngineSetup {
  const runId = randomUUID();
  const redactor = new Redactor();
  const logger = createRunLogger(io, redactor, runId);
  function tokensFor(wanted: readonly Scope[]): TenantTokens {
    return createTenantTokens({ auth: config.auth, tenants: config.tenants, scopes: wanted, env: io.env, logger, redactor });
  }
  const tokens = tokensFor(scopes);
  const api = createApiClient({
    ...apiClientSettings(config.api),
    userAgent: USER_AGENT,
    correlationId: runId,
    redactor,
  });
  return { runId, redactor, logger, tokens, tokensFor, api };
}
