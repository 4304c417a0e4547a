/** `contract-sync drift`: read every managed contract live, report what differs from git and why, and with --fix correct it. */
import { checkOutputFile } from '../output/output-file.ts';
import { runView } from '../output/run-view.ts';
import { runDrift } from '../run/drift.ts';
import { renderDriftOutcome } from '../run/render-outcome.ts';
import { fixQuestion, renderFixPreview, shownPlan } from '../run/render-run.ts';
import { sendingEffects } from './confirm.ts';
import { clockOf, EXIT, parseCommand, parseFormat, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { CONFIRM_OPTIONS, confirmHelp, sendingRequest } from './removal-args.ts';
import { sayOutcome } from './run-problems.ts';
import { checkSharedRun, RUN_OPTIONS, shardHelp, targetHelp } from './run-args.ts';

export const DRIFT_HELP = `Usage: contract-sync drift [--config FILE] [--repo DIR] [--ref REF] [--tenant T]... [--shard I/N|auto] [--fix]
                           [--target TENANT/ID]... [--exclude TENANT/ID]...
                           [--format text|markdown|json] [--detailed-exitcode] [--lock-timeout SECONDS] [--report FILE]
                           [--fix [--auto-approve] [--max-removals N] [--allow-removals]]

Reads every managed contract (every contract of the desired state) live, compares it with the
desired state, and reports each drifted field or collection member with its cause, judged against
the state store's record of the last apply:
  changed outside git   the live value differs from the last applied one (someone edited the service)
  not yet applied       the live value is the last applied one; the desired state changed since
  never applied         the state store has no record of the contract
With --fix, the corrections go through the same rate-controlled queue as apply: each tenant is
locked and read again, so what is fixed is what is live at that moment.

With --fix when stdin is a terminal (whatever stdout is), the plan of the corrections is printed
after the reads and drift asks "Correct N ops on M contracts in T tenants? Only 'yes' is
accepted:". Only yes sends; any other answer, or the end of input, prints "Fix cancelled.",
sends and writes nothing, and exits 1. --auto-approve skips the question; without a terminal
(a schedule in CI) nothing is asked. The removal guard of apply holds for the corrections too: a
tenant whose corrections remove more collection members than --max-removals (safety.maxRemovals,
default 25), or every member of a collection that had 3 or more, is not corrected (exit 1).

Options:
  --config FILE          engine config (default: DIR/contract-sync.yaml); needs api.read
  --repo DIR             repository holding the desired-state files (default: .)
  --ref REF              read the desired state (and, without --config, the config) at this git ref
  --tenant T             check only tenant T (repeatable; default: every tenant)
${shardHelp(25)}
${targetHelp(25)}  --fix                  send the corrections and record them in the state store
${confirmHelp(25, 'drift --fix')}
  --format F             text (default), markdown (for an issue or a job summary) or json
  --detailed-exitcode    exit 2 when drift is found and not fixed (without --fix; with --fix,
                         drift left over means a correction failed, which exits 1)
  --lock-timeout S       with --fix: wait up to S seconds for another run's lock on a tenant (default: 60)
  --report FILE          also write the JSON drift report to FILE

Credentials: each tenant's client secret, from the env variable or file the config names.
Scopes asked for: core:read, plus core:write with --fix.
Logs: on stderr: text lines at a terminal (warnings and errors only), else JSON lines at info;
see the global options --log-format and CONTRACT_SYNC_LOG_LEVEL below.

Exit codes: 0 no drift, or all of it fixed (without --detailed-exitcode: also drift found);
1 any error (config, credentials, a contract that could not be read, a fix that failed, a tenant
refused by the removal guard, a policy rule's deny, the question not answered yes);
2 with --detailed-exitcode: drift found and not fixed;
130 / 143 stopped by SIGINT / SIGTERM (no new request starts, requests in flight finish within 10 s
and are recorded, locks are released; no report is written).
`;

const FORMATS = ['text', 'markdown', 'json'] as const;

export async function driftCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, helped } = parseCommand(io, DRIFT_HELP, args, true, {
    ...RUN_OPTIONS,
    fix: { type: 'boolean', default: false },
    ...CONFIRM_OPTIONS,
    format: { type: 'string' },
    'detailed-exitcode': { type: 'boolean', default: false },
    'lock-timeout': { type: 'string' },
    report: { type: 'string' },
  });
  if (helped) return EXIT.ok;
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const format = parseFormat(values.format, FORMATS, 'text');
  const sending = sendingRequest(values);
  const { fix } = values;
  checkSharedRun(io, sending.selection ?? {}, { sends: fix, notSending: 'drift without --fix', autoApprove: values['auto-approve'] });
  if (values.report !== undefined) await checkOutputFile({ flag: '--report', name: values.report, cwd: io.cwd });
  if (!fix) {
    const only = (['auto-approve', 'allow-removals'] as const).filter((flag) => values[flag]).map((flag) => `--${flag}`);
    if (values['max-removals'] !== undefined) only.push('--max-removals');
    if (only.length > 0) throw new UsageError(`${only.join(', ')} only ${only.length === 1 ? 'applies' : 'apply'} with --fix: without it drift sends nothing`);
  }

  const view = runView(io, { shardOn: format === 'text' ? 'stdout' : 'stderr', command: 'drift', now: clockOf(io).now });
  const result = await runDrift(
    { kind: 'drift', ...sending, mode: fix ? 'fix' : 'report' },
    // With --fix on a terminal: the plan of the corrections, then the question, before the first PATCH.
    await sendingEffects(io, view, values['auto-approve'], {
      before(preview) {
        const text = renderFixPreview(preview, wantsColor(io));
        io.stdout.write(text);
        return shownPlan(text, preview.shown);
      },
      text: fixQuestion,
    }),
  );
  view.finish();
  if (result.kind === 'bad-request') throw new UsageError(result.message);
  const flags = { format, fix, detailedExitcode: values['detailed-exitcode'], report: values.report !== undefined };
  return sayOutcome(io, renderDriftOutcome(result, { ...flags, color: wantsColor(io), aborted: io.signal?.aborted === true }), values.report);
}
