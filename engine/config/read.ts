/** Adapter: the config file from disk. */
import { readBounded, readProblem } from '../io/bounded-read.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { DEFAULT_YAML_LIMITS } from '../yaml/yaml-source.ts';
import { parseConfig, type ConfigResult } from './parse.ts';

export async function readConfig(file: string): Promise<ConfigResult> {
  let content: Uint8Array;
  try {
    // Bounded, and a regular file: `--config` naming a FIFO or a device is refused, never waited on or read forever.
    content = await readBounded(file, DEFAULT_YAML_LIMITS.maxBytes);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem = readProblem(error);
    const message =
      code === 'ENOENT'
        ? 'config file not found (pass --config FILE)'
        : problem !== undefined
          ? `cannot read the config file: it is ${problem}`
          : `cannot read the config file (${code ?? 'error'})`;
    const diagnostic: Diagnostic = { severity: 'error', code: 'config-missing', file, line: 1, column: 1, field: '', message };
    return { diagnostics: [diagnostic] };
  }
  return parseConfig(file, content);
}
