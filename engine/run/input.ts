/**
 * Everything a run reads before it plans: the repository, the ref, the config, the tenants it
 * selects and, per kind of run, the desired state (whole, or its raw files for a run one tenant at a
 * time), the incremental scopes and, with a base, what the change touched. A run opens its input
 * once (openRunInput) and reads from it what its kind needs; nothing is read twice.
 */
import path from 'node:path';
import { narrowToChangedContracts, narrowToScopes, type TenantScope } from '../apply/incremental.ts';
import type { Config } from '../config/types.ts';
import { loadDesiredState } from '../desired/load.ts';
import { parseDesiredFile } from '../desired/parse-file.ts';
import { desiredPathMatcher, workingTreeSource, type DesiredSource } from '../desired/read-files.ts';
import { selectShard, type ShardSelection } from '../desired/shard.ts';
import { isTargeted, type TargetOptions } from '../desired/target.ts';
import type { ContractSet, DesiredFileList, DesiredStateResult } from '../desired/types.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { changedFiles } from '../git/changed-files.ts';
import { GitError } from '../git/errors.ts';
import { missingRefMessage } from '../git/fetch-hint.ts';
import { closeGitRepository, openGitRepository, type GitRepository } from '../git/repository.ts';
import { checkRefSyntax, isShallow, remoteNames, resolveCommit } from '../git/resolve-ref.ts';
import { ScopeTally, type BaseInput } from '../plan/scope.ts';
import type { PlanIncremental, PlanSource, PlanTouched } from '../plan/types.ts';
import type { StateStore } from '../state/types.ts';
import { readBaseChanges, type BaseChanges } from './base-changes.ts';
import { readRepoConfig, type ConfigAtRef } from './config.ts';
import type { CompiledPolicies } from '../policy/types.ts';
import { gitCommitSource } from './git-source.ts';
import { readTenantScopes } from './incremental-scopes.ts';
import { lazyStore, type LazyStore } from './lazy-store.ts';
import type { RunInvalid, RunPlace, RunSelection, RunTargeting, RunUnread, RunWhere } from './types.ts';

/** The kinds of run that read a repository, and what each reads of it. */
export type InputKind = 'validate' | 'plan' | 'apply' | 'drift' | 'import';

/** A run's input, opened: the repository (its git processes end with close()), the config, the selection. */
export interface OpenedInput {
  readonly where: RunWhere;
  readonly selection: RunSelection;
  readonly repoDir: string;
  readonly repository: GitRepository | undefined;
  /** With --ref: the commit the desired state and the config are read at. */
  readonly at: ConfigAtRef | undefined;
  readonly configFile: string;
  readonly config: Config;
  /** The config's rules, compiled as it was read. */
  readonly policies: CompiledPolicies;
  /** The config's warnings (a config with errors does not open). */
  readonly configDiagnostics: readonly Diagnostic[];
  readonly desiredSource: DesiredSource;
  /** Without --ref the desired state may hold uncommitted edits; HEAD is still the best name for it. */
  readonly head: string | null;
  readonly shard: ShardSelection | undefined;
  /** The tenants selected; undefined: every tenant. */
  readonly selected: readonly string[] | undefined;
  readonly targets: TargetOptions;
  close(): void;
}

/** The whole desired state of a run, validated, narrowed to what it plans. */
export interface RunInput {
  readonly repoDir: string;
  readonly configFile: string;
  readonly config: Config;
  /** The config's rules, compiled as it was read: the check stage evaluates them. */
  readonly policies: CompiledPolicies;
  readonly configDiagnostics: readonly Diagnostic[];
  /** The whole desired state as validated, every tenant: with errors, nothing may be planned or applied. */
  readonly desired: DesiredStateResult;
  /** The valid contract sets of the selected tenants, narrowed to the incremental scopes and the targets. */
  readonly contractSets: readonly ContractSet[];
  /** Where the desired state was read (and, with a base, what it was compared with), for the plan document. */
  readonly source: PlanSource;
  /** With a base and a desired state without errors: what the change touched, selected tenants only. */
  readonly touched?: PlanTouched;
  /** Incremental runs: what each selected tenant plans. */
  readonly scopes?: ReadonlyMap<string, TenantScope>;
  /**
   * Runs that record (apply, drift --fix): true when the desired state read is exactly
   * `source.commit` (always, with a ref). A run from a working tree with uncommitted desired-state
   * edits must not record HEAD as applied: a later incremental run would not see those edits undone.
   */
  readonly committed?: boolean;
  readonly shard?: ShardSelection;
  /** With targets or excludes: what was selected. */
  readonly targeting?: RunTargeting;
}

export type { RunTargeting };

/**
 * What a run that validates and plans one tenant at a time reads up front (plan against the state
 * store, validate): the desired-state files listed (their contents are read tenant by tenant, by
 * engine/desired/by-tenant.ts, which parses and validates them) and, with a base, what the change did.
 */
export interface RunFiles {
  readonly files: DesiredFileList;
  readonly source: PlanSource;
  readonly base?: BaseInput;
  /**
   * The base could not be compared with; reported after the desired state's errors, which a run
   * reading everything at once reports first (it compares with the base only without errors).
   */
  readonly baseError?: GitError;
}

/**
 * Runs `body` on the run's input, opened once, and its state store (opened when first asked for),
 * both closed when it ends; git problems on the way come back as `git-error`.
 */
export async function withRunInput<T>(
  effects: RunPlace,
  kind: InputKind,
  request: { readonly where: RunWhere; readonly selection?: RunSelection; readonly base?: string },
  body: (input: OpenedInput, store: LazyStore) => Promise<T>,
): Promise<T | RunUnread> {
  const opened = await openRunInput(effects, kind, request.where, request.selection ?? {}, request.base);
  if ('kind' in opened) return opened;
  const store = lazyStore(opened.config, opened.repoDir, effects);
  try {
    return await body(opened, store);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  } finally {
    opened.close();
    await store.close();
  }
}

/** How a run's scopes are computed: an apply descends from the last applied commit, a plan may start from any. */
export type ScopeHistory = 'ancestor' | 'any';

/** Opens a run's input, or says why it cannot be read. Git problems come back as `git-error`. */
export async function openRunInput(
  place: RunPlace,
  kind: InputKind,
  where: RunWhere,
  selection: RunSelection = {},
  base?: string,
): Promise<OpenedInput | RunUnread> {
  // validate without a ref asks git nothing (source.commit is null): start-up spares the git adapter.
  if (selection.shard === 'auto' && kind !== 'apply' && kind !== 'drift')
    return {
      kind: 'bad-request',
      message: `--shard auto shares a run that sends between workers (apply, drift --fix); ${kind} sends nothing: use --shard I/N`,
    };
  const needsGit = kind !== 'validate' || where.ref !== undefined;
  const repoDir = path.resolve(place.cwd, where.repo);
  let repository: GitRepository | undefined;
  try {
    repository = needsGit ? await openGitRepository(repoDir) : undefined;
    const opened = await openWith(place, where, selection, base, repoDir, repository);
    if (opened.kind !== 'opened' && repository) closeGitRepository(repository);
    return opened.kind === 'opened' ? opened.input : opened;
  } catch (error) {
    if (repository) closeGitRepository(repository);
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  }
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

async function openWith(
  place: RunPlace,
  where: RunWhere,
  selection: RunSelection,
  base: string | undefined,
  repoDir: string,
  repository: GitRepository | undefined,
): Promise<{ readonly kind: 'opened'; readonly input: OpenedInput } | RunUnread> {
  let at: ConfigAtRef | undefined;
  if (where.ref !== undefined) {
    const atRepository = requireRepository(repository, where.repo, '--ref');
    at = { repository: atRepository, commit: await resolveRef(atRepository, where.ref), ref: where.ref };
  }
  // Checked before anything is read: a missing repository is the user's first problem to solve.
  if (base !== undefined) requireRepository(repository, where.repo, '--base');

  const { configFile, config, policies, diagnostics } = await readRepoConfig(place, where, at);
  if (!config || !policies) return { kind: 'invalid-config', repoDir, configFile, diagnostics };
  const named = selectTenants(config, selection);
  if (typeof named === 'string') return { kind: 'bad-request', message: named };
  const desiredSource = at ? gitCommitSource(at.repository, at.commit) : workingTreeSource(repoDir);
  const head = at?.commit ?? (repository ? ((await resolveCommit(repository, 'HEAD')) ?? null) : null);
  const shard =
    selection.shard === undefined || selection.shard === 'auto'
      ? undefined
      : selectShard(named.length === 0 ? Object.keys(config.tenants).sort() : [...new Set(named)], selection.shard);
  const selected = shard?.tenants ?? (named.length === 0 ? undefined : named);
  return {
    kind: 'opened',
    input: {
      where,
      selection,
      repoDir,
      repository,
      at,
      configFile,
      config,
      policies,
      configDiagnostics: diagnostics,
      desiredSource,
      head,
      shard,
      selected,
      targets: { targets: selection.targets ?? [], excludes: selection.excludes ?? [] },
      close() {
        if (repository) closeGitRepository(repository);
      },
    },
  };
}

/**
 * The tenants a run selects: `--tenant` (default: all), or without it the tenants of the targets.
 * Each must be configured; with `--tenant`, a target of another tenant is a mistake: its message.
 */
function selectTenants(config: Config, selection: RunSelection): string[] | string {
  function known(): string {
    return Object.keys(config.tenants).join(', ') || 'none';
  }
  const selected = selection.tenants ?? [];
  for (const tenant of selected) {
    if (!Object.hasOwn(config.tenants, tenant)) return `--tenant "${tenant}" is not configured (known: ${known()})`;
  }
  for (const [flag, patterns] of [
    ['--target', selection.targets ?? []],
    ['--exclude', selection.excludes ?? []],
  ] as const) {
    for (const pattern of patterns) {
      if (!Object.hasOwn(config.tenants, pattern.tenant)) return `${flag} ${pattern.raw}: tenant "${pattern.tenant}" is not configured (known: ${known()})`;
    }
  }
  const targets = selection.targets ?? [];
  if (selected.length > 0) {
    const outside = targets.find((target) => !selected.includes(target.tenant));
    if (outside)
      return `--target ${outside.raw} names tenant "${outside.tenant}", which --tenant does not select (a target selects its tenant: --tenant is not needed)`;
    return [...selected];
  }
  return [...new Set(targets.map((target) => target.tenant))];
}

/** Every selected tenant's name. */
export function selectedTenants(input: OpenedInput): readonly string[] {
  return input.selected ?? Object.keys(input.config.tenants).sort();
}

/**
 * Every selected tenant's incremental scope, or undefined (every contract planned) when the run is
 * targeted, outside git, or has no state store to read run records from (`store` a message: the
 * run reports it where it reads known state).
 */
export async function readScopes(input: OpenedInput, store: StateStore | string, history: ScopeHistory): Promise<ReadonlyMap<string, TenantScope> | undefined> {
  const { repository, head } = input;
  if (isTargeted(input.targets) || !repository || head === null || typeof store === 'string') return undefined;
  return readTenantScopes(repository, store, input.config, selectedTenants(input), { commit: head, workingTree: !input.at, anyHistory: history === 'any' });
}

export function hasIncremental(scopes: ReadonlyMap<string, TenantScope> | undefined): boolean {
  return scopes !== undefined && [...scopes.values()].some((scope) => scope.kind === 'incremental');
}

/** What the whole reading is asked for: the scopes, a base to compare with, and whether the run records a commit. */
export interface WholeReading {
  readonly scopes?: ReadonlyMap<string, TenantScope>;
  /** A plan says how it was planned incrementally (source.incremental); an apply's scopes say it themselves. */
  readonly describeIncremental: boolean;
  readonly base?: string;
  /** The run records a commit (apply, drift --fix): find out whether the desired state is exactly that commit. */
  readonly records: boolean;
}

/** Reads, validates and narrows the whole desired state. */
export async function readWholeInput(input: OpenedInput, reading: WholeReading): Promise<RunInput> {
  const { repoDir, repository, at, config, policies, configDiagnostics, configFile, desiredSource, head, shard, selected, where, targets } = input;
  const { scopes, base } = reading;
  const readBase =
    base === undefined || !repository
      ? undefined
      : () => readBaseChanges(repository, { base, head: at?.commit ?? null, headName: where.ref ?? 'HEAD', patterns: config.desired.paths });
  // An incremental run with a base reads the files of the change from the base too, so that its
  // marks are a full plan's. A base git cannot compare with is reported after the desired state's
  // errors, as without incremental runs.
  const early = readBase && hasIncremental(scopes) ? settle(readBase()) : undefined;
  const earlyBase = early ? await early : undefined;
  const only = scopes ? scopeFiles(scopes, earlyBase?.ok ? earlyBase.value.changedPaths : undefined) : undefined;
  const desired = await loadDesiredState(repoDir, config, { source: desiredSource, ...(only ? { only } : {}) });
  const chosen = selected === undefined ? desired.contractSets : desired.contractSets.filter((set) => selected.includes(set.tenant));
  let changes: BaseChanges | undefined;
  if (readBase && desired.errors.length === 0) {
    if (earlyBase && !earlyBase.ok) throw earlyBase.error;
    changes = earlyBase?.value ?? (await readBase());
  }
  // The scope stage, tenant by tenant. With errors nothing is planned, and a target may be the very
  // contract left out for its error: targets are not looked for.
  const scope = new ScopeTally({ ...(changes ? { base: changes } : {}), ...(desired.errors.length === 0 ? { targets } : {}) });
  let contractSets = scope.scopeAll(chosen);
  scope.finish(selected === undefined ? undefined : new Set(selected));
  const touched = scope.touched();
  if (scopes && repository) {
    // Incremental runs are never targeted (readScopes): the scope stage kept every contract.
    const before = await declaredBefore(repository, config, scopes, changes);
    contractSets = narrowToChangedContracts(narrowToScopes(contractSets, scopes, changes?.changedPaths), scopes, before, touched?.contracts);
  }
  const targeting = scope.targeting();
  const incrementalSource = reading.describeIncremental && scopes ? planIncremental(scopes) : undefined;
  const planSource: PlanSource = { repo: where.repo, ref: where.ref ?? null, commit: head, ...(incrementalSource ? { incremental: incrementalSource } : {}) };
  const committed = reading.records ? await readsCommit(input) : undefined;
  const whole = {
    repoDir,
    configFile,
    config,
    policies,
    configDiagnostics,
    desired,
    contractSets,
    ...(scopes ? { scopes } : {}),
    ...(committed === undefined ? {} : { committed }),
    ...(shard ? { shard } : {}),
    ...(targeting ? { targeting } : {}),
  };
  if (!changes || !touched) return { ...whole, source: planSource };
  return { ...whole, source: { ...planSource, base: changes.base }, touched };
}

/**
 * Whether the desired state read is exactly a commit's: always with a ref; from a working tree
 * when no desired-state file differs from HEAD.
 */
export async function readsCommit(input: OpenedInput): Promise<boolean> {
  const { at, repository, head, config } = input;
  return at !== undefined || (repository !== undefined && head !== null && !(await hasUncommittedDesiredFiles(repository, head, config)));
}

/** Whether a reading with these scopes reads every desired-state file (no scopes, or a tenant planned in full). */
export function readsEveryFile(scopes: ReadonlyMap<string, TenantScope> | undefined): boolean {
  return scopes === undefined || scopeFiles(scopes) === undefined;
}

/**
 * One tenant's input, read from its own files (`files`, the tenant's whole part of the desired state
 * at the run's commit) and narrowed to its scope: for a worker of a shared run whose first worker
 * read and validated the whole desired state (engine/run/apply.ts). Checks across files are per
 * tenant, so the tenant's files alone validate as they did with every other file.
 */
export async function readTenantInput(
  opened: OpenedInput,
  tenant: string,
  files: readonly string[],
  scopes: ReadonlyMap<string, TenantScope> | undefined,
): Promise<RunInput> {
  const own = new Set(files);
  const desiredSource: DesiredSource = {
    readFiles: (patterns, options = {}) =>
      opened.desiredSource.readFiles(patterns, { ...options, only: options.only ? new Set([...options.only].filter((file) => own.has(file))) : own }),
    async listFiles(patterns, options) {
      const list = await opened.desiredSource.listFiles(patterns, options);
      return { paths: list.paths.filter((file) => own.has(file)), read: (paths) => list.read(paths) };
    },
  };
  const scope = scopes?.get(tenant);
  const reading = { ...(scopes ? { scopes: new Map(scope === undefined ? [] : [[tenant, scope]]) } : {}), describeIncremental: false, records: false };
  const input = await readWholeInput({ ...opened, desiredSource, selected: [tenant] }, reading);
  return { ...input, committed: true };
}

/** The desired state's problems, when they keep it from being planned. */
export function desiredProblems(input: RunInput): RunInvalid | undefined {
  const { configDiagnostics, desired, targeting } = input;
  const problems = { configDiagnostics, errors: desired.errors, warnings: desired.warnings, ...(targeting ? { targeting } : {}) };
  return desired.errors.length > 0 || (targeting?.unmatchedTargets.length ?? 0) > 0 ? { kind: 'invalid-desired', problems } : undefined;
}

/** Lists the desired-state files (and, with a base, reads what the change did) for a run one tenant at a time. */
export async function readRunFiles(input: OpenedInput, base?: string): Promise<RunFiles> {
  const { repository, at, config, desiredSource, head, where } = input;
  const files = await desiredSource.listFiles(config.desired.paths);
  const source: PlanSource = { repo: where.repo, ref: where.ref ?? null, commit: head };
  if (base === undefined || !repository) return { files, source };
  try {
    const changes = await readBaseChanges(repository, { base, head: at?.commit ?? null, headName: where.ref ?? 'HEAD', patterns: config.desired.paths });
    return { files, source: { ...source, base: changes.base }, base: changes };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { files, source, baseError: error };
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
async function declaredBefore(
  repository: GitRepository,
  config: Config,
  scopes: ReadonlyMap<string, TenantScope>,
  base: BaseChanges | undefined,
): Promise<Map<string, ContractSet[]>> {
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
