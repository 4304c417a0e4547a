/** A logger for assertions on what the code under test logs. */
import { createLogger, Redactor, type Logger } from '../../engine/log/logger.ts';

/** A logger writing JSON lines into `lines`. Its redactor is its own, so that it hides nothing the code under test forgot. */
export function captureLog(): { logger: Logger; lines: string[]; entries: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const logger = createLogger({ redactor: new Redactor(), destination: { write: (line: string) => lines.push(line) }, level: 'debug' });
  return { logger, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}
