/** A run's effects, as a command gives them: its process's place, the clock, and (for runs that send) a log on stderr. */
import type { RunEffects } from '../run/types.ts';
import { logSettings } from '../log/settings.ts';
import { clockOf, type CliIo } from './io.ts';

export interface EffectOptions extends Pick<RunEffects, 'confirm' | 'onEvent'> {
  /** The run talks to the service: it logs (pino is loaded only then, to keep start-up fast). */
  readonly logs?: boolean;
}

/** Logs go to stderr, as text at a terminal and JSON lines otherwise (logSettings: --log-format, CONTRACT_SYNC_LOG_*). */
export async function runEffects(io: CliIo, options: EffectOptions = {}): Promise<RunEffects> {
  const { logs, ...more } = options;
  const base = { cwd: io.cwd, env: io.env, clock: clockOf(io), random: Math.random, ...(io.signal ? { signal: io.signal } : {}), ...more };
  if (!logs) return base;
  const { createLogger } = await import('../log/logger.ts');
  const { format, level, color, terminal } = logSettings(io);
  return {
    ...base,
    logger: ({ runId, redactor }) => createLogger({ redactor, destination: io.stderr, level, format, color, clearLine: terminal, base: { runId } }),
  };
}
