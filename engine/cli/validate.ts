/** `contract-sync validate`: every problem of the config and the desired state, at once. No network. */
import { renderValidateSummary } from '../run/render-validate.ts';
import { runValidate } from '../run/validate.ts';
import { DIAGNOSTIC_FORMATS, formatDiagnostics, type DiagnosticFormat } from '../diagnostic/diagnostic-format.ts';
import { findingFails } from '../policy/finding-diagnostic.ts';
import { EXIT, failWith, parseCommand, parseFormat, type CliIo, type ExitCode } from './io.ts';
import { runEffects } from './run-effects.ts';
import { WHERE_OPTIONS, whereOf } from './run-args.ts';

export const VALIDATE_HELP = `Usage: contract-sync validate [--config FILE] [--repo DIR] [--ref REF] [--format text|json|github]

Checks the engine config and every desired-state file, and prints every problem at once, then
the findings of the config's on: contract policy rules on every valid contract.
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

Exit codes: 0 valid (warnings allowed), 1 any error (an invalid config or desired-state file, a
policy finding that denies or needs an override and that no unexpired exception covers, or a ref
this clone does not have).
`;

export async function validateCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, helped } = parseCommand(io, VALIDATE_HELP, args, false, {
    ...WHERE_OPTIONS,
    ref: { type: 'string' },
    format: { type: 'string' },
  });
  if (helped) return EXIT.ok;
  const format = parseFormat<DiagnosticFormat>(values.format, DIAGNOSTIC_FORMATS, 'text');
  const result = await runValidate({ kind: 'validate', where: whereOf(values) }, await runEffects(io));
  if (result.kind === 'git-error' || result.kind === 'bad-request') return failWith(io, 'validate', result.message);
  if (result.kind === 'invalid-config') {
    io.stdout.write(formatDiagnostics(result.diagnostics, format));
    if (format === 'text') io.stdout.write(renderValidateSummary(result));
    return EXIT.error;
  }
  const { configWarnings, errors, warnings, policyDiagnostics, findings } = result;
  io.stdout.write(formatDiagnostics([...configWarnings, ...errors, ...warnings, ...policyDiagnostics], format));
  if (format === 'text') io.stdout.write(renderValidateSummary(result));
  return errors.length > 0 || findings.some(findingFails) ? EXIT.error : EXIT.ok;
}
