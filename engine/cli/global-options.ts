/**
 * Options every command accepts (`--chdir DIR`, `--no-color`, `--log-format json|text`), taken out of a command's
 * arguments before the command parses its own. Pure.
 */
import { LOG_FORMATS, type LogFormat } from '../log/settings.ts';
import { UsageError } from './io.ts';

export interface GlobalOptions {
  /** `--chdir DIR`: run as if started in DIR (main resolves and checks it). */
  readonly chdir?: string;
  readonly noColor?: boolean;
  readonly logFormat?: LogFormat;
}

/** The global options and the arguments left for the command; arguments after `--` are left alone. */
export function takeGlobalOptions(args: readonly string[]): { options: GlobalOptions; rest: string[] } {
  const rest: string[] = [];
  let noColor: boolean | undefined;
  let logFormat: LogFormat | undefined;
  let chdir: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--') {
      rest.push(...args.slice(index));
      break;
    }
    if (arg === '--no-color') {
      noColor = true;
      continue;
    }
    if (arg === '--chdir' || arg.startsWith('--chdir=')) {
      const value = arg === '--chdir' ? args[(index += 1)] : arg.slice('--chdir='.length);
      if (value === undefined || value === '') throw new UsageError('--chdir needs a directory');
      chdir = value;
      continue;
    }
    if (arg === '--log-format' || arg.startsWith('--log-format=')) {
      const value = arg === '--log-format' ? args[(index += 1)] : arg.slice('--log-format='.length);
      if (value === undefined) throw new UsageError('--log-format needs a value: json or text');
      if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}; got "${value}"`);
      logFormat = value as LogFormat;
      continue;
    }
    rest.push(arg);
  }
  return { options: { ...(chdir === undefined ? {} : { chdir }), ...(noColor ? { noColor } : {}), ...(logFormat ? { logFormat } : {}) }, rest };
}
