/** `contract-sync apply [PLAN.json]`: plan (or check a saved plan), then send the ops, record each applied contract, report. */
import { checkOutputFile, writeOutputFile } from '../output-file.ts';
import { READ_LIMITS, readTextBounded } from '../bounded-read.ts';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describeScope, filesReadByTenant } from '../apply/incremental.ts';
import { planReadLive } from '../apply/reviewed-plan.ts';
import { renderRunSummary } from '../apply/run-report.ts';
import { runApply, type SendPreview } from '../apply/run-apply.ts';
import type { Scope } from '../auth/index.ts';
import { GitError } from '../git/errors.ts';
import { fetchCommand } from '../git/fetch-hint.ts';
import { restrictToContracts } from '../desired/target.ts';
import { checkAncestor } from '../git/is-ancestor.ts';
import { closeGitRepository, openGitRepository, type GitRepository } from '../git/repository.ts';
import { isObjectId, isShallow, remoteNames, resolveCommit } from '../git/resolve-ref.ts';
import { parsePlan, PlanFormatError } from '../plan/read-plan.ts';
import { renderPlanText } from '../plan/render-text.ts';
import type { PlanDocument } from '../plan/types.ts';
import { parseTargetFlags, targetHelp, TARGET_OPTIONS } from './config-args.ts';
import { applyQuestion, askYes, shouldAsk } from './confirm.ts';
import { loadRunInputOrReport } from './desired-input.ts';
import { parseLockTimeout } from './lock-timeout.ts';
import { createEngineSetup } from './engine-setup.ts';
import { clockOf, EXIT, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { createProgress } from './progress.ts';
import { CONFIRM_OPTIONS, confirmHelp, parseMaxRemovals, removalLimits } from './removal-args.ts';
import { parseShardArg, reportShard, SHARD_OPTION, shardHelp } from './shard-args.ts';
import { recordRunHistory } from '../state/record-history.ts';
import { openStateStore } from './state-store.ts';

export const APPLY_HELP = `Usage: contract-sync apply [--config FILE] [--repo DIR] [--ref REF] [--tenant T]... [--shard I/N] [--refresh | --no-refresh]
                           [--target TENANT/ID]... [--exclude TENANT/ID]...
                           [--full] [--dry-run] [--auto-approve] [--max-removals N] [--allow-removals]
                           [--lock-timeout SECONDS] [--report FILE]
       contract-sync apply PLAN.json [--config FILE] [--repo DIR] [--dry-run] [--max-removals N] [--allow-removals]
                           [--lock-timeout SECONDS] [--report FILE]

Plans the desired state (the working tree, or git objects at --ref) against the known state and
prints the plan, then sends each changed contract's ops as one PATCH through a rate-controlled
queue per tenant, and records every contract in the state store as soon as its PATCH succeeds.

Confirmation:
  On a terminal (stdin and stdout both TTYs), the plan is printed (after the live reads, with
  --refresh) and apply asks "Apply N ops to M contracts in T tenants? Only 'yes' is accepted:".
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

Exit codes: 0 everything applied (or nothing to do), 1 any error, any contract not applied, a
tenant refused by the removal guard, or the question not answered yes (Apply cancelled.).
`;

export async function applyCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      ref: { type: 'string' },
      tenant: { type: 'string', multiple: true },
      ...SHARD_OPTION,
      ...TARGET_OPTIONS,
      refresh: { type: 'boolean' },
      'no-refresh': { type: 'boolean' },
      full: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      ...CONFIRM_OPTIONS,
      'lock-timeout': { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(APPLY_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const planFile = positionals[0];
  if (values.refresh && values['no-refresh']) throw new UsageError('--refresh and --no-refresh exclude each other');
  if (planFile !== undefined) {
    if (values.tenant !== undefined) throw new UsageError('--tenant cannot be used with a plan file: the plan names its tenants');
    if (values.shard !== undefined) throw new UsageError('--shard cannot be used with a plan file: the plan names its tenants');
    if (values.target !== undefined || values.exclude !== undefined) {
      throw new UsageError('--target and --exclude cannot be used with a plan file: the plan names the contracts to apply (plan with --target, then apply that plan)');
    }
    if (values.ref !== undefined) throw new UsageError("--ref cannot be used with a plan file: the desired state is read at the plan's commit");
    if (values.full) throw new UsageError('--full cannot be used with a plan file: the plan names the contracts to apply');
    if (values.refresh || values['no-refresh']) {
      throw new UsageError('--refresh and --no-refresh cannot be used with a plan file: the known state is obtained the way the plan obtained it');
    }
  }
  const lockTimeoutMs = parseLockTimeout(values['lock-timeout']);
  const maxRemovals = parseMaxRemovals(values['max-removals']);
  const shard = parseShardArg(values.shard);
  if (values.report !== undefined) await checkOutputFile({ flag: '--report', name: values.report, cwd: io.cwd });
  const selection = parseTargetFlags(values);

  const reviewed = planFile === undefined ? undefined : await readSavedPlan(io, planFile, values.repo);
  if (typeof reviewed === 'number') return reviewed;
  const planTenants = reviewed?.tenants.map((tenant) => tenant.tenant);
  const input = await loadRunInputOrReport(
    io,
    'apply',
    {
      repo: values.repo,
      config: values.config,
      ref: reviewed ? (reviewed.source.commit ?? undefined) : values.ref,
      tenants: values.tenant,
      ...(shard ? { shard } : {}),
      ...selection,
      ...(reviewed ? {} : { incremental: !values.full, checkUncommitted: true }),
    },
    'nothing applied',
  );
  if (typeof input === 'number') return input;
  // A shard without tenants has nothing to lock, read or send.
  if (reportShard(io, input.shard, 'stdout')) return EXIT.ok;
  const { repoDir, config } = input;
  let { contractSets, source } = input;
  let narrowed = input.targeting?.narrowed;
  const canRead = config.api.read !== undefined;
  let refresh = values['no-refresh'] ? false : canRead;
  if (reviewed && planTenants) {
    const unknown = planTenants.filter((tenant) => !Object.hasOwn(config.tenants, tenant));
    if (unknown.length > 0) {
      io.stderr.write(`contract-sync apply: ${planFile}: the plan names ${unknown.length === 1 ? 'tenant' : 'tenants'} ${unknown.join(', ')}, which the config does not know; nothing applied\n`);
      return EXIT.error;
    }
    // A plan made with --target lists only its targets: the others are not planned, and the run record keeps its commit.
    const restricted = restrictToContracts(contractSets, new Map(reviewed.tenants.map((tenant) => [tenant.tenant, new Set(tenant.contracts.map((contract) => contract.id))])));
    contractSets = restricted.contractSets;
    narrowed = restricted.narrowed;
    source = { repo: values.repo, ref: reviewed.source.ref, commit: reviewed.source.commit };
    refresh = planReadLive(reviewed);
    if (refresh && !canRead) {
      io.stderr.write(`contract-sync apply: ${planFile} was made with --refresh (known state read live), and applying it reads live again; configure api.read (e.g. read: { path: "/contract/{id}" }); nothing applied\n`);
      return EXIT.error;
    }
  } else if (values.refresh && !canRead) {
    io.stderr.write('contract-sync apply: --refresh needs reads; configure api.read (e.g. read: { path: "/contract/{id}" })\n');
    return EXIT.error;
  }

  const scopes = applyScopes({ dryRun: values['dry-run'], refresh, canRead });
  // Builds objects only: nothing is sent before the store is open.
  const engine = createEngineSetup(io, config, scopes.tokens);
  const store = await openStateStore(config, repoDir, io, engine.redactor);
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync apply: ${store}\n`);
    return EXIT.error;
  }
  const readTokens = scopes.reads === undefined ? undefined : engine.tokensFor(scopes.reads);
  const clock = clockOf(io);
  const progress = createProgress({ stream: io.stderr, logger: engine.logger, now: clock.now });

  const { targeting, scopes: tenantScopes } = input;
  const saved = reviewed;
  /** Before the first PATCH: what was selected, the plan, and on a terminal the question. */
  async function confirm(preview: SendPreview): Promise<boolean> {
    if (targeting) {
      const keeps = !values['dry-run'] && targeting.narrowed.size > 0 ? ' Contracts not targeted were not planned; the run record keeps its last applied commit.' : ' Contracts not targeted were not planned.';
      io.stdout.write(`${targeting.description}${keeps}\n`);
    }
    for (const scope of tenantScopes?.values() ?? []) {
      const contracts = contractSets.filter((set) => set.tenant === scope.tenant).reduce((sum, set) => sum + set.contracts.length, 0);
      io.stdout.write(`${describeScope(scope, contracts)}\n`);
    }
    // With a saved plan, what was reviewed is what is sent; the summary says what of it went through.
    // Contracts whose read failed are not in the plan: its headline must not say "No changes" then.
    const shown = saved ?? preview.plan;
    const listed = new Set(shown.tenants.flatMap((tenant) => tenant.contracts.map((contract) => `${tenant.tenant}/${contract.id}`)));
    const notPlanned = preview.unreadable.filter(({ tenant, result }) => !listed.has(`${tenant}/${result.contractId}`));
    const notOnService = notPlanned.filter(({ result }) => result.outcome === 'not-on-service').length;
    io.stdout.write(renderPlanText(shown, { color: wantsColor(io), notPlanned: { count: notPlanned.length, notOnService } }));
    // A saved plan was reviewed when it was made: applied without asking, as Terraform does.
    if (values['dry-run'] || saved || !shouldAsk(io, { autoApprove: values['auto-approve'], ops: preview.sending.ops })) return true;
    for (const { reason } of preview.refused) io.stdout.write(`\n${reason}\n`);
    io.stdout.write('\n');
    return askYes(io, applyQuestion(preview.sending));
  }

  const { report, cancelled } = await runApply(
    {
      config,
      contractSets,
      source,
      refresh,
      dryRun: values['dry-run'],
      lockTimeoutMs,
      runId: engine.runId,
      ...(reviewed ? { reviewed } : {}),
      uncommitted: input.committed === false,
      ...(input.scopes ? { filesRead: filesReadByTenant(input.scopes) } : {}),
      ...(narrowed ? { narrowed } : {}),
      removals: removalLimits(maxRemovals, values['allow-removals'], config.safety),
    },
    { store, tokens: engine.tokens, ...(readTokens ? { readTokens } : {}), api: engine.api, clock, random: Math.random, logger: engine.logger, onProgress: (event) => progress.update(event), confirm },
  )
    .then(async (run) => {
      if (!values['dry-run'] && !run.cancelled) await recordRunHistory(store, run.report, { command: 'apply', env: io.env, logger: engine.logger, warn: (line) => io.stderr.write(`contract-sync apply: ${line}`) });
      return run;
    })
    .finally(() => store.close());
  progress.finish();

  if (cancelled) {
    io.stdout.write('\nApply cancelled.\n');
    return EXIT.error;
  }
  io.stdout.write(`\n${renderRunSummary(report)}`);
  if ([...(input.scopes?.values() ?? [])].some((scope) => scope.kind === 'incremental')) {
    io.stdout.write('Incremental run: contracts unchanged since the last applied commit were not planned; contract-sync drift (or apply --full) checks them against the service.\n');
  }
  if (values.report !== undefined) await writeOutputFile({ flag: '--report', name: values.report, cwd: io.cwd }, `${JSON.stringify(report, null, 2)}\n`);
  const behind = [...(input.scopes?.values() ?? [])].some((scope) => scope.kind === 'behind');
  const failed = behind || report.summary.failed > 0 || report.tenants.some((tenant) => tenant.error !== undefined);
  return failed ? EXIT.error : EXIT.ok;
}

/**
 * The scopes an apply asks for: the least each run needs (docs/architecture.md section 7). A dry run
 * sends no PATCH: core:read, for its reads. A run that refreshes reads and writes. A run without
 * refresh writes; when reads are configured it may still read, to settle a contract an earlier run
 * left uncertain or a 409, and asks for a core:read token only then (`reads`).
 */
export function applyScopes(run: { readonly dryRun: boolean; readonly refresh: boolean; readonly canRead: boolean }): { tokens: Scope[]; reads?: Scope[] } {
  if (run.dryRun) return { tokens: ['core:read'] };
  if (run.refresh) return { tokens: ['core:read', 'core:write'] };
  return run.canRead ? { tokens: ['core:write'], reads: ['core:read'] } : { tokens: ['core:write'] };
}

/** The saved plan, checked: readable, a plan document of a known version, made from a commit HEAD descends from. */
async function readSavedPlan(io: CliIo, file: string, repo: string): Promise<PlanDocument | ExitCode> {
  function refuse(message: string): ExitCode {
    io.stderr.write(`contract-sync apply: ${file}: ${message}; nothing applied\n`);
    return EXIT.error;
  }
  let text: string;
  try {
    text = await readTextBounded(path.resolve(io.cwd, file), READ_LIMITS.plan);
  } catch (error) {
    return refuse(`cannot read the plan file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let plan: PlanDocument;
  try {
    plan = parsePlan(text);
  } catch (error) {
    if (!(error instanceof PlanFormatError)) throw error;
    return refuse(error.message);
  }
  const { commit } = plan.source;
  if (commit === null) return plan;
  if (!isObjectId(commit)) return refuse(`invalid plan: source.commit ${JSON.stringify(commit)} is not a commit id`);
  try {
    const problem = await commitProblem(path.resolve(io.cwd, repo), repo, commit);
    return problem === undefined ? plan : refuse(problem);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return refuse(error.message);
  }
}

/** Why a plan made from `commit` must not be applied here, if it must not. */
async function commitProblem(repoDir: string, repo: string, commit: string): Promise<string | undefined> {
  const repository = await openGitRepository(repoDir);
  if (!repository) return `the plan was made from commit ${commit}, but ${repo} is not inside a git work tree`;
  try {
    return await commitProblemIn(repository, commit);
  } finally {
    closeGitRepository(repository);
  }
}

async function commitProblemIn(repository: GitRepository, commit: string): Promise<string | undefined> {
  const head = await resolveCommit(repository, 'HEAD');
  // A repository with no commit yet has nothing the plan could undo.
  if (head === undefined) return undefined;
  const check = await checkAncestor(repository, commit, head);
  if (check === 'ancestor') return undefined;
  if (check === 'not-ancestor') {
    return `the plan was made from commit ${commit}, which is not an ancestor of the current commit ${head} (another branch, or rewritten history): applying it could undo what is in the current commit; run contract-sync plan again`;
  }
  const fetch = fetchCommand(commit, { shallow: await isShallow(repository), remotes: await remoteNames(repository) });
  return `the plan was made from commit ${commit}, which this clone does not have, so it cannot be checked against the current commit ${head}; fetch it (${fetch}) or run contract-sync plan again`;
}
