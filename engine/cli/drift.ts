/** `contract-sync drift`: read every managed contract live, report what differs from git and why, and with --fix correct it. */
import { checkOutputFile, writeOutputFile } from '../output-file.ts';
import { parseArgs } from 'node:util';
import { renderRunSummary } from '../apply/run-report.ts';
import { runApply, type SendPreview } from '../apply/run-apply.ts';
import type { Scope } from '../auth/index.ts';
import { createDriftReport, driftFailed, driftRemains } from '../drift/create-report.ts';
import { renderDriftJson } from '../drift/render-json.ts';
import { renderDriftMarkdown } from '../drift/render-markdown.ts';
import { renderDriftText } from '../drift/render-text.ts';
import { renderPlanText } from '../plan/render-text.ts';
import { StateFormatError } from '../state/file-format.ts';
import { PostgresStateError } from '../state/postgres/errors.ts';
import type { KnownContracts } from '../state/types.ts';
import { parseTargetFlags, targetHelp, TARGET_OPTIONS } from './config-args.ts';
import { askYes, fixQuestion, shouldAsk } from './confirm.ts';
import { loadRunInputOrReport } from './desired-input.ts';
import { parseLockTimeout } from './lock-timeout.ts';
import { createEngineSetup } from './engine-setup.ts';
import { clockOf, EXIT, parseFormat, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { createProgress } from './progress.ts';
import { CONFIRM_OPTIONS, confirmHelp, parseMaxRemovals, removalLimits } from './removal-args.ts';
import { parseShardArg, reportShard, SHARD_OPTION, shardHelp } from './shard-args.ts';
import { recordRunHistory } from '../state/record-history.ts';
import { openStateStore } from './state-store.ts';

export const DRIFT_HELP = `Usage: contract-sync drift [--config FILE] [--repo DIR] [--ref REF] [--tenant T]... [--shard I/N] [--fix]
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

With --fix on a terminal (stdin and stdout both TTYs), the plan of the corrections is printed
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
refused by the removal guard, the question not answered yes);
2 with --detailed-exitcode: drift found and not fixed.
`;

const FORMATS = ['text', 'markdown', 'json'] as const;

export async function driftCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      ref: { type: 'string' },
      tenant: { type: 'string', multiple: true },
      ...SHARD_OPTION,
      ...TARGET_OPTIONS,
      fix: { type: 'boolean', default: false },
      ...CONFIRM_OPTIONS,
      format: { type: 'string' },
      'detailed-exitcode': { type: 'boolean', default: false },
      'lock-timeout': { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(DRIFT_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const format = parseFormat(values.format, FORMATS, 'text');
  const lockTimeoutMs = parseLockTimeout(values['lock-timeout']);
  const fix = values.fix;
  const maxRemovals = parseMaxRemovals(values['max-removals']);
  if (!fix) {
    const only = (['auto-approve', 'allow-removals'] as const).filter((flag) => values[flag]).map((flag) => `--${flag}`);
    if (maxRemovals !== undefined) only.push('--max-removals');
    if (only.length > 0) throw new UsageError(`${only.join(', ')} only ${only.length === 1 ? 'applies' : 'apply'} with --fix: without it drift sends nothing`);
  }
  const shard = parseShardArg(values.shard);
  if (values.report !== undefined) await checkOutputFile({ flag: '--report', name: values.report, cwd: io.cwd });

  const outcome = fix ? 'nothing read or fixed' : 'nothing read';
  const selection = parseTargetFlags(values);
  const input = await loadRunInputOrReport(
    io,
    'drift',
    { repo: values.repo, config: values.config, ref: values.ref, tenants: values.tenant, ...(shard ? { shard } : {}), ...selection, checkUncommitted: fix },
    outcome,
  );
  if (typeof input === 'number') return input;
  // An empty shard still reports (no drift), so that a job reading --report finds one.
  reportShard(io, input.shard, format === 'text' ? 'stdout' : 'stderr');
  const { repoDir, config, contractSets, source } = input;
  if (config.api.read === undefined) {
    io.stderr.write(
      'contract-sync drift: drift detection reads each managed contract live and compares it with git, so it needs reads; ' +
        'configure api.read in the engine config (e.g. read: { path: "/contract/{id}" }). Nothing was sent.\n',
    );
    return EXIT.error;
  }

  const scopes: Scope[] = fix ? ['core:read', 'core:write'] : ['core:read'];
  // Builds objects only: nothing is sent before the store is open.
  const engine = createEngineSetup(io, config, scopes);
  const store = await openStateStore(config, repoDir, io, engine.redactor);
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync drift: ${store}\n`);
    return EXIT.error;
  }
  // Read before the run: with --fix the run rewrites these records, and the cause of a drift is
  // judged against what was applied before it. (A concurrent apply between this read and the
  // fix's lock can only make a cause stale, never what is sent: the fix re-reads under the lock.)
  const tenantNames = [...new Set(contractSets.map((set) => set.tenant))];
  const lastApplied = new Map<string, KnownContracts>();
  for (const tenant of tenantNames) {
    const managed = new Set(contractSets.filter((set) => set.tenant === tenant).flatMap((set) => set.contracts.map((contract) => contract.id)));
    try {
      lastApplied.set(tenant, await store.readTenant(tenant, managed));
    } catch (error) {
      await store.close();
      if (!(error instanceof StateFormatError) && !(error instanceof PostgresStateError)) throw error;
      io.stderr.write(`contract-sync drift: cannot read the state store: ${error.message}; nothing read\n`);
      return EXIT.error;
    }
  }

  const clock = clockOf(io);
  const progress = createProgress({ stream: io.stderr, logger: engine.logger, now: clock.now });

  /** With --fix on a terminal: the plan of the corrections, then the question, before the first PATCH. */
  async function confirm(preview: SendPreview): Promise<boolean> {
    if (!fix || !shouldAsk(io, { autoApprove: values['auto-approve'], ops: preview.sending.ops })) return true;
    const notOnService = preview.unreadable.filter(({ result }) => result.outcome === 'not-on-service').length;
    io.stdout.write(renderPlanText(preview.plan, { color: wantsColor(io), notPlanned: { count: preview.unreadable.length, notOnService } }));
    for (const { reason } of preview.refused) io.stdout.write(`\n${reason}\n`);
    io.stdout.write('\n');
    return askYes(io, fixQuestion(preview.sending));
  }

  // One run: without --fix a dry run (reads only, no lock, nothing written); with it the same
  // plan is sent, so the drift reported is exactly what was corrected.
  const { plan, report: run, cancelled } = await runApply(
    {
      config,
      contractSets,
      source,
      refresh: true,
      dryRun: !fix,
      lockTimeoutMs,
      runId: engine.runId,
      uncommitted: input.committed === false,
      ...(input.targeting ? { narrowed: input.targeting.narrowed } : {}),
      ...(fix ? { removals: removalLimits(maxRemovals, values['allow-removals'], config.safety) } : {}),
    },
    { store, tokens: engine.tokens, api: engine.api, clock, random: Math.random, logger: engine.logger, onProgress: (event) => progress.update(event), confirm },
  )
    .then(async (run) => {
      if (fix && !run.cancelled) await recordRunHistory(store, run.report, { command: 'drift --fix', env: io.env, logger: engine.logger, warn: (line) => io.stderr.write(`contract-sync drift: ${line}`) });
      return run;
    })
    .finally(() => store.close());
  progress.finish();
  if (cancelled) {
    io.stdout.write('\nFix cancelled.\n');
    return EXIT.error;
  }

  const drift = createDriftReport({ plan, run, lastApplied, fix });
  // Said first, like Terraform's targeting warning; json stays one document on stdout.
  const targeted = input.targeting?.description;
  if (targeted !== undefined) {
    if (format === 'json') io.stderr.write(`contract-sync drift: ${targeted}\n`);
    else io.stdout.write(format === 'markdown' ? `> **${targeted}** Contracts not targeted were not checked.\n\n` : `${targeted} Contracts not targeted were not checked.\n\n`);
  }
  if (format === 'json') io.stdout.write(renderDriftJson(drift));
  else if (format === 'markdown') io.stdout.write(renderDriftMarkdown(drift));
  else io.stdout.write(renderDriftText(drift, { color: wantsColor(io) }));
  // The run summary says what the fix sent; markdown and json carry the same per contract, and json stays one document.
  if (fix && format === 'text') io.stdout.write(`\n${renderRunSummary(run)}`);
  if (values.report !== undefined) await writeOutputFile({ flag: '--report', name: values.report, cwd: io.cwd }, renderDriftJson(drift));

  if (driftFailed(drift)) return EXIT.error;
  if (values['detailed-exitcode'] && driftRemains(drift)) return EXIT.changes;
  return EXIT.ok;
}
