/** How a run's log is written (format, level, colour), decided from where the process runs: its stderr, its environment, the global options. Pure. */

export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogSettings {
  readonly format: LogFormat;
  readonly level: LogLevel;
  /** Colour in text lines: stderr is a terminal, and neither --no-color nor NO_COLOR. */
  readonly color: boolean;
  /** stderr is a terminal: text lines clear the line first (the progress bar is drawn there). */
  readonly terminal: boolean;
}

/** What the settings are decided from (a command's CliIo has it). */
export interface LogPlace {
  readonly stderr: { readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--log-format` (a global option). */
  readonly logFormat?: LogFormat;
  /** `--no-color` (a global option). */
  readonly noColor?: boolean;
}

/**
 * How the run logs. A person at a terminal reads text and wants only warnings and errors (the
 * human output on stdout says the rest); CI (no terminal) keeps JSON lines at info, for search.
 * `--log-format` over CONTRACT_SYNC_LOG_FORMAT over that default; CONTRACT_SYNC_LOG_LEVEL over the
 * level's default. The CLI refuses an unknown value in either variable before any command runs
 * (engine/cli/environment-args.ts, checkEnvironment); a library caller's unknown value is ignored.
 */
export function logSettings(io: LogPlace): LogSettings {
  const terminal = io.stderr.isTTY === true;
  const envFormat = io.env.CONTRACT_SYNC_LOG_FORMAT;
  const format = io.logFormat ?? (isOneOf(envFormat, LOG_FORMATS) ? envFormat : terminal ? 'text' : 'json');
  const envLevel = io.env.CONTRACT_SYNC_LOG_LEVEL;
  const level = isOneOf(envLevel, LOG_LEVELS) ? envLevel : terminal ? 'warn' : 'info';
  return { format, level, color: terminal && io.noColor !== true && !io.env.NO_COLOR, terminal };
}

function isOneOf<T extends string>(value: string | undefined, allowed: readonly T[]): value is T {
  return value !== undefined && (allowed as readonly string[]).includes(value);
}
