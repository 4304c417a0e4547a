/** `contract-sync apply [PLAN.json]`: plan (or check a saved plan), then send the ops, record each applied contract, report. */
import { checkOutputFile } from '../output/output-file.ts';
import { runView } from '../output/run-view.ts';
import { runApplyRequest } from '../run/apply.ts';
import { renderApplyOutcome } from '../run/render-outcome.ts';
import { applyQuestion, renderApplyPreview, shownPlan, type ShownPlan } from '../run/render-run.ts';
import type { ApplyPreview } from '../run/types.ts';
import { sendingEffects } from './confirm.ts';
import { clockOf, EXIT, parseCommand, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { CONFIRM_OPTIONS, confirmHelp, sendingRequest } from './removal-args.ts';
import { sayOutcome } from './run-problems.ts';
import { checkSharedRun, RUN_OPTIONS, shardHelp, targetHelp } from './run-args.ts';

export const APPLY_HELP = `Usage: contract-sync apply [--config FILE] [--repo DIR] [--ref REF] [--tenant T]... [--shard I/N|auto] [--refresh | --no-refresh]
                           [--target TENANT/ID]... [--exclude TENANT/ID]...
                           [--full] [--dry-run] [--auto-approve] [--max-removals N] [--allow-removals]
                           [--lock-timeout SECONDS] [--report FILE]
       contract-sync apply PLAN.json [--config FILE] [--repo DIR] [--dry-run] [--max-removals N] [--allow-removals]
                           [--lock-timeout SECONDS] [--report FILE]

Plans the desired state (the working tree, or git objects at --ref) against the known state and
prints the plan, then sends each changed contract's ops as one PATCH through a rate-controlled
queue per tenant, and records every contract in the state store as soon as its PATCH succeeds.

Confirmation:
  When stdin is a terminal (whatever stdout is: apply > out.txt and apply | tee log ask too, the
  question on the terminal), the plan is printed (after the live reads, with --refresh), then per
  tenant the contracts, ops and members removed, and apply asks "Apply N ops to M contracts in T tenants? Only 'yes' is accepted:".
  Only yes sends; any other answer, or the end of input, prints "Apply cancelled.", sends and
  writes nothing, releases the locks, and exits 1 (as Terraform does). --auto-approve skips the
  question. Without a terminal (CI) apply does not ask. Nothing to send: nothing is asked. A saved
  plan (PLAN.json) is applied without asking: it was reviewed when it was made.

Removal guard:
  A tenant whose plan removes more collection members than --max-removals (safety.maxRemovals,
  default 25), or every member of a collection that had 3 or more, is refused: nothing is sent
  for it, its error names the count and the flag, and the run exits 1; the other tenants go on.
  --allow-removals lifts the guard for one run. A dry run shows what would be refused.

Incremental runs (the default in a git repository):
  Each tenant's run record names the commit its last run applied. A run on a later commit reads
  and plans only the desired-state files changed since that commit, plus the files of contracts
  an earlier run did not finish. A tenant is planned in full when it has no such commit, when that
  commit is not in this clone (a shallow checkout: fetch the history) or not an ancestor of this
  one, when the config changed how contracts are planned (desired paths, tenant paths, collection
  modes), and with --full. A run from a working tree with uncommitted desired-state edits records
  no commit, so the run after it is a full one. Changes made on the service outside git are found
  by contract-sync drift (or apply --full, which reads every contract when api.read is set).
  Cross-file checks (a ContractId declared twice) see only the files read: run validate on pull
  requests. A tenant last applied at a commit newer than this one (this commit is in its history:
  an old pipeline run re-run by hand) is not applied, exit 1; go back with a revert commit, or
  pass --full to apply the older commit anyway.

Targeted runs (--target, --exclude):
  Only the contracts selected are planned, read and sent, from every desired-state file (not
  incrementally). The run record of a tenant with contracts left out keeps its last applied commit
  (the others were not applied at this one); its pending entries for the targeted contracts are
  updated. Use it for exceptions: the next untargeted run applies everything.

Saved plans (PLAN.json, written by contract-sync plan --out):
  Applies exactly the reviewed ops, for the plan's tenants. The desired state (and, without
  --config, the config) is read at the plan's commit, and the known state is obtained as the plan
  obtained it: read live for a plan made with --refresh, else from the state store. Each contract
  the plan changes is planned again; it is sent only when its known state still has the plan's
  fingerprint and it still plans to exactly the reviewed ops. Otherwise it is refused as stale
  (not sent, reported, exit 1) and the other contracts still apply. A plan whose commit is not the
  current commit or an ancestor of it (another branch, rewritten history) is refused as a whole.
  A plan made from a working tree with uncommitted edits plans at its commit without them: its
  edited contracts are refused as stale. Run contract-sync plan again after a refusal.

Options:
  --config FILE          engine config (default: DIR/contract-sync.yaml)
  --repo DIR             repository holding the desired-state files (default: .)
  --ref REF              read the desired state (and, without --config, the config) at this git ref
  --tenant T             apply only tenant T (repeatable; default: every tenant)
${shardHelp(25)}
${targetHelp(25)}  --refresh              take the known state from live reads (default when api.read is configured)
  --no-refresh           take the known state from the state store
  --full                 plan every contract, not only those changed since the last applied commit
                         (and apply even a commit older than the last applied one)
  --dry-run              plan (and read, with --refresh) but send no change and write nothing
${confirmHelp(25, 'apply')}
  --lock-timeout S       wait up to S seconds for another run's lock on a tenant (default: 60)
  --report FILE          write the JSON run report to FILE

Credentials: each tenant's client secret, from the env variable or file the config names.
Scopes asked for: core:write, plus core:read with --refresh; core:read only with --dry-run. Without
--refresh, a core:read token is asked for only when the run reads (api.read configured): to settle
a contract an earlier run left interrupted or unknown, or a 409.
Logs: on stderr: text lines at a terminal (warnings and errors only), else JSON lines at info;
see the global options --log-format and CONTRACT_SYNC_LOG_LEVEL below.

Interruption:
  The first Ctrl-C (SIGINT) or SIGTERM stops the run: no new request starts, requests in flight
  get up to 10 s to finish and are recorded, every lock is released, and apply prints
  "Interrupted: N contracts sent, M not sent; run apply again to finish". The next run reads and
  sends only the contracts not sent. A second signal exits at once.

Exit codes: 0 everything applied (or nothing to do), 1 any error, any contract not applied, a
tenant refused by the removal guard, or the question not answered yes (Apply cancelled.);
130 interrupted by SIGINT, 143 by SIGTERM.
`;

const OPTIONS = {
  ...RUN_OPTIONS,
  refresh: { type: 'boolean' },
  'no-refresh': { type: 'boolean' },
  full: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  ...CONFIRM_OPTIONS,
  'lock-timeout': { type: 'string' },
  report: { type: 'string' },
} as const;

/** Flags a saved plan decides itself: each is a usage error with PLAN.json, and says why. */
const NOT_WITH_A_PLAN: readonly [readonly string[], string][] = [
  [['tenant'], '--tenant cannot be used with a plan file: the plan names its tenants'],
  [['shard'], '--shard cannot be used with a plan file: the plan names its tenants'],
  [
    ['target', 'exclude'],
    '--target and --exclude cannot be used with a plan file: the plan names the contracts to apply (plan with --target, then apply that plan)',
  ],
  [['ref'], "--ref cannot be used with a plan file: the desired state is read at the plan's commit"],
  [['full'], '--full cannot be used with a plan file: the plan names the contracts to apply'],
  [['refresh', 'no-refresh'], '--refresh and --no-refresh cannot be used with a plan file: the known state is obtained the way the plan obtained it'],
];

/** Before the first PATCH: what was selected, the plan (with a saved plan, what was reviewed); its height and per-tenant summary, for the question. */
function showPreview(io: CliIo, preview: ApplyPreview, dryRun: boolean): ShownPlan {
  const { head, plan } = renderApplyPreview(preview, { dryRun, color: wantsColor(io) });
  io.stdout.write(`${head}${plan}`);
  return shownPlan(plan, preview.shown);
}

export async function applyCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, helped } = parseCommand(io, APPLY_HELP, args, true, OPTIONS);
  if (helped) return EXIT.ok;
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const planFile = positionals[0];
  if (values.refresh && values['no-refresh']) throw new UsageError('--refresh and --no-refresh exclude each other');
  for (const [flags, message] of planFile === undefined ? [] : NOT_WITH_A_PLAN) {
    if (flags.some((flag) => values[flag as keyof typeof values] !== undefined && values[flag as keyof typeof values] !== false)) throw new UsageError(message);
  }
  const sending = sendingRequest(values);
  const dryRun = values['dry-run'];
  checkSharedRun(io, sending.selection ?? {}, { sends: !dryRun, notSending: 'a dry run', autoApprove: values['auto-approve'] });
  if (values.report !== undefined) await checkOutputFile({ flag: '--report', name: values.report, cwd: io.cwd });

  const view = runView(io, { shardOn: 'stdout', command: 'apply', now: clockOf(io).now, showPreview: (preview) => showPreview(io, preview, dryRun) });
  const result = await runApplyRequest(
    {
      kind: 'apply',
      ...sending,
      ...(planFile === undefined ? {} : { savedPlan: planFile }),
      ...(values['no-refresh'] ? { known: 'store' as const } : values.refresh ? { known: 'live' as const } : {}),
      scope: values.full ? 'every-contract' : 'incremental',
      mode: dryRun ? 'dry-run' : 'send',
    },
    await sendingEffects(io, view, values['auto-approve'], { text: applyQuestion }),
  );
  view.finish();
  if (result.kind === 'bad-request') throw new UsageError(result.message);
  return sayOutcome(io, renderApplyOutcome(result, values.report !== undefined), values.report);
}
