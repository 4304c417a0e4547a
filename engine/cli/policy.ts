/** `contract-sync policy test [DIR]`: the config's rules over YAML cases, without a service. */
import { formatDiagnostics } from '../diagnostic/diagnostic-format.ts';
import { checkOutputFile, writeOutputFile } from '../output/output-file.ts';
import { runPolicyTest } from '../run/policy-test.ts';
import { renderPolicyTestJunit, renderPolicyTestText } from '../run/render-policy-test.ts';
import { renderValidateSummary } from '../run/render-validate.ts';
import { EXIT, failWith, parseCommand, UsageError, type CliIo, type ExitCode } from './io.ts';
import { WHERE_OPTIONS, whereOf } from './run-args.ts';
import { runEffects } from './run-effects.ts';

export const POLICY_HELP = `Usage: contract-sync policy test [DIR] [--config FILE] [--repo DIR] [--junit FILE]

Runs the policy rules of the engine config (policies: in contract-sync.yaml) over test cases,
without a service and without credentials. DIR (default: policy-tests) holds YAML files, each
with a list of cases:

  cases:
    - name: a DORA contract without a Responsible owner is denied
      tenant: acme              # optional (default test), as are id and today (YYYY-MM-DD,
      id: "4711"                #   the date exceptions are judged on; default: today, UTC)
      contract: { Type: [{ Lookup: ICT, EbaCode: S05, IsDora: true }] }
      known: { ... }            # optional: the known contract; on: change rules see it as
      knownFrom: live           #   oldObject, and ops are what a plan would send (state or live)
      expect:                   # every finding the case must give, and no other
        - { policy: dora-needs-responsible-owner, action: deny }
          # also: message (exact), exception (excepted | expired | none)

A case passes when its findings are exactly those it expects; a failure shows what was
expected and not found, and what was found and not expected.

Options:
  --config FILE   engine config (default: DIR/contract-sync.yaml of --repo)
  --repo DIR      the repository whose config is read (default: .)
  --junit FILE    also write the results as JUnit XML (for CI test reports)

Exit codes: 0 every case passed, 1 a case failed, a case file or the config is invalid, or
there is nothing to test.
`;

export async function policyCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, helped } = parseCommand(io, POLICY_HELP, args, true, {
    ...WHERE_OPTIONS,
    junit: { type: 'string' },
  });
  if (helped) return EXIT.ok;
  const [subcommand, dir = 'policy-tests', ...extra] = positionals;
  if (subcommand !== 'test')
    throw new UsageError(subcommand === undefined ? 'policy needs a subcommand: test' : `unknown subcommand "${subcommand}" (policy has: test)`);
  if (extra.length > 0) throw new UsageError(`policy test takes one directory; got also ${extra.join(' ')}`);
  const junit = values.junit === undefined ? undefined : { flag: '--junit', name: values.junit, cwd: io.cwd };
  if (junit !== undefined) await checkOutputFile(junit);

  const where = whereOf(values);
  const result = await runPolicyTest({ kind: 'policy-test', where, dir }, await runEffects(io));

  if (result.kind === 'bad-request') return failWith(io, 'policy test', result.message);
  if (result.kind === 'invalid-config') {
    io.stdout.write(formatDiagnostics(result.diagnostics, 'text'));
    io.stdout.write(renderValidateSummary(result));
    return EXIT.error;
  }
  const { results, diagnostics } = result;
  io.stdout.write(formatDiagnostics(diagnostics, 'text'));
  io.stdout.write(renderPolicyTestText(results, diagnostics));
  if (junit !== undefined) await writeOutputFile(junit, renderPolicyTestJunit(results, diagnostics));
  const failed = results.some((case_) => !case_.passed) || diagnostics.some((d) => d.severity === 'error');
  return failed ? EXIT.error : EXIT.ok;
}
