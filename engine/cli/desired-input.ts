/**
 * Everything a run reads before it can plan: the config, the desired state (working tree or a git
 * ref) and, with a base, what the change since the base touched. One function for every command
 * that plans (plan, apply, drift) or checks (validate), so that they read the same input the same way.
 */
import path from 'node:path';
import { narrowToChangedContracts, narrowToScopes, type TenantScope } from '../apply/incremental.ts';
import type { Config } from '../config/types.ts';
import { loadDesiredState } from '../desired/load.ts';
import { selectShard, type Shard, type ShardSelection } from '../desired/shard.ts';
import { desiredPathMatcher, workingTreeSource, type DesiredSource } from '../desired/read-files.ts';
import { isTargeted, selectTargets, type TargetOptions, type TargetPattern } from '../desired/target.ts';
import type { ContractSet, DesiredFile, DesiredStateResult } from '../desired/types.ts';
import type { Diagnostic } from '../diagnostic.ts';
import { parseDesiredFile } from '../desired/parse-file.ts';
import { readBaseChanges, type BaseChanges } from '../run/base-changes.ts';
import { changedFiles } from '../git/changed-files.ts';
import { GitError, type GitErrorCode } from '../git/errors.ts';
import { missingRefMessage } from '../git/fetch-hint.ts';
import { gitCommitSource } from '../run/git-source.ts';
import { closeGitRepository, openGitRepository, type GitRepository } from '../git/repository.ts';
import { checkRefSyntax, isShallow, remoteNames, resolveCommit } from '../git/resolve-ref.ts';
import { findTouchedContracts } from '../plan/touched-contracts.ts';
import type { BaseInput } from '../plan/plan-by-tenant.ts';
import type { PlanIncremental, PlanSource, PlanTouched } from '../plan/types.ts';
import { plural } from '../plural.ts';
import { readRepoConfig, type ConfigAtRef } from './config-args.ts';
import { formatDiagnostics } from './diagnostics-output.ts';
import { readTenantScopes, type ScopeHead } from './incremental-scopes.ts';
import { EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';
import { openStateStore } from './state-store.ts';

export interface RunInputOptions {
  /** `--repo` as given (relative to the working directory). */
  readonly repo: string;
  /** `--config`: always a working-tree file. Without it: DIR/contract-sync.yaml, at `ref` when there is one. */
  readonly config?: string;
  /** `--ref`: read the desired state (and the config) from git objects at this ref. */
  readonly ref?: string;
  /** `--base`: mark what the change since this ref touches (merge-base semantics, like a pull request). */
  readonly base?: string;
  /** `--tenant`: keep only these tenants (default: all); each must be configured. */
  readonly tenants?: readonly string[];
  /** `--shard`: keep only the tenants (of the configured ones, or of `tenants`) on this shard. */
  readonly shard?: Shard;
  /**
   * `--target` / `--exclude` (engine/desired/target.ts): only these contracts are planned. A
   * target's tenant is selected without `--tenant`. A targeted run is planned from every file,
   * never incrementally: the targets are the scope.
   */
  readonly targets?: readonly TargetPattern[];
  readonly excludes?: readonly TargetPattern[];
  /**
   * Apply: plan only what changed since each tenant's last applied commit (see
   * engine/apply/incremental.ts); tenants without a usable record are planned in full.
   */
  readonly incremental?: boolean;
  /**
   * Plan: plan incrementally like apply, and also from a last applied commit that is not in the
   * head's history (a pull request branched off before it): the files that differ between the two
   * are all that can plan differently. The plan's source says so (PlanSource `incremental`).
   */
  readonly incrementalPlan?: boolean;
  /**
   * With incrementalPlan: when no tenant can be planned incrementally, stop before reading any
   * desired-state file and answer `in-full` (plan's text and json plan everything one tenant at a time).
   */
  readonly inFullSignal?: boolean;
  /** Apply: find out whether the working tree's desired-state files differ from HEAD. */
  readonly checkUncommitted?: boolean;
  /**
   * Validate: without a ref or a base, git is not asked anything (source.commit is null), which
   * spares start-up the git adapter and a git process or two.
   */
  readonly withoutHead?: boolean;
}

export interface RunInput {
  readonly repoDir: string;
  readonly configFile: string;
  readonly config: Config;
  /** The config's warnings (a config with errors is `invalid-config`). */
  readonly configDiagnostics: readonly Diagnostic[];
  /** The whole desired state as validated, every tenant: with errors, nothing may be planned or applied. */
  readonly desired: DesiredStateResult;
  /** The valid contract sets of the selected tenants. */
  readonly contractSets: readonly ContractSet[];
  /** Where the desired state was read (and, with a base, what it was compared with), for the plan document. */
  readonly source: PlanSource;
  /** With a base and a desired state without errors: what the change touched, selected tenants only. */
  readonly touched?: PlanTouched;
  /** With `incremental`: what each selected tenant plans. */
  readonly scopes?: ReadonlyMap<string, TenantScope>;
  /**
   * With `checkUncommitted`: true when the desired state read is exactly `source.commit` (always,
   * with a ref). A run from a working tree with uncommitted desired-state edits must not record
   * HEAD as applied: a later incremental run would not see those edits undone.
   */
  readonly committed?: boolean;
  /** With `shard`: the tenants it selected, of how many. */
  readonly shard?: ShardSelection;
  /** With `targets` or `excludes`: what was selected. */
  readonly targeting?: RunTargeting;
}

export interface RunTargeting {
  /** `Targeted run: 2 of 180 contracts (--target acme/4711 ...).` */
  readonly description: string;
  /** Tenants planned with some of their contracts left out: their run record keeps its commit. */
  readonly narrowed: ReadonlySet<string>;
  /** Targets that match no declared contract: the run is refused. */
  readonly unmatchedTargets: readonly string[];
  readonly unmatchedExcludes: readonly string[];
}

/** No tenant can be planned incrementally: why, one note per tenant planned in full. */
export interface InFullPlan {
  readonly kind: 'in-full';
  readonly notes: readonly string[];
}

export type RunInputResult =
  | { readonly kind: 'ready'; readonly input: RunInput }
  | InFullPlan
  | { readonly kind: 'invalid-config'; readonly repoDir: string; readonly configFile: string; readonly diagnostics: readonly Diagnostic[] }
  | { readonly kind: 'git-error'; readonly code: GitErrorCode; readonly message: string };

function selectTouched(touched: PlanTouched, tenants: readonly string[] | undefined): PlanTouched {
  if (tenants === undefined) return touched;
  return {
    contracts: new Map([...touched.contracts].filter(([tenant]) => tenants.includes(tenant))),
    noLongerManaged: touched.noLongerManaged.filter((contract) => tenants.includes(contract.tenant)),
  };
}

function requireRepository(repository: GitRepository | undefined, repo: string, flag: string): GitRepository {
  if (!repository) throw new GitError('not-a-repository', `${flag} needs a git repository: ${repo} is not inside a git work tree`);
  return repository;
}

async function resolveRef(repository: GitRepository, ref: string): Promise<string> {
  checkRefSyntax(ref, '--ref');
  const commit = await resolveCommit(repository, ref);
  if (commit !== undefined) return commit;
  throw new GitError('unknown-ref', missingRefMessage('--ref', ref, { shallow: await isShallow(repository), remotes: await remoteNames(repository) }));
}

/** What every run reads first: the repository, the ref, the config and the tenants it selects. */
interface RunStart {
  readonly repoDir: string;
  readonly repository: GitRepository | undefined;
  readonly at: ConfigAtRef | undefined;
  readonly baseRepository: GitRepository | undefined;
  readonly configFile: string;
  readonly config: Config;
  readonly diagnostics: readonly Diagnostic[];
  readonly source: DesiredSource;
  /** Without --ref the desired state may hold uncommitted edits; HEAD is still the best name for it. */
  readonly head: string | null;
  readonly sharded: ShardSelection | undefined;
  /** Undefined: every tenant. */
  readonly selected: readonly string[] | undefined;
}

/** `run` with the repository (when the run needs git), whose git processes end with it. */
async function withRepository<T>(io: CliIo, options: RunInputOptions, needsGit: boolean, run: (repository: GitRepository | undefined) => Promise<T>): Promise<T> {
  const repository = needsGit ? await openGitRepository(path.resolve(io.cwd, options.repo)) : undefined;
  try {
    return await run(repository);
  } finally {
    if (repository) closeGitRepository(repository);
  }
}

async function startRun(io: CliIo, options: RunInputOptions, repository: GitRepository | undefined): Promise<RunStart | Extract<RunInputResult, { readonly kind: 'invalid-config' }>> {
  const repoDir = path.resolve(io.cwd, options.repo);
  const { ref, base } = options;
  let at: ConfigAtRef | undefined;
  if (ref !== undefined) {
    const atRepository = requireRepository(repository, options.repo, '--ref');
    at = { repository: atRepository, commit: await resolveRef(atRepository, ref), ref };
  }
  // Checked before anything is read: a missing repository is the user's first problem to solve.
  const baseRepository = base === undefined ? undefined : requireRepository(repository, options.repo, '--base');

  const { configFile, config, diagnostics } = await readRepoConfig(io, options, at);
  if (!config) return { kind: 'invalid-config', repoDir, configFile, diagnostics };
  const named = selectTenants(config, options);
  const source = at ? gitCommitSource(at.repository, at.commit) : workingTreeSource(repoDir);
  const head = at?.commit ?? (repository ? ((await resolveCommit(repository, 'HEAD')) ?? null) : null);
  const sharded = options.shard === undefined ? undefined : selectShard(named.length === 0 ? Object.keys(config.tenants).sort() : [...new Set(named)], options.shard);
  const selected = sharded?.tenants ?? (named.length === 0 ? undefined : named);
  return { repoDir, repository, at, baseRepository, configFile, config, diagnostics, source, head, sharded, selected };
}

function load(io: CliIo, options: RunInputOptions): Promise<RunInputResult> {
  const incremental = options.incremental === true || options.incrementalPlan === true;
  const needsGit = options.ref !== undefined || options.base !== undefined || incremental || options.checkUncommitted === true || options.withoutHead !== true;
  return withRepository(io, options, needsGit, (repository) => loadWith(io, options, repository));
}

async function loadWith(io: CliIo, options: RunInputOptions, gitRepository: GitRepository | undefined): Promise<RunInputResult> {
  const { ref, base } = options;
  const incremental = options.incremental === true || options.incrementalPlan === true;
  const started = await startRun(io, options, gitRepository);
  if ('kind' in started) return started;
  const { repoDir, repository, at, baseRepository, configFile, config, diagnostics, source, head, sharded, selected } = started;
  const tenants = selected ?? Object.keys(config.tenants).sort();
  const targetOptions = { targets: options.targets ?? [], excludes: options.excludes ?? [] };
  const targeted = isTargeted(targetOptions);
  const scopes =
    incremental && !targeted && repository && head !== null
      ? await incrementalScopes(io, repository, config, repoDir, tenants, { commit: head, workingTree: !at, anyHistory: options.incrementalPlan === true })
      : undefined;
  if (options.incrementalPlan && options.inFullSignal && (scopes === undefined || !hasIncremental(scopes))) {
    return { kind: 'in-full', notes: [...(scopes?.values() ?? [])].flatMap((scope) => (scope.kind === 'full' ? [`${scope.tenant}: every contract planned (${scope.reason})`] : [])) };
  }
  const readBase = base === undefined || !baseRepository ? undefined : () => readBaseChanges(baseRepository, { base, head: at?.commit ?? null, headName: ref ?? 'HEAD', patterns: config.desired.paths });
  // An incremental run with a base reads the files of the change from the base too, so that its
  // marks are a full plan's. A base git cannot compare with is reported after the desired state's
  // errors, as without incremental runs.
  const early = readBase && scopes && hasIncremental(scopes) ? settle(readBase()) : undefined;
  const earlyBase = early ? await early : undefined;
  const only = scopes ? scopeFiles(scopes, earlyBase?.ok ? earlyBase.value.changedPaths : undefined) : undefined;
  const desired = await loadDesiredState(repoDir, config, { source, ...(only ? { only } : {}) });
  const chosen = selected === undefined ? desired.contractSets : desired.contractSets.filter((set) => selected.includes(set.tenant));
  let changes: BaseChanges | undefined;
  if (readBase && desired.errors.length === 0) {
    if (earlyBase && !earlyBase.ok) throw earlyBase.error;
    changes = earlyBase?.value ?? (await readBase());
  }
  const touched = changes ? findTouchedContracts(desired.contractSets, changes.baseContractSets, changes.changedPaths) : undefined;
  let contractSets = chosen;
  if (scopes && repository) {
    const before = await declaredBefore(repository, config, scopes, changes);
    contractSets = narrowToChangedContracts(narrowToScopes(chosen, scopes, changes?.changedPaths), scopes, before, touched?.contracts);
  }
  let targeting: RunTargeting | undefined;
  // With errors nothing is planned, and a target may be the very contract left out for its error.
  if (targeted && desired.errors.length === 0) {
    const selection = selectTargets(contractSets, targetOptions);
    if (selection.kind === 'unmatched') {
      targeting = { description: '', narrowed: new Set(), unmatchedTargets: selection.unmatched, unmatchedExcludes: [] };
    } else {
      contractSets = [...selection.contractSets];
      targeting = { description: selection.description, narrowed: selection.narrowed, unmatchedTargets: [], unmatchedExcludes: selection.unmatchedExcludes };
    }
  }
  const incrementalSource = options.incrementalPlan && scopes ? planIncremental(scopes) : undefined;
  const planSource: PlanSource = { repo: options.repo, ref: ref ?? null, commit: head, ...(incrementalSource ? { incremental: incrementalSource } : {}) };
  const committed = options.checkUncommitted ? at !== undefined || (repository !== undefined && head !== null && !(await hasUncommittedDesiredFiles(repository, head, config))) : undefined;
  const input = {
    repoDir,
    configFile,
    config,
    configDiagnostics: diagnostics,
    desired,
    contractSets,
    ...(scopes ? { scopes } : {}),
    ...(committed === undefined ? {} : { committed }),
    ...(sharded ? { shard: sharded } : {}),
    ...(targeting ? { targeting } : {}),
  };
  if (!changes || !touched) return { kind: 'ready', input: { ...input, source: planSource } };
  return { kind: 'ready', input: { ...input, source: { ...planSource, base: changes.base }, touched: selectTouched(touched, selected) } };
}

/**
 * The tenants a run selects: `--tenant` (default: all), or without it the tenants of the targets.
 * Each must be configured; with `--tenant`, a target of another tenant is a usage error.
 */
function selectTenants(config: Config, options: RunInputOptions): string[] {
  function known(): string {
    return Object.keys(config.tenants).join(', ') || 'none';
  }
  const selected = options.tenants ?? [];
  for (const tenant of selected) {
    if (!Object.hasOwn(config.tenants, tenant)) throw new UsageError(`--tenant "${tenant}" is not configured (known: ${known()})`);
  }
  for (const [flag, patterns] of [['--target', options.targets ?? []], ['--exclude', options.excludes ?? []]] as const) {
    for (const pattern of patterns) {
      if (!Object.hasOwn(config.tenants, pattern.tenant)) throw new UsageError(`${flag} ${pattern.raw}: tenant "${pattern.tenant}" is not configured (known: ${known()})`);
    }
  }
  const targets = options.targets ?? [];
  if (selected.length > 0) {
    const outside = targets.find((target) => !selected.includes(target.tenant));
    if (outside) throw new UsageError(`--target ${outside.raw} names tenant "${outside.tenant}", which --tenant does not select (a target selects its tenant: --tenant is not needed)`);
    return [...selected];
  }
  return [...new Set(targets.map((target) => target.tenant))];
}

/** Every tenant's scope, or undefined (plan everything) when the state store cannot be opened here. */
async function incrementalScopes(io: CliIo, repository: GitRepository, config: Config, repoDir: string, tenants: readonly string[], head: ScopeHead): Promise<Map<string, TenantScope> | undefined> {
  const store = await openStateStore(config, repoDir, io);
  // The command opens the store again and reports why it cannot.
  if (typeof store === 'string') return undefined;
  try {
    return await readTenantScopes(repository, store, config, tenants, head);
  } finally {
    await store.close();
  }
}

/** The files to read: undefined (all) as soon as one tenant is planned in full; `also`, a base's changed files. */
function scopeFiles(scopes: ReadonlyMap<string, TenantScope>, also: ReadonlySet<string> = new Set()): ReadonlySet<string> | undefined {
  const files = new Set<string>(also);
  for (const scope of scopes.values()) {
    if (scope.kind === 'full') return undefined;
    if (scope.kind === 'incremental') for (const file of scope.files) files.add(file);
  }
  return files;
}

function hasIncremental(scopes: ReadonlyMap<string, TenantScope>): boolean {
  return [...scopes.values()].some((scope) => scope.kind === 'incremental');
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown; readonly value?: undefined };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/**
 * By last applied commit, the contract sets its incremental tenants' files declared then: what
 * narrowToChangedContracts compares with. Only those files are read, one reading per commit
 * (tenants that applied the same commit, the usual case, share it). A pull request's merge base is
 * often that commit: the files its change read there are not read and parsed again.
 */
async function declaredBefore(repository: GitRepository, config: Config, scopes: ReadonlyMap<string, TenantScope>, base: BaseChanges | undefined): Promise<Map<string, ContractSet[]>> {
  const filesByCommit = new Map<string, Set<string>>();
  for (const scope of scopes.values()) {
    if (scope.kind !== 'incremental') continue;
    const files = filesByCommit.get(scope.since) ?? new Set<string>();
    for (const file of scope.files) files.add(file);
    filesByCommit.set(scope.since, files);
  }
  const before = new Map<string, ContractSet[]>();
  for (const [commit, files] of filesByCommit) {
    const known = base?.base.mergeBase === commit ? base : undefined;
    const reused = known ? known.baseContractSets.filter((set) => files.has(set.file)) : [];
    const toRead = new Set([...files].filter((file) => !known?.changedPaths.has(file)));
    const read = toRead.size === 0 ? [] : await gitCommitSource(repository, commit).readFiles(config.desired.paths, { only: toRead });
    before.set(commit, [...reused, ...read.flatMap((file) => parseDesiredFile(file).contractSet ?? [])]);
  }
  return before;
}

/** What the plan document says of an incremental plan; undefined when no tenant was planned incrementally. */
function planIncremental(scopes: ReadonlyMap<string, TenantScope>): PlanIncremental | undefined {
  if (!hasIncremental(scopes)) return undefined;
  const values = [...scopes.values()];
  return {
    tenants: values.flatMap((scope) => (scope.kind === 'incremental' ? [{ tenant: scope.tenant, since: scope.since, pending: scope.pending }] : [])),
    full: values.flatMap((scope) => (scope.kind === 'full' ? [{ tenant: scope.tenant, reason: scope.reason }] : [])),
  };
}

async function hasUncommittedDesiredFiles(repository: GitRepository, head: string, config: Config): Promise<boolean> {
  const selected = desiredPathMatcher(config.desired.paths);
  return (await changedFiles(repository, head, null)).some((file) => selected(file.path));
}

/**
 * Reads the config and the desired state for a run. Git problems (not a repository, a ref this
 * clone lacks, a base too shallow to compare with) come back as `git-error` with a message that
 * says how to fix them; a mistaken `--tenant` throws a UsageError.
 */
export async function loadRunInput(io: CliIo, options: RunInputOptions): Promise<Exclude<RunInputResult, InFullPlan>> {
  const loaded = await loadOrGitError(io, { ...options, inFullSignal: false });
  if (loaded.kind === 'in-full') throw new TypeError('unreachable: in-full is answered only when asked for');
  return loaded;
}

async function loadOrGitError(io: CliIo, options: RunInputOptions): Promise<RunInputResult> {
  try {
    return await load(io, options);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  }
}

/**
 * loadRunInput for a command: every problem (git, config, desired state) printed to stderr, where
 * it cannot end up in a pull-request comment, and the exit code returned instead of the input.
 * `outcome` says what did not happen, e.g. "no plan written".
 */
export async function loadRunInputOrReport(io: CliIo, command: string, options: RunInputOptions, outcome: string): Promise<RunInput | ExitCode> {
  return reportLoaded(io, command, options, outcome, await loadRunInput(io, options));
}

/**
 * plan's reading: incremental where a tenant can be; `in-full` when none can, before any
 * desired-state file is read, so that the caller plans one tenant at a time instead.
 */
export async function loadPlanInputOrReport(io: CliIo, options: RunInputOptions, outcome: string): Promise<RunInput | ExitCode | InFullPlan> {
  const loaded = await loadOrGitError(io, { ...options, incrementalPlan: true, inFullSignal: true });
  if (loaded.kind === 'in-full') return loaded;
  return reportLoaded(io, 'plan', { ...options, incrementalPlan: true }, outcome, loaded);
}

/** A run that could not be read (git, the config), said on stderr: the exit code. */
export function reportUnread(io: CliIo, command: string, outcome: string, unread: Extract<RunInputResult, { readonly kind: 'git-error' | 'invalid-config' }>): ExitCode {
  if (unread.kind === 'git-error') {
    io.stderr.write(`contract-sync ${command}: ${unread.message}\n`);
  } else {
    io.stderr.write(formatDiagnostics(unread.diagnostics, 'text'));
    io.stderr.write(`invalid config: ${outcome}\n`);
  }
  return EXIT.error;
}

/** What a run read of the desired state and its targets, as reportDesired says it. */
export interface DesiredProblems {
  readonly configDiagnostics: readonly Diagnostic[];
  readonly errors: readonly Diagnostic[];
  readonly warnings: readonly Diagnostic[];
  /** A base git could not compare with: said after the desired state's errors, before its warnings. */
  readonly baseError?: GitError;
  readonly targeting?: { readonly unmatchedTargets: readonly string[]; readonly unmatchedExcludes: readonly string[] };
}

/**
 * The desired state's errors and warnings and the targets' problems, said on stderr where they
 * cannot end up in a pull-request comment: the exit code when the run must stop, else undefined.
 */
export function reportDesired(io: CliIo, command: string, outcome: string, problems: DesiredProblems): ExitCode | undefined {
  const { configDiagnostics, errors, warnings, baseError, targeting } = problems;
  if (errors.length > 0) {
    io.stderr.write(formatDiagnostics([...configDiagnostics, ...errors, ...warnings], 'text'));
    io.stderr.write(`${plural(errors.length, 'error')} in the desired state: ${outcome}\n`);
    return EXIT.error;
  }
  if (baseError) {
    io.stderr.write(`contract-sync ${command}: ${baseError.message}\n`);
    return EXIT.error;
  }
  if (configDiagnostics.length + warnings.length > 0) io.stderr.write(formatDiagnostics([...configDiagnostics, ...warnings], 'text'));
  if (targeting && targeting.unmatchedTargets.length > 0) {
    for (const target of targeting.unmatchedTargets) io.stderr.write(`contract-sync ${command}: --target ${target} matches no contract declared in the desired state\n`);
    io.stderr.write(`${targeting.unmatchedTargets.length === 1 ? '1 target matches' : `${targeting.unmatchedTargets.length} targets match`} no contract: ${outcome}\n`);
    return EXIT.error;
  }
  for (const exclude of targeting?.unmatchedExcludes ?? []) io.stderr.write(`contract-sync ${command}: warning: --exclude ${exclude} matches no contract\n`);
  return undefined;
}

function reportLoaded(io: CliIo, command: string, options: RunInputOptions, outcome: string, loaded: Exclude<RunInputResult, InFullPlan>): RunInput | ExitCode {
  if (loaded.kind !== 'ready') return reportUnread(io, command, outcome, loaded);
  const { configDiagnostics, desired, targeting } = loaded.input;
  const stop = reportDesired(io, command, outcome, { configDiagnostics, errors: desired.errors, warnings: desired.warnings, ...(targeting ? { targeting } : {}) });
  if (stop !== undefined) return stop;
  // With one tenant planned incrementally, the plan itself says which were planned in full and why.
  const { scopes } = loaded.input;
  if (options.incrementalPlan && scopes && !hasIncremental(scopes)) {
    for (const scope of scopes.values()) if (scope.kind === 'full') io.stderr.write(`contract-sync ${command}: ${scope.tenant}: every contract planned (${scope.reason})\n`);
  }
  return loaded.input;
}

/**
 * What a run that validates and plans one tenant at a time reads up front (plan against the state
 * store, validate): the config, the raw desired-state files, the selection and, with a base, what
 * the change did; nothing is parsed or validated yet (engine/desired/by-tenant.ts does, per tenant).
 */
export interface RunFiles {
  readonly repoDir: string;
  readonly configFile: string;
  readonly config: Config;
  readonly configDiagnostics: readonly Diagnostic[];
  /** Every desired-state file, unparsed. */
  readonly files: readonly DesiredFile[];
  /** The tenants to plan; undefined: every tenant. */
  readonly tenants?: readonly string[];
  readonly targets: TargetOptions;
  readonly shard?: ShardSelection;
  readonly source: PlanSource;
  readonly base?: BaseInput;
  /**
   * The base could not be compared with; reported after the desired state's errors, which a run
   * reading everything at once reports first (it compares with the base only without errors).
   */
  readonly baseError?: GitError;
}

export type RunFilesResult =
  | { readonly kind: 'ready'; readonly input: RunFiles }
  | Exclude<RunInputResult, { readonly kind: 'ready' } | InFullPlan>;

function loadFiles(io: CliIo, options: RunInputOptions): Promise<RunFilesResult> {
  const needsGit = options.ref !== undefined || options.base !== undefined || options.withoutHead !== true;
  return withRepository(io, options, needsGit, (repository) => loadFilesWith(io, options, repository));
}

async function loadFilesWith(io: CliIo, options: RunInputOptions, repository: GitRepository | undefined): Promise<RunFilesResult> {
  const { ref, base } = options;
  const started = await startRun(io, options, repository);
  if ('kind' in started) return started;
  const { repoDir, at, baseRepository, configFile, config, diagnostics, source, head, sharded, selected } = started;
  const files = await source.readFiles(config.desired.paths);
  const input = {
    repoDir,
    configFile,
    config,
    configDiagnostics: diagnostics,
    files,
    ...(selected ? { tenants: selected } : {}),
    targets: { targets: options.targets ?? [], excludes: options.excludes ?? [] },
    ...(sharded ? { shard: sharded } : {}),
  };
  const planSource: PlanSource = { repo: options.repo, ref: ref ?? null, commit: head };
  if (base === undefined || !baseRepository) return { kind: 'ready', input: { ...input, source: planSource } };
  try {
    const changes = await readBaseChanges(baseRepository, { base, head: at?.commit ?? null, headName: ref ?? 'HEAD', patterns: config.desired.paths });
    return { kind: 'ready', input: { ...input, source: { ...planSource, base: changes.base }, base: changes } };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'ready', input: { ...input, source: planSource, baseError: error } };
  }
}

/** loadRunInput for a run one tenant at a time: the same reading and checks, no parsing. */
export async function loadRunFiles(io: CliIo, options: RunInputOptions): Promise<RunFilesResult> {
  try {
    return await loadFiles(io, options);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  }
}
