/**
 * The import run: reads contracts live and writes the desired-state file that declares them as they
 * are, so that they come under management with a plan of no op.
 */
import { access, lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import picomatch from 'picomatch';
import { messageOf, statusOf } from '../apply/failure.ts';
import { retryBudget } from '../apply/retry-policy.ts';
import { ServiceUnreachable } from '../apply/service-unreachable.ts';
import { notOnServiceText } from '../apply/run-report.ts';
import { TenantLane } from '../apply/tenant-lane.ts';
import type { Config } from '../config/types.ts';
import { desiredPathMatcher } from '../desired/read-files.ts';
import { renderDesiredFile } from '../desired/render-file.ts';
import { validateDesiredState } from '../desired/validate.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { GitError } from '../git/errors.ts';
import { schemaReference as packageSchemaReference } from '../init/schema-path.ts';
import { tenantMessage } from '../text/tenant-message.ts';
import { fingerprint } from '../model/fingerprint.ts';
import type { ContractFields } from '../model/types.ts';
import { diffContract } from '../plan/diff.ts';
import { plural } from '../text/plural.ts';
import { createEngineSetup, type EngineSetup } from './engine-setup.ts';
import { openRunInput, readWholeInput, type RunInput } from './input.ts';
import { lazyStore } from './lazy-store.ts';
import type { RunEffects, RunPlace, RunUnread, RunWhere } from './types.ts';

export interface ImportRequest {
  readonly kind: 'import';
  readonly where: RunWhere;
  readonly tenant: string;
  /** ContractIds to read, written in this order. */
  readonly ids: readonly string[];
  /** The file to write (relative to the working directory); left out: the text is returned. */
  readonly out?: string;
  /** Overwrite an existing file; without `out`, import contracts the repository already declares. */
  readonly force: boolean;
}

/** What is wrong with a file import would write: its diagnostics, or the op it would plan. */
export type ImportDetail =
  { readonly diagnostics: readonly Diagnostic[]; readonly text?: undefined } | { readonly text: string; readonly diagnostics?: undefined };

export type ImportRunOutcome =
  | RunUnread
  /** Nothing imported: `message` says why; `detail` (diagnostics, a plan's problem) comes before it. */
  | { readonly kind: 'refused'; readonly message: string; readonly detail?: ImportDetail; readonly warnings: readonly string[] }
  | {
      readonly kind: 'imported';
      /** Without `out`: the file's text. */
      readonly text?: string;
      /** With `out`: the file as shown in messages. */
      readonly written?: string;
      readonly warnings: readonly string[];
    };

/** Where the file goes: stdout, or a file of the working tree. */
interface Target {
  /** Absolute; undefined for stdout. */
  readonly file?: string;
  /** As shown in messages: relative to the working directory, or `(stdout)`. */
  readonly shown: string;
  /** Repository-relative and `/`-separated, when the file is inside the repository. */
  readonly inRepo?: string;
}

interface Declared {
  readonly file: string;
  readonly line: number;
}

function targetOf(io: RunPlace, repoDir: string, out: string | undefined): Target {
  if (out === undefined) return { shown: '(stdout)' };
  const file = path.resolve(io.cwd, out);
  const relative = path.relative(repoDir, file);
  const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  return { file, shown: path.relative(io.cwd, file), ...(inside ? { inRepo: relative.split(path.sep).join('/') } : {}) };
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Would validate, plan and apply read the file? A warning when not; an error when they would refuse it. */
function checkTargetPath(config: Config, tenant: string, target: Target, repo: string): { warning?: string; error?: string } {
  if (target.file === undefined) return {};
  if (target.inRepo === undefined) return { warning: `${target.shown} is outside the repository ${repo}: validate, plan and apply will not read it` };
  if (!desiredPathMatcher(config.desired.paths)(target.inRepo)) {
    return { warning: `${target.shown} is not matched by desired.paths (${config.desired.paths.join(', ')}): validate, plan and apply will not read it` };
  }
  const allowed = config.tenants[tenant]?.paths;
  if (allowed && !picomatch([...allowed], { dot: true })(target.inRepo)) {
    return { error: `${target.shown} may not declare tenant "${tenant}": it is outside the tenant's paths (${allowed.join(', ')}); choose a file there` };
  }
  return {};
}

/** Ids the repository already declares, where importing them would declare them twice. */
function alreadyDeclared(io: RunPlace, input: RunInput, tenant: string, ids: readonly string[], target: Target, force: boolean): string[] {
  const declared = new Map<string, Declared>();
  for (const set of input.contractSets) {
    if (set.tenant !== tenant) continue;
    for (const contract of set.contracts) declared.set(contract.id, { file: set.file, line: contract.line });
  }
  const problems: string[] = [];
  for (const id of ids) {
    const where = declared.get(id);
    if (where === undefined) continue;
    // Replacing the very file that declares it (--force) leaves one declaration.
    if (target.inRepo === where.file) continue;
    if (target.file === undefined && force) continue;
    const hint =
      target.file === undefined
        ? 'pass --force to print it anyway'
        : `importing it into ${target.shown} would declare it twice; edit it there, or re-import that file with --out ${path.relative(io.cwd, path.join(input.repoDir, where.file))} --force`;
    problems.push(`contract ${id} of tenant "${tenant}" is already declared at ${where.file}:${where.line}; ${hint}`);
  }
  return problems;
}

/** The `$schema` of the first line: as init writes it (engine/init/schema-path.ts), from the file's directory (stdout: the working directory's). */
function schemaReference(cwd: string, target: Target): string {
  return packageSchemaReference(target.file === undefined ? cwd : path.dirname(target.file), 'contracts.schema.json');
}

type ReadResult = { readonly id: string; readonly fields: ContractFields } | { readonly id: string; readonly error: unknown };

/** Reads every contract through the tenant's lane, so that 429/503 pause it and other failures are retried by the policy. */
async function readContracts(config: Config, tenant: string, ids: readonly string[], engine: EngineSetup, effects: RunEffects): Promise<ReadResult[]> {
  const lane = new TenantLane({
    tenant,
    ...config.rate,
    budget: retryBudget(config.retry.maxAttempts),
    inFlight: new PQueue({ concurrency: config.rate.maxInFlight }),
    tokens: engine.tokens,
    clock: effects.clock,
    random: effects.random ?? Math.random,
    logger: engine.logger,
    // A few refused connections in a row stop the lane: the service is not there (service-unreachable.ts).
    serviceHost: new URL(config.api.baseUrl).host,
  });
  effects.onEvent?.({ type: 'phase', phase: 'read-known' });
  let done = 0;
  return Promise.all(
    ids.map(async (id): Promise<ReadResult> => {
      try {
        const { fields } = await lane.call({ kind: 'read', contractId: id, resendable: true }, (token) => engine.api.read(id, token));
        effects.onEvent?.({ type: 'progress', step: 'read', tenant, contractId: id, outcome: 'read', done: (done += 1), total: ids.length });
        return { id, fields };
      } catch (error) {
        engine.logger.info({ tenant, contractId: id, status: statusOf(error) }, 'read failed; nothing written');
        effects.onEvent?.({
          type: 'progress',
          step: 'read',
          tenant,
          contractId: id,
          outcome: statusOf(error) === 404 ? 'not-on-service' : 'failed',
          done: (done += 1),
          total: ids.length,
        });
        return { id, error };
      }
    }),
  );
}

/**
 * The rendered file, checked the way `validate` checks files, and checked to plan to no op against
 * what was read. Either failing is a defect of import or a value no desired-state file can hold.
 */
function checkRendered(text: string, config: Config, tenant: string, target: Target, live: ReadonlyMap<string, ContractFields>): ImportDetail | undefined {
  // The target's path decides nothing here: checkTargetPath has dealt with the tenant's paths.
  const { paths: _paths, ...settings } = config.tenants[tenant]!;
  const result = validateDesiredState([{ path: target.inRepo ?? target.shown, content: text }], { tenants: { [tenant]: settings } });
  if (result.errors.length > 0) return { diagnostics: result.errors };
  for (const contract of result.contractSets.flatMap((set) => set.contracts)) {
    const ops = diffContract(live.get(contract.id), contract.fields, { collections: config.collections });
    if (ops.length > 0)
      return { text: `contract ${contract.id} would plan ${plural(ops.length, 'op')} (${[...new Set(ops.map((op) => op.path))].join(', ')})\n` };
  }
  return undefined;
}

async function writeTarget(target: Target & { file: string }, text: string, force: boolean): Promise<string | undefined> {
  await mkdir(path.dirname(target.file), { recursive: true });
  try {
    // 'wx': a file created since the check is still not overwritten.
    await writeFile(target.file, text, { flag: force ? 'w' : 'wx' });
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return `${target.shown} exists; pass --force to overwrite it`;
    throw error;
  }
}

export async function runImport(request: ImportRequest, effects: RunEffects): Promise<ImportRunOutcome> {
  const { tenant, ids, force } = request;
  const warnings: string[] = [];
  function refuse(message: string, detail?: ImportDetail): ImportRunOutcome {
    return { kind: 'refused', message, ...(detail === undefined ? {} : { detail }), warnings };
  }
  const opened = await openRunInput(effects, 'import', request.where, { tenants: [tenant] });
  if ('kind' in opened) return opened;
  let input: RunInput;
  try {
    input = await readWholeInput(opened, { describeIncremental: false, records: false });
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return { kind: 'git-error', code: error.code, message: error.message };
  } finally {
    opened.close();
  }
  const { config, repoDir } = input;
  if (config.api.read === undefined) {
    return refuse(`import reads contracts live and needs reads: configure api.read in ${input.configFile} (e.g. read: { path: "/contract/{id}" })`);
  }
  if (input.desired.errors.length > 0) {
    warnings.push(
      `warning: the desired state has ${plural(input.desired.errors.length, 'error')} (see contract-sync validate); contracts in files with errors are not checked for duplicates`,
    );
  }

  const target = targetOf(effects, repoDir, request.out);
  if (target.file !== undefined && (await exists(target.file))) {
    const existing = await lstat(target.file);
    if (existing.isDirectory()) return refuse(`${target.shown} is a directory; --out names the file to write`);
    if (!existing.isFile()) return refuse(`${target.shown} is not a regular file (a symbolic link, a device or a FIFO); --out writes regular files only`);
    if (!force) return refuse(`${target.shown} exists; pass --force to overwrite it`);
  }
  const pathCheck = checkTargetPath(config, tenant, target, request.where.repo);
  if (pathCheck.error !== undefined) return refuse(`${pathCheck.error}; nothing imported`);
  if (pathCheck.warning !== undefined) warnings.push(`warning: ${pathCheck.warning}`);
  const declared = alreadyDeclared(effects, input, tenant, ids, target, force);
  if (declared.length > 0) return refuse(`${declared.join('\ncontract-sync import: ')}\nnothing imported`);

  const engine = createEngineSetup(effects, config, ['core:read']);
  function redacted(message: string): string {
    return engine.redactor.redact(message);
  }
  /** The tenant could not be read at all (no token, the service not reached): one line. */
  function stopped(error: unknown): ImportRunOutcome {
    return refuse(redacted(`${tenantMessage(tenant, messageOf(error))}; nothing imported`));
  }
  try {
    // The token is checked (tenant_id, core:read) before any read is queued.
    await engine.tokens.get(tenant);
  } catch (error) {
    return stopped(error);
  }
  const results = await readContracts(config, tenant, ids, engine, effects);
  const failed = results.filter((result) => 'error' in result);
  const unreachable = failed.find((result) => result.error instanceof ServiceUnreachable);
  if (unreachable !== undefined) return stopped(unreachable.error);
  if (failed.length > 0) {
    const lines = failed.map((result) =>
      statusOf(result.error) === 404
        ? `  ${result.id}: not on the service (its read was answered 404): check the ContractId; contract-sync manages contracts that exist and cannot create one`
        : `  ${result.id}: ${statusOf(result.error) ?? 'no answer'}: ${messageOf(result.error)}`,
    );
    const missing = failed.filter((result) => statusOf(result.error) === 404).length;
    const why =
      missing === 0
        ? ''
        : missing === failed.length
          ? ` (${notOnServiceText(missing)})`
          : ` (${notOnServiceText(missing)}, ${plural(failed.length - missing, 'other failure')})`;
    const which =
      failed.length === ids.length
        ? ids.length === 1
          ? 'the contract'
          : `any of the ${ids.length} contracts`
        : `${failed.length} of ${plural(ids.length, 'contract')}`;
    return refuse(redacted(`could not read ${which} of tenant "${tenant}"${why}:\n${lines.join('\n')}\nnothing written`));
  }
  const live = new Map(results.map((result) => [result.id, 'fields' in result ? result.fields : {}]));

  const rendered = renderDesiredFile({ tenant, contracts: live, schema: schemaReference(effects.cwd, target) });
  const problem = checkRendered(rendered.text, config, tenant, target, live);
  if (problem !== undefined)
    return refuse(
      'the contracts as read do not make a desired-state file that validates and plans to no op; nothing written',
      problem.text === undefined ? { diagnostics: problem.diagnostics.map((d) => ({ ...d, message: redacted(d.message) })) } : { text: redacted(problem.text) },
    );
  for (const note of rendered.notes) warnings.push(redacted(`note: contract ${note.contractId}: ${note.field} ${note.message}`));

  // Printed on stdout, the file may never be kept: nothing is written anywhere, the state store included.
  if (target.file === undefined) return { kind: 'imported', text: rendered.text, warnings };
  const writeProblem = await writeTarget({ ...target, file: target.file }, rendered.text, force);
  if (writeProblem !== undefined) return refuse(writeProblem);
  const unrecorded = await recordImported(input, tenant, live, engine, effects);
  if (unrecorded !== undefined)
    warnings.push(redacted(`warning: ${unrecorded}; the next plan from the state store shows these contracts as never applied (plan --refresh reads them)`));
  return { kind: 'imported', written: target.shown, warnings };
}

/** How long import waits for a run that holds the tenant's lock before it leaves its records unwritten. */
const RECORD_LOCK_TIMEOUT_MS = 30_000;

/**
 * Records what was read in the state store, as apply records contracts it read and found equal, so
 * that the next plan from the state store has no op for an imported contract. Under the tenant's
 * lock, the writes fenced by it. Why not, when the records could not be written.
 */
async function recordImported(
  input: RunInput,
  tenant: string,
  live: ReadonlyMap<string, ContractFields>,
  engine: EngineSetup,
  effects: RunEffects,
): Promise<string | undefined> {
  const store = lazyStore(input.config, input.repoDir, effects);
  try {
    const opened = await store.get(engine.redactor);
    if (typeof opened === 'string') return `the contracts read were not recorded: ${opened}`;
    const lock = await opened.lock(tenant, { timeoutMs: RECORD_LOCK_TIMEOUT_MS, owner: engine.runId });
    try {
      const appliedAt = new Date(effects.clock.now()).toISOString();
      for (const [contractId, fields] of live)
        await opened.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt, commit: null }, { lock });
    } finally {
      await lock.release();
    }
    return undefined;
  } catch (error) {
    // The store's own errors (a lock held too long, an unreadable file, a database gone) have a code.
    if (typeof (error as { code?: unknown }).code !== 'string') throw error;
    return `the contracts read were not recorded in the state store (${messageOf(error)})`;
  } finally {
    await store.close();
  }
}
