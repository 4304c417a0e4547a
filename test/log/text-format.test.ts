/** Text log lines for a terminal: the format, the level filter, and redaction as strict as in JSON lines. */
import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED, Redactor } from '../../engine/log/logger.ts';
import { formatLogLine } from '../../engine/log/text-format.ts';

function textLogger(level: 'debug' | 'info' | 'warn' | 'error', redactor = new Redactor()): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ redactor, destination: { write: (text: string) => lines.push(text) }, level, format: 'text', base: { runId: 'run-1' } });
  return { logger, lines };
}

describe('text log lines', () => {
  it('shows the level, the message and the details, without time or run id', () => {
    const { logger, lines } = textLogger('info');

    logger.warn({ tenant: 'acme', contractId: '4711', status: 409 }, 'contract not applied');
    logger.info({ reason: 'two words', nested: { a: 1 } }, 'applied');

    // The level is padded to five characters, so that messages line up.
    expect(lines).toEqual(['warn   contract not applied  tenant=acme contractId=4711 status=409\n', 'info   applied  reason="two words" nested={"a":1}\n']);
  });

  it.each([
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
  ] as const)('at level %s writes only %j', (level, shown) => {
    const { logger, lines } = textLogger(level);

    logger.debug({}, 'd');
    logger.info({}, 'i');
    logger.warn({}, 'w');
    logger.error({}, 'e');

    expect(lines.map((line) => line.split(' ')[0])).toEqual(shown);
  });

  it('redacts a registered secret in the message and in a field, and a secret key by path', () => {
    const redactor = new Redactor();
    redactor.add('s3cr3t-value-123');
    const { logger, lines } = textLogger('info', redactor);

    logger.warn({ tenant: 'acme', detail: 'sent s3cr3t-value-123 twice', clientSecret: 'another-secret-xyz' }, 'refused s3cr3t-value-123');

    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('s3cr3t');
    expect(lines[0]).not.toContain('another-secret-xyz');
    expect(lines[0]).toBe(`warn   refused ${REDACTED}  tenant=acme detail="sent ${REDACTED} twice" clientSecret=${REDACTED}\n`);
  });

  it('colours the level only when asked', () => {
    const line = JSON.stringify({ level: 50, time: 1, msg: 'tenant not applied', tenant: 'acme' });

    expect(formatLogLine(line, { color: true })).toBe('\u001b[31merror\u001b[0m  tenant not applied  tenant=acme\n');
    expect(formatLogLine(line)).toBe('error  tenant not applied  tenant=acme\n');
  });

  it('clears the terminal line first when asked (a progress bar may be on it)', () => {
    const lines: string[] = [];
    const logger = createLogger({ redactor: new Redactor(), destination: { write: (text: string) => lines.push(text) }, format: 'text', clearLine: true });

    logger.warn({ tenant: 'acme' }, 'lock not released');

    expect(lines).toEqual(['\r\u001b[Kwarn   lock not released  tenant=acme\n']);
  });

  it('shows an error by its message, and passes a line that is not a JSON object on unchanged', () => {
    const line = JSON.stringify({ level: 40, msg: 'lock not released', err: { type: 'Error', message: 'gone', stack: 'Error: gone\n    at x' } });

    expect(formatLogLine(line)).toBe('warn   lock not released  err="gone"\n');
    expect(formatLogLine('not json')).toBe('not json');
    expect(formatLogLine('[1,2]')).toBe('[1,2]');
  });
});
