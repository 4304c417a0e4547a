/**
 * Structured logs (pino, JSON lines on stderr, or text lines for a terminal) that never carry a secret.
 *
 * Two layers, because a secret can hide anywhere:
 * - by path: pino's `redact` censors the well-known keys wherever they sit in the log object;
 * - by value: every line is scanned for the values registered with the Redactor (client secrets
 *   when they are resolved, access tokens when they are received) just before it is written.
 */
import { pino, type DestinationStream } from 'pino';
import type { LogFormat, LogLevel } from './settings.ts';
import { textDestination } from './text-format.ts';

/** The logging surface the engine uses; a pino logger satisfies it. */
export interface Logger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const REDACTED = '[REDACTED]';

// Keys whose values are secrets wherever they appear (pino redact paths, one level of nesting).
const SECRET_KEYS = ['authorization', 'Authorization', 'client_secret', 'clientSecret', 'access_token', 'accessToken', 'token', 'password'];
const REDACT_PATHS = [...SECRET_KEYS, ...SECRET_KEYS.map((key) => `*.${key}`), ...SECRET_KEYS.map((key) => `*.*.${key}`)];

// Shorter values would censor ordinary words; no real secret or token is this short.
const MIN_SECRET_LENGTH = 6;

/** The secret values known to this run; `redact` replaces each of them in a text. */
export class Redactor {
  readonly #values = new Set<string>();
  #pattern: RegExp | undefined;

  add(value: string | undefined): void {
    if (value === undefined || value.length < MIN_SECRET_LENGTH || this.#values.has(value)) return;
    this.#values.add(value);
    // JSON-escaped forms too: a secret with a quote or backslash appears escaped in a log line.
    const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
    for (const form of forms) this.#values.add(form);
    // Longest first, so that a value containing another is censored whole.
    const alternatives = [...this.#values].sort((a, b) => b.length - a.length).map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.#pattern = new RegExp(alternatives.join('|'), 'g');
  }

  redact(text: string): string {
    return this.#pattern === undefined ? text : text.replace(this.#pattern, REDACTED);
  }
}

export interface LoggerOptions {
  readonly redactor: Redactor;
  /** Where the lines go (stderr in the CLI). */
  readonly destination: DestinationStream | { write(text: string): unknown };
  /** JSON lines (default), or text lines for people (`warn  message  key=value ...`), redacted alike. */
  readonly format?: LogFormat;
  /** Text lines only: colour the level. */
  readonly color?: boolean;
  /** Text lines only: clear the terminal line before each (a progress bar may be drawn on it). */
  readonly clearLine?: boolean;
  readonly level?: LogLevel;
  /** Bound to every line, e.g. the run's correlation id. */
  readonly base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions): Logger {
  const { redactor } = options;
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? null,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      hooks: { streamWrite: (line: string) => redactor.redact(line) },
    },
    // Text is made from the JSON line after streamWrite has redacted it: one redaction for both formats.
    (options.format === 'text'
      ? textDestination(options.destination, { color: options.color === true, clearLine: options.clearLine === true })
      : options.destination) as DestinationStream,
  );
}

/** A logger that drops everything: the default where a caller passes none. */
export function silentLogger(): Logger {
  function drop(): void {}
  return { debug: drop, info: drop, warn: drop, error: drop };
}
