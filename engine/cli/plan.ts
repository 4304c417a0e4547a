/**
 * `contract-sync plan`: desired state (working tree or a git ref) against the state store -> a
 * plan, with no network; with --refresh, against live reads instead.
 */
import { appendFile } from 'node:fs/promises';
import { checkOutputFile, writeOutputFile } from '../output-file.ts';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { RunReport } from '../apply/run-report.ts';
import type { Config } from '../config/types.ts';
import type { ContractSet } from '../desired/types.ts';
import { createPlan } from '../plan/create-plan.ts';
import { readPlannedKnownState } from '../plan/incremental-plan.ts';
import { renderPlanJson } from '../plan/render-json.ts';
import type { RepositoryLinks } from '../plan/file-links.ts';
import { renderPlanMarkdown } from '../plan/render-markdown.ts';
import { renderPlanText } from '../plan/render-text.ts';
import type { PlanDocument, PlanSource, PlanTouched } from '../plan/types.ts';
import { plural } from '../plural.ts';
import { StateFormatError } from '../state/file-format.ts';
import { PostgresStateError } from '../state/postgres/errors.ts';
import { parseTargetFlags, targetHelp, TARGET_OPTIONS } from './config-args.ts';
import { loadPlanInputOrReport, loadRunInputOrReport, type RunInput } from './desired-input.ts';
import { parseShardArg, reportShard, SHARD_OPTION, shardHelp } from './shard-args.ts';
import { openStateStore } from './state-store.ts';
import { clockOf, EXIT, parseFormat, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { renderPlanAnnotations } from './plan-github.ts';
import { planMadeWith, streamedStorePlan } from './plan-stream.ts';
import { ciRepositoryLinks } from './repository-links.ts';

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
${shardHelp(24)}
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

type PlanFormat = 'text' | 'markdown' | 'json' | 'github';
const PLAN_FORMATS: readonly PlanFormat[] = ['text', 'markdown', 'json', 'github'];

function render(plan: PlanDocument, format: PlanFormat, io: CliIo, links: RepositoryLinks | undefined): string {
  switch (format) {
    case 'json':
      return renderPlanJson(plan);
    case 'markdown':
      return renderPlanMarkdown(plan, { links });
    case 'github':
      // Annotations and a job log are read without a terminal: never coloured.
      return `${renderPlanAnnotations(plan)}${renderPlanText(plan)}`;
    case 'text':
      return renderPlanText(plan, { color: wantsColor(io) });
  }
}

/** The job summary: GitHub gives each step a file to append markdown to (other steps' content may be in it). */
async function writeStepSummary(plan: PlanDocument, io: CliIo, links: RepositoryLinks | undefined): Promise<string | undefined> {
  const file = io.env.GITHUB_STEP_SUMMARY;
  if (!file) return undefined;
  try {
    await appendFile(path.resolve(io.cwd, file), `${renderPlanMarkdown(plan, { links })}\n`);
    return undefined;
  } catch (error) {
    return `cannot append to GITHUB_STEP_SUMMARY (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

interface PlanInput {
  readonly config: Config;
  readonly contractSets: readonly ContractSet[];
  readonly source: PlanSource;
  readonly touched: PlanTouched | undefined;
}

/** Against the state store: no network, no credentials. */
async function storePlan(io: CliIo, { config, repoDir, contractSets, source, touched }: PlanInput & { readonly repoDir: string }): Promise<PlanDocument | ExitCode> {
  const store = await openStateStore(config, repoDir, io);
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync plan: ${store}\n`);
    return EXIT.error;
  }
  let known;
  try {
    known = await readPlannedKnownState(store, contractSets);
  } catch (error) {
    if (!(error instanceof StateFormatError) && !(error instanceof PostgresStateError)) throw error;
    io.stderr.write(`contract-sync plan: cannot read the state store: ${error.message}\n`);
    return EXIT.error;
  } finally {
    await store.close();
  }
  return createPlan(contractSets, known, {
    createdAt: (io.now ?? (() => new Date()))().toISOString(),
    source,
    collections: config.collections,
    ...(touched ? { touched } : {}),
  });
}

/** Every problem that kept a live plan from being complete, one line each. */
function readProblems(report: RunReport): string[] {
  return report.tenants.flatMap((tenant) => [
    ...(tenant.error === undefined ? [] : [`${tenant.tenant}: ${tenant.error}`]),
    ...tenant.failures.map((failure) => {
      const what = failure.outcome === 'not-on-service' ? 'not on the service: ' : '';
      return `${tenant.tenant} ${failure.contractId} (${failure.file}:${failure.line}): ${what}${failure.reason ?? failure.outcome}`;
    }),
  ]);
}

/**
 * Against live reads: the apply engine's dry run (no lock, no PATCH, nothing written), so that the
 * known state is read exactly as apply reads it. A plan missing a contract or a tenant would look
 * complete to its reviewer: any read problem is an error instead.
 */
async function livePlan(io: CliIo, { config, contractSets, source, touched }: PlanInput): Promise<PlanDocument | ExitCode> {
  // Loaded here: a plan against the state store needs neither the HTTP client nor the OpenID client.
  const [{ runApply }, { createEngineSetup }, { emptyStateStore }, { countNotOnService, notOnServiceText }] = await Promise.all([
    import('../apply/run-apply.ts'),
    import('./engine-setup.ts'),
    import('../state/memory-store.ts'),
    import('../apply/run-report.ts'),
  ]);
  const engine = createEngineSetup(io, config, ['core:read']);
  const clock = clockOf(io);
  const { plan, report } = await runApply(
    { config, contractSets, source, refresh: true, dryRun: true, lockTimeoutMs: 0, runId: engine.runId, ...(touched ? { touched } : {}) },
    // A dry run never touches the state store.
    { store: emptyStateStore(), tokens: engine.tokens, api: engine.api, clock, random: Math.random, logger: engine.logger },
  );
  const problems = readProblems(report);
  if (problems.length === 0) return plan;
  for (const problem of problems) io.stderr.write(`contract-sync plan: ${problem}\n`);
  const missing = countNotOnService(report);
  const others = problems.length - missing;
  const summary = [...(missing > 0 ? [notOnServiceText(missing)] : []), ...(others > 0 ? [`${plural(others, 'problem')} reading the known state live`] : [])];
  io.stderr.write(`${summary.join(', ')}: no plan written\n`);
  return EXIT.error;
}

export async function planCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      ref: { type: 'string' },
      base: { type: 'string' },
      tenant: { type: 'string', multiple: true },
      ...SHARD_OPTION,
      ...TARGET_OPTIONS,
      refresh: { type: 'boolean' },
      'no-refresh': { type: 'boolean' },
      full: { type: 'boolean', default: false },
      out: { type: 'string' },
      format: { type: 'string' },
      'detailed-exitcode': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(PLAN_HELP);
    return EXIT.ok;
  }
  const format = parseFormat<PlanFormat>(values.format, PLAN_FORMATS, 'text');
  if (values.refresh && values['no-refresh']) throw new UsageError('--refresh and --no-refresh exclude each other');
  const shard = parseShardArg(values.shard);
  if (values.out !== undefined) await checkOutputFile({ flag: '--out', name: values.out, cwd: io.cwd });

  const selection = parseTargetFlags(values);
  const runOptions = { repo: values.repo, config: values.config, ref: values.ref, base: values.base, tenants: values.tenant, ...(shard ? { shard } : {}), ...selection };
  let input: RunInput | ExitCode;
  if (!values.refresh && (format === 'text' || format === 'json')) {
    // Incremental where a tenant can be; a plan of everything goes one tenant at a time, streamed.
    const loaded = values.full ? { kind: 'in-full' as const, notes: [] } : await loadPlanInputOrReport(io, runOptions, 'no plan written');
    if (typeof loaded !== 'number' && 'kind' in loaded) {
      for (const note of loaded.notes) io.stderr.write(`contract-sync plan: ${note}\n`);
      return streamedStorePlan(io, {
        ...runOptions,
        out: values.out,
        format,
        text: { color: format === 'text' && wantsColor(io) },
        detailedExitcode: values['detailed-exitcode'],
      });
    }
    input = loaded;
  } else {
    input = await loadRunInputOrReport(io, 'plan', { ...runOptions, incrementalPlan: !values.full }, 'no plan written');
  }
  if (typeof input === 'number') return input;
  // An empty shard still plans (and writes --out): nothing, so that the steps after it find a plan.
  reportShard(io, input.shard, format === 'text' ? 'stdout' : 'stderr');
  const { repoDir, config, contractSets, source, touched } = input;
  if (values.refresh && config.api.read === undefined) {
    io.stderr.write('contract-sync plan: --refresh needs reads; configure api.read (e.g. read: { path: "/contract/{id}" }); no plan written\n');
    return EXIT.error;
  }

  const planned = values.refresh ? await livePlan(io, { config, contractSets, source, touched }) : await storePlan(io, { config, repoDir, contractSets, source, touched });
  if (typeof planned === 'number') return planned;
  // Recorded for the reviewer, so that show PLAN.json renders what plan rendered (the markdown plan's header and notes).
  const plan: PlanDocument = { ...planned, madeWith: planMadeWith(config) };
  const links = format === 'markdown' || format === 'github' ? await ciRepositoryLinks(io, repoDir) : undefined;

  if (values.out !== undefined) await writeOutputFile({ flag: '--out', name: values.out, cwd: io.cwd }, renderPlanJson(plan));
  // Said before the plan, like Terraform's targeting warning; json stays one document on stdout.
  const targeted = input.targeting?.description;
  if (targeted !== undefined) {
    if (format === 'json') io.stderr.write(`contract-sync plan: ${targeted}\n`);
    else io.stdout.write(format === 'markdown' ? `> **${targeted}** Contracts not targeted were not planned.\n\n` : `${targeted} Contracts not targeted were not planned.\n\n`);
  }
  io.stdout.write(render(plan, format, io, links));
  if (format === 'github') {
    const problem = await writeStepSummary(plan, io, links);
    if (problem !== undefined) {
      io.stderr.write(`contract-sync plan: ${problem}\n`);
      return EXIT.error;
    }
  }
  return values['detailed-exitcode'] && plan.summary.changed > 0 ? EXIT.changes : EXIT.ok;
}
