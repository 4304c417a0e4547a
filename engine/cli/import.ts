/**
 * `contract-sync import`: reads contracts live and writes the desired-state file that declares
 * them as they are, so that they come under management with a plan of no op.
 */
import { access, lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import picomatch from 'picomatch';
import { messageOf, statusOf } from '../apply/failure.ts';
import { retryBudget } from '../apply/retry-policy.ts';
import { notOnServiceText } from '../apply/run-report.ts';
import { TenantLane } from '../apply/tenant-lane.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/types.ts';
import { desiredPathMatcher } from '../desired/read-files.ts';
import { renderDesiredFile } from '../desired/render-file.ts';
import { validateDesiredState } from '../desired/validate.ts';
import { CONTRACT_ID_PATTERN, SPEC_BASE_URL } from '../model/json-schemas.ts';
import type { ContractFields } from '../model/types.ts';
import { diffContract } from '../plan/diff.ts';
import { plural } from '../plural.ts';
import { loadRunInput, type RunInput } from './desired-input.ts';
import { formatDiagnostics } from './diagnostics-output.ts';
import { createEngineSetup, type EngineSetup } from './engine-setup.ts';
import { clockOf, EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';

export const IMPORT_HELP = `Usage: contract-sync import --tenant T --id ID [--id ID]... [--out FILE] [--force]
                            [--config FILE] [--repo DIR]

Reads the named contracts of one tenant live and writes a desired-state file that declares them
exactly as the service holds them: it validates, and plans to no op. The way to bring existing
contracts under management. The service publishes no way to list contracts: name each one.

Options:
  --tenant T      the tenant whose contracts to read (exactly one; must be configured)
  --id ID         a ContractId to import (repeatable; written in the order given)
  --out FILE      write the file here (relative to the working directory; directories are created);
                  default: print it on stdout. Warns when desired.paths would not pick FILE up
  --force         overwrite an existing FILE (the whole file is replaced); without --out, print
                  contracts the repository already declares
  --config FILE   engine config (default: DIR/contract-sync.yaml)
  --repo DIR      repository holding the desired-state files (default: .)

Needs api.read in the config. A ContractId the service does not know (its read is answered 404)
is reported as not on the service: import reads contracts that exist, and cannot create one.
Contracts the repository already declares for the tenant are refused,
naming where (importing them again would declare them twice).
Fields the service holds as null are left out (unmanaged), and say so on stderr.

Credentials: the tenant's client secret, from the env variable or file the config names.
Scopes asked for: core:read.
Logs: on stderr: text lines at a terminal (warnings and errors only), else JSON lines at info;
see the global options --log-format and CONTRACT_SYNC_LOG_LEVEL below.

Exit codes: 0 written, 1 any error (nothing is written then).
`;

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

function uniqueIds(ids: readonly string[]): string[] {
  const idPattern = new RegExp(CONTRACT_ID_PATTERN);
  for (const id of ids) {
    if (!idPattern.test(id)) throw new UsageError(`--id "${id}" is not a ContractId (letters, digits, ".", "_", "~" and "-"; at most 128 characters)`);
  }
  return [...new Set(ids)];
}

function targetOf(io: CliIo, repoDir: string, out: string | undefined): Target {
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
function alreadyDeclared(io: CliIo, input: RunInput, tenant: string, ids: readonly string[], target: Target, force: boolean): string[] {
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

/** The `$schema` of the first line: the repository's own copy of the schema when it has one, else the schema's published id. */
async function schemaReference(repoDir: string, target: Target): Promise<string> {
  const local = path.join(repoDir, 'specs', 'contracts.schema.json');
  if (target.file === undefined || !(await exists(local))) return `${SPEC_BASE_URL}/contracts.schema.json`;
  const relative = path.relative(path.dirname(target.file), local).split(path.sep).join('/');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

type ReadResult = { readonly id: string; readonly fields: ContractFields } | { readonly id: string; readonly error: unknown };

/** Reads every contract through the tenant's lane, so that 429/503 pause it and other failures are retried by the policy. */
async function readContracts(config: Config, tenant: string, ids: readonly string[], engine: EngineSetup, clock: Clock): Promise<ReadResult[]> {
  const lane = new TenantLane({
    tenant,
    ...config.rate,
    budget: retryBudget(config.retry.maxAttempts),
    inFlight: new PQueue({ concurrency: config.rate.maxInFlight }),
    tokens: engine.tokens,
    clock,
    random: Math.random,
    logger: engine.logger,
  });
  return Promise.all(
    ids.map(async (id): Promise<ReadResult> => {
      try {
        const { fields } = await lane.call({ kind: 'read', contractId: id, resendable: true }, (token) => engine.api.read(id, token));
        return { id, fields };
      } catch (error) {
        engine.logger.info({ tenant, contractId: id, status: statusOf(error) }, 'read failed; nothing written');
        return { id, error };
      }
    }),
  );
}

/**
 * The rendered file, checked the way `validate` checks files, and checked to plan to no op against
 * what was read. Either failing is a defect of import or a value no desired-state file can hold.
 */
function checkRendered(text: string, config: Config, tenant: string, target: Target, live: ReadonlyMap<string, ContractFields>): string | undefined {
  // The target's path decides nothing here: checkTargetPath has dealt with the tenant's paths.
  const { paths: _paths, ...settings } = config.tenants[tenant]!;
  const result = validateDesiredState([{ path: target.inRepo ?? target.shown, content: text }], { tenants: { [tenant]: settings } });
  if (result.errors.length > 0) return formatDiagnostics(result.errors, 'text');
  for (const contract of result.contractSets.flatMap((set) => set.contracts)) {
    const ops = diffContract(live.get(contract.id), contract.fields, { collections: config.collections });
    if (ops.length > 0) return `contract ${contract.id} would plan ${plural(ops.length, 'op')} (${[...new Set(ops.map((op) => op.path))].join(', ')})\n`;
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

export async function importCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      tenant: { type: 'string', multiple: true },
      id: { type: 'string', multiple: true },
      out: { type: 'string' },
      force: { type: 'boolean', default: false },
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(IMPORT_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const tenants = values.tenant ?? [];
  if (tenants.length !== 1) {
    throw new UsageError(tenants.length === 0 ? '--tenant is required: a file declares the contracts of one tenant' : `give --tenant once; got ${tenants.join(', ')}`);
  }
  const tenant = tenants[0]!;
  const ids = uniqueIds(values.id ?? []);
  if (ids.length === 0) throw new UsageError('give at least one --id: the service publishes no way to list contracts, so import reads the ones you name');
  const { force } = values;
  function fail(message: string): ExitCode {
    io.stderr.write(`contract-sync import: ${message}\n`);
    return EXIT.error;
  }

  const loaded = await loadRunInput(io, { repo: values.repo, config: values.config, tenants: [tenant] });
  if (loaded.kind === 'git-error') return fail(loaded.message);
  if (loaded.kind === 'invalid-config') {
    io.stderr.write(formatDiagnostics(loaded.diagnostics, 'text'));
    return fail('invalid config: nothing imported');
  }
  const { input } = loaded;
  const { config, repoDir } = input;
  if (config.api.read === undefined) {
    return fail(`import reads contracts live and needs reads: configure api.read in ${input.configFile} (e.g. read: { path: "/contract/{id}" })`);
  }
  if (input.desired.errors.length > 0) {
    io.stderr.write(`contract-sync import: warning: the desired state has ${plural(input.desired.errors.length, 'error')} (see contract-sync validate); contracts in files with errors are not checked for duplicates\n`);
  }

  const target = targetOf(io, repoDir, values.out);
  if (target.file !== undefined && (await exists(target.file))) {
    const existing = await lstat(target.file);
    if (existing.isDirectory()) return fail(`${target.shown} is a directory; --out names the file to write`);
    if (!existing.isFile()) return fail(`${target.shown} is not a regular file (a symbolic link, a device or a FIFO); --out writes regular files only`);
    if (!force) return fail(`${target.shown} exists; pass --force to overwrite it`);
  }
  const pathCheck = checkTargetPath(config, tenant, target, values.repo);
  if (pathCheck.error !== undefined) return fail(`${pathCheck.error}; nothing imported`);
  if (pathCheck.warning !== undefined) io.stderr.write(`contract-sync import: warning: ${pathCheck.warning}\n`);
  const declared = alreadyDeclared(io, input, tenant, ids, target, force);
  if (declared.length > 0) return fail(`${declared.join('\ncontract-sync import: ')}\nnothing imported`);

  const engine = createEngineSetup(io, config, ['core:read']);
  function redacted(message: string): string {
    return engine.redactor.redact(message);
  }
  const clock = clockOf(io);
  try {
    // The token is checked (tenant_id, core:read) before any read is queued.
    await engine.tokens.get(tenant);
  } catch (error) {
    return fail(redacted(`tenant "${tenant}": ${messageOf(error)}; nothing imported`));
  }
  const results = await readContracts(config, tenant, ids, engine, clock);
  const failed = results.filter((result) => 'error' in result);
  if (failed.length > 0) {
    const lines = failed.map((result) =>
      statusOf(result.error) === 404 ? `  ${result.id}: not on the service (its read was answered 404): check the ContractId; contract-sync manages contracts that exist and cannot create one` : `  ${result.id}: ${statusOf(result.error) ?? 'no answer'}: ${messageOf(result.error)}`,
    );
    const missing = failed.filter((result) => statusOf(result.error) === 404).length;
    const why = missing === 0 ? '' : missing === failed.length ? ` (${notOnServiceText(missing)})` : ` (${notOnServiceText(missing)}, ${plural(failed.length - missing, 'other failure')})`;
    const which = failed.length === ids.length ? (ids.length === 1 ? 'the contract' : `any of the ${ids.length} contracts`) : `${failed.length} of ${plural(ids.length, 'contract')}`;
    return fail(redacted(`could not read ${which} of tenant "${tenant}"${why}:\n${lines.join('\n')}\nnothing written`));
  }
  const live = new Map(results.map((result) => [result.id, 'fields' in result ? result.fields : {}]));

  const rendered = renderDesiredFile({ tenant, contracts: live, schema: await schemaReference(repoDir, target) });
  const problem = checkRendered(rendered.text, config, tenant, target, live);
  if (problem !== undefined) {
    io.stderr.write(redacted(problem));
    return fail('the contracts as read do not make a desired-state file that validates and plans to no op; nothing written');
  }
  for (const note of rendered.notes) io.stderr.write(redacted(`contract-sync import: note: contract ${note.contractId}: ${note.field} ${note.message}\n`));

  if (target.file === undefined) {
    io.stdout.write(rendered.text);
    return EXIT.ok;
  }
  const writeProblem = await writeTarget({ ...target, file: target.file }, rendered.text, force);
  if (writeProblem !== undefined) return fail(writeProblem);
  io.stdout.write(`Imported ${plural(ids.length, 'contract')} of tenant ${tenant} into ${target.shown}.\n`);
  return EXIT.ok;
}
