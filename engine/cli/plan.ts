/**
 * `contract-sync plan`: desired state (working tree or a git ref) against the state store -> a
 * plan, with no network; with --refresh, against live reads instead.
 */
import { checkOutputFile, writeOutputFile } from '../output/output-file.ts';
import path from 'node:path';
import { renderPlanAs, type PlanFormat } from '../plan/render-format.ts';
import { renderPlanJson } from '../plan/render-json.ts';
import { runPlan, type PlanRunOutcome } from '../run/plan.ts';
import { renderTargetedNote } from '../run/render-run.ts';
import { ciPlanArtifact, ciRepositoryLinks } from '../run/repository-links.ts';
import type { Finding } from '../diagnostic/finding.ts';
import { failingSentence } from '../plan/render-findings.ts';
import { findingFails } from '../policy/index.ts';
import { clockOf, EXIT, failWith, parseCommand, parseFormat, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { planSpools, type PlanSpools } from '../output/plan-spools.ts';
import { runView } from '../output/run-view.ts';
import { writeStepSummary } from '../output/step-summary.ts';
import { writeOut } from '../output/stream.ts';
import { refreshNote } from '../plan/render-refresh-note.ts';
import { runEffects } from './run-effects.ts';
import { reportDesired, reportUnread } from './run-problems.ts';
import { reportShard, RUN_OPTIONS, selectionOf, shardHelp, targetHelp, whereOf } from './run-args.ts';

export const PLAN_HELP = `Usage: contract-sync plan [--config FILE] [--repo DIR] [--ref REF] [--base REF] [--tenant T]... [--shard I/N]
                          [--target TENANT/ID]... [--exclude TENANT/ID]...
                          [--refresh | --no-refresh] [--full] [--out PLAN.json] [--format text|markdown|json|github]
                          [--detailed-exitcode]

Compares the desired state with the last known state in the state store and prints the ops each
contract needs. Sends no request and needs no credentials (unless --refresh).
A contract with no known state (never applied) plans as "known state unknown": every desired
field is set and every desired member added; nothing is removed.

Known state:
  --no-refresh    (default) the state store: what contract-sync last applied; no network
  --refresh       read every planned contract live (needs api.read in the config, and each
                  tenant's client secret; asks for the scope core:read only). A contract or
                  tenant that cannot be read is an error: no plan is written. A read answered
                  404 says the contract is not on the service: contract-sync cannot create one

Incremental plans (the default in a git repository):
  Like apply, a plan reads and plans only the contracts whose desired fields changed since each
  tenant's last applied commit (the state store's run record), plus those an earlier run did not
  finish, and with --base the contracts the change touches: every other contract plans to nothing
  by the state store's record. The last applied commit need not be an ancestor of the head (a
  pull request branched off before it): what differs between the two is what is planned. The plan
  says so ("Planned the contracts changed since the last applied commit ..."; in JSON,
  source.incremental). A tenant is planned in full (and plan says why, on stderr when no tenant is
  planned incrementally) when it has no such commit, when the commit is not in this clone (fetch
  the history), when the config changed how contracts are planned, and with --full or --target.

Where the desired state comes from:
  without --ref   the files of DIR as they are: uncommitted and untracked edits included
  --ref REF       git objects at REF (branch, tag or commit), without checking it out; the config
                  is DIR/contract-sync.yaml at REF too, unless --config names a file, which is
                  always read from the working tree

Pull requests (--base REF):
  Marks the contracts the change since REF touches: the ones it adds or whose fields it edits
  (not every contract of a changed file; a contract moved unchanged to another file is not
  marked). The change is counted like a pull request's, from the merge base of REF and the head
  (git diff REF...HEAD); without --ref the head is the working tree, uncommitted and untracked
  files included (like git diff REF). Contracts the change removes are listed as no longer
  managed: contract-sync never deletes, so they are left unchanged on the service.
  A shallow CI clone must hold REF and the merge base: check out with actions/checkout's
  fetch-depth: 0, or fetch both (git fetch --no-tags --deepen=50 origin
  +refs/heads/main:refs/remotes/origin/main; fetching main with --depth alone leaves the head's
  history cut, so the merge base stays missing). When either is missing, plan says what to run.
  Example: contract-sync plan --ref HEAD --base origin/main --format markdown

Options:
  --config FILE         engine config (default: DIR/contract-sync.yaml)
  --repo DIR            repository holding the desired-state files (default: .)
  --ref REF             read the desired state at this git ref (see above)
  --base REF            mark what the change since REF touches (see above)
  --tenant T            plan only tenant T (repeatable; default: every tenant)
${shardHelp(24, false)}
${targetHelp(24)}  --full                plan every contract, not only those changed since the last applied commit
  --refresh             read the known state live (see above)
  --no-refresh          read the known state from the state store (the default)
  --out PLAN.json       also write the plan document (JSON) to this file, for contract-sync apply
                        PLAN.json, which applies exactly its ops and refuses what went stale
  --format F            text (default); markdown, a pull-request comment (summary first, then the
                        contracts the pull request changes, then the others); json, the plan
                        document; github: one workflow annotation per contract to look at
                        (::notice file=F,line=L:: per contract with ops, or with --base per touched
                        contract, and ::warning:: per contract no longer managed; GitHub shows the
                        first 10 of each kind per step) followed by the text plan, and when
                        GITHUB_STEP_SUMMARY is set the markdown plan is appended to that file
  --detailed-exitcode   exit 2 when there are changes, 0 when there are none

Exit codes: 0 success, 1 error (an invalid config or desired state, or a ref or base this clone
does not have: nothing is written), 2 changes present (with --detailed-exitcode).
`;

const PLAN_FORMATS: readonly PlanFormat[] = ['text', 'markdown', 'json', 'github'];

const OUTCOME = 'no plan written';

interface PlanFlags {
  readonly format: PlanFormat;
  readonly out: string | undefined;
  readonly detailedExitcode: boolean;
  /** --refresh: the known state was read live. */
  readonly refresh: boolean;
}

/** What a plan run ended with, said and written: the exit code. */
async function renderPlanRun(io: CliIo, result: PlanRunOutcome, flags: PlanFlags, written: PlanSpools | undefined): Promise<ExitCode> {
  const { format } = flags;
  if (result.kind === 'git-error' || result.kind === 'invalid-config' || result.kind === 'bad-request') return reportUnread(io, 'plan', OUTCOME, result);
  for (const note of result.notes) io.stderr.write(`contract-sync plan: ${note}\n`);
  if (result.kind === 'invalid-desired') return reportDesired(io, 'plan', OUTCOME, result.problems) ?? EXIT.error;
  reportDesired(io, 'plan', OUTCOME, result.warnings);
  // An empty shard still plans (and writes --out): nothing, so that the steps after it find a plan.
  reportShard(io, result.shard, format === 'text' ? 'stdout' : 'stderr');
  if (result.kind === 'refused') return failWith(io, 'plan', result.message);
  if (result.kind === 'unreadable') {
    for (const problem of result.problems) io.stderr.write(`contract-sync plan: ${problem}\n`);
    io.stderr.write(`${result.summary}\n`);
    return EXIT.error;
  }
  const plan = result.kind === 'planned' ? result.plan : undefined;
  const links = plan && (format === 'markdown' || format === 'github') ? await ciRepositoryLinks(io, result.repoDir) : undefined;
  if (plan && flags.out !== undefined) await writeOutputFile({ flag: '--out', name: flags.out, cwd: io.cwd }, renderPlanJson(plan));
  // Said before the plan, like Terraform's targeting warning; json stays one document on stdout.
  const targeted = result.targeting?.description;
  if (targeted !== undefined) {
    if (format === 'json') io.stderr.write(`contract-sync plan: ${targeted}\n`);
    else io.stdout.write(renderTargetedNote(targeted, format === 'markdown' ? 'markdown' : 'text', 'planned'));
  }
  if (plan) {
    await writeOut(io.stdout, renderPlanAs(plan, format, { color: wantsColor(io), links, artifact: ciPlanArtifact(io) }));
    // Read live: said under a text plan, on stderr beside a document.
    const readNote = flags.refresh ? refreshNote(plan) : undefined;
    if (readNote !== undefined) (format === 'text' ? io.stdout : io.stderr).write(format === 'text' ? `\n${readNote}\n` : `contract-sync plan: ${readNote}\n`);
    const problem = format === 'github' ? await writeStepSummary(plan, io, links) : undefined;
    if (problem !== undefined) return failWith(io, 'plan', problem);
    // A check's deny (a policy rule's) fails the plan, as it fails validate; shown above with the plan.
    if ((plan.findings ?? []).some(findingFails)) return deniedBy(io, plan.findings ?? []);
    return flags.detailedExitcode && plan.summary.changed > 0 ? EXIT.changes : EXIT.ok;
  }
  if (result.kind === 'streamed') await written?.writeTo(io.stdout, result);
  if (result.kind === 'streamed' && (result.trailer.findings ?? []).some(findingFails)) return deniedBy(io, result.trailer.findings ?? []);
  return flags.detailedExitcode && result.kind === 'streamed' && result.trailer.summary.changed > 0 ? EXIT.changes : EXIT.ok;
}

/** A plan some check's findings deny fails, saying so where a CI log shows it (the findings are with the plan). */
function deniedBy(io: CliIo, findings: readonly Finding[]): ExitCode {
  return failWith(io, 'plan', failingSentence(findings) ?? 'denied');
}

export async function planCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, helped } = parseCommand(io, PLAN_HELP, args, false, {
    ...RUN_OPTIONS,
    base: { type: 'string' },
    refresh: { type: 'boolean' },
    'no-refresh': { type: 'boolean' },
    full: { type: 'boolean', default: false },
    out: { type: 'string' },
    format: { type: 'string' },
    'detailed-exitcode': { type: 'boolean', default: false },
  });
  if (helped) return EXIT.ok;
  const format = parseFormat<PlanFormat>(values.format, PLAN_FORMATS, 'text');
  if (values.refresh && values['no-refresh']) throw new UsageError('--refresh and --no-refresh exclude each other');
  if (values.out !== undefined) await checkOutputFile({ flag: '--out', name: values.out, cwd: io.cwd });
  const known = values.refresh ? 'live' : 'store';
  // Text and JSON go out one tenant at a time when the run plans every contract against the state store.
  const written =
    known === 'store' && (format === 'text' || format === 'json')
      ? planSpools(format, { outFile: values.out === undefined ? undefined : path.resolve(io.cwd, values.out), color: format === 'text' && wantsColor(io) })
      : undefined;
  const view = runView(io, { shardOn: 'stderr', command: 'plan', now: clockOf(io).now });
  try {
    const result = await runPlan(
      {
        kind: 'plan',
        where: whereOf(values),
        selection: planSelection(values),
        ...(values.base === undefined ? {} : { base: values.base }),
        known,
        scope: values.full ? 'every-contract' : 'incremental',
        ...(written ? { sink: written.sink } : {}),
      },
      await runEffects(io, { logs: known === 'live', onEvent: view.onEvent }),
    );
    view.finish();
    return await renderPlanRun(io, result, { format, out: values.out, detailedExitcode: values['detailed-exitcode'], refresh: known === 'live' }, written);
  } finally {
    written?.discard();
  }
}

/** plan's selection: `--shard auto` is for the commands that send. */
function planSelection(values: Parameters<typeof selectionOf>[0]): ReturnType<typeof selectionOf> {
  const selection = selectionOf(values);
  if (selection.shard === 'auto')
    throw new UsageError('--shard auto shares a run that sends between workers (apply, drift --fix); plan sends nothing: use --shard I/N');
  return selection;
}
