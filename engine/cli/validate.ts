/** `contract-sync validate`: every problem of the config and the desired state, at once. No network. */
import { parseArgs } from 'node:util';
import { compareDiagnostics, isError, type Diagnostic } from '../diagnostic.ts';
import { GitError } from '../git/errors.ts';
import { shortCommit } from '../plan/render-common.ts';
import { plural } from '../plural.ts';
import { validateByTenant } from '../desired/by-tenant.ts';
import { loadRunFiles } from './desired-input.ts';
import { DIAGNOSTIC_FORMATS, formatDiagnostics, type DiagnosticFormat } from './diagnostics-output.ts';
import { EXIT, parseFormat, type CliIo, type ExitCode } from './io.ts';
import { checkSecretsHygiene } from './secrets-hygiene.ts';

export const VALIDATE_HELP = `Usage: contract-sync validate [--config FILE] [--repo DIR] [--ref REF] [--format text|json|github]

Checks the engine config and every desired-state file, and prints every problem at once.
Needs no credentials and sends no request. Also warns about secrets hygiene: a secretRotatedAt
12 or more months old, a previousClientSecret kept more than 30 days after secretRotatedAt, and
a { file: ... } secret that git tracks. Warnings do not change the exit code.

Options:
  --config FILE   engine config (default: DIR/contract-sync.yaml; with --ref, that file at REF);
                  a file given here is always read from the working tree
  --repo DIR      repository holding the desired-state files (default: .)
  --ref REF       check the files at this git ref (branch, tag or commit) instead of the working
                  tree, without checking it out; positions are those of the files at REF
  --format F      text (default), json, or github (workflow annotations)

Exit codes: 0 valid (warnings allowed), 1 any error (an invalid config or desired-state file, or a
ref this clone does not have).
`;

export async function validateCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      ref: { type: 'string' },
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
  const loaded = await loadRunFiles(io, { repo: values.repo, config: values.config, ref: values.ref, withoutHead: true });
  if (loaded.kind === 'git-error') {
    io.stderr.write(`contract-sync validate: ${loaded.message}\n`);
    return EXIT.error;
  }
  if (loaded.kind === 'invalid-config') {
    io.stdout.write(formatDiagnostics(loaded.diagnostics, format));
    if (format === 'text') io.stdout.write(`\n${summary(loaded.diagnostics.filter(isError).length, 0)} in ${loaded.configFile}\n`);
    return EXIT.error;
  }

  const { configDiagnostics, source } = loaded.input;
  // One tenant at a time: nothing is kept of a tenant but its diagnostics and counts.
  const desired = await validateByTenant(loaded.input.files, loaded.input.config, { tenant() {}, restart() {} });
  let hygiene: Diagnostic[];
  try {
    hygiene = await checkSecretsHygiene(io, loaded.input, { config: values.config });
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    io.stderr.write(`contract-sync validate: ${error.message}\n`);
    return EXIT.error;
  }
  // Warnings only: hygiene never changes the exit code.
  const configWarnings = [...configDiagnostics, ...hygiene].sort(compareDiagnostics);
  const diagnostics = [...configWarnings, ...desired.errors, ...desired.warnings];
  io.stdout.write(formatDiagnostics(diagnostics, format));
  if (format === 'text') {
    const { contracts, files } = desired;
    const counts = summary(desired.errors.length, desired.warnings.length + configWarnings.length);
    const at = source.ref !== null && source.commit !== null ? ` at ${source.ref} (${shortCommit(source.commit)})` : '';
    io.stdout.write(`${diagnostics.length > 0 ? '\n' : ''}${counts}; ${plural(contracts, 'valid contract')} in ${plural(files, 'file')}${at}\n`);
  }
  return desired.errors.length > 0 ? EXIT.error : EXIT.ok;
}

function summary(errors: number, warnings: number): string {
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
