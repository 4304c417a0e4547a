/**
 * Log lines for people at a terminal: `warn   contract not applied  tenant=acme contractId=4711 status=409`.
 * A pino destination that rewrites each JSON line as it is written. It receives lines after the
 * logger's redaction (by path and by value), so a text line carries no more than the JSON line did.
 */

export interface TextDestinationOptions {
  /** Colour the level (a terminal that wants colour). */
  readonly color?: boolean;
  /** Clear the terminal line first (ESC [ K): a progress bar redrawn in place on it would run into the log line. */
  readonly clearLine?: boolean;
}

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const LEVEL_COLORS: Readonly<Record<string, string>> = { debug: '2', info: '36', warn: '33', error: '31', fatal: '31' };
// pino's own keys: the level and message are shown in front, the time and run id are noise at a terminal.
const HIDDEN = new Set(['level', 'time', 'msg', 'runId', 'pid', 'hostname']);

/** A value as `key=value` shows it: bare when it is one plain word, JSON otherwise (so spaces and quotes stay unambiguous). */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[\w.:/@[\]+-]+$/.test(value) ? value : JSON.stringify(value);
  // pino serialises an Error as { type, message, stack }: the message says it, the stack is for JSON logs.
  if (value !== null && typeof value === 'object' && 'message' in value && typeof value.message === 'string') return JSON.stringify(value.message);
  return JSON.stringify(value) ?? String(value);
}

/** One JSON log line as a text line; a line that is not a JSON object is passed on as it is. */
export function formatLogLine(line: string, options: TextDestinationOptions = {}): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return line;
  const record = entry as Record<string, unknown>;
  const level = typeof record.level === 'number' ? (LEVEL_NAMES[record.level] ?? String(record.level)) : String(record.level ?? 'log');
  const padded = level.padEnd(5);
  const shownLevel = options.color ? `\u001b[${LEVEL_COLORS[level] ?? '0'}m${padded}\u001b[0m` : padded;
  const details = Object.entries(record)
    .filter(([key, value]) => !HIDDEN.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${formatValue(value)}`)
    .join(' ');
  const message = typeof record.msg === 'string' ? record.msg : '';
  return `${[shownLevel, message, details].filter((part) => part !== '').join('  ')}\n`;
}

/** A destination for pino that writes each line to `stream` as text. */
export function textDestination(stream: { write(text: string): unknown }, options: TextDestinationOptions = {}): { write(line: string): unknown } {
  return {
    write(line: string) {
      // pino writes one line per call, newline-terminated.
      const text = formatLogLine(line.endsWith('\n') ? line.slice(0, -1) : line, options);
      return stream.write(options.clearLine ? `\r\u001b[K${text}` : text);
    },
  };
}
