/** `contract-sync validate`: every problem of the config and the desired state, at once. No network. */
import { parseArgs } from 'node:util';
import { loadDesiredState } from '../desired/load.ts';
import { isError } from '../diagnostic.ts';
import { readRepoConfig } from './config-args.ts';
import { DIAGNOSTIC_FORMATS, formatDiagnostics, type DiagnosticFormat } from './diagnostics-output.ts';
import { EXIT, parseFormat, type CliIo, type ExitCode } from './io.ts';

export const VALIDATE_HELP = `Usage: contract-sync validate [--config FILE] [--repo DIR] [--format text|json|github]

Checks the engine config and every desired-state file, and prints every problem at once.
Needs no credentials and sends no request.

Options:
  --config FILE   engine config (default: DIR/contract-sync.yaml)
  --repo DIR      repository holding the desired-state files (default: .)
  --format F      text (default), json, or github (workflow annotations)
`;

export async function validateCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      format: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(VALIDATE_HELP);
    return EXIT.ok;
  }
  const format = parseFormat<DiagnosticFormat>(values.format, DIAGNOSTIC_FORMATS, 'text');
  const { repoDir, configFile, config, diagnostics: configDiagnostics } = await readRepoConfig(io, values);
  if (!config) {
    io.stdout.write(formatDiagnostics(configDiagnostics, format));
    if (format === 'text') io.stdout.write(`\n${summary(configDiagnostics.filter(isError).length, 0)} in ${configFile}\n`);
    return EXIT.error;
  }

  const result = await loadDesiredState(repoDir, config);
  const diagnostics = [...configDiagnostics, ...result.errors, ...result.warnings];
  io.stdout.write(formatDiagnostics(diagnostics, format));
  if (format === 'text') {
    const contracts = result.contractSets.reduce((sum, set) => sum + set.contracts.length, 0);
    const files = new Set([...result.contractSets.map((set) => set.file), ...diagnostics.map((d) => d.file)]).size;
    const counts = summary(result.errors.length, result.warnings.length + configDiagnostics.length);
    io.stdout.write(`${diagnostics.length > 0 ? '\n' : ''}${counts}; ${contracts} valid contract(s) in ${files} file(s)\n`);
  }
  return result.errors.length > 0 ? EXIT.error : EXIT.ok;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function summary(errors: number, warnings: number): string {
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
