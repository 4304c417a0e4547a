/** `contract-sync state list|show|history|unlock|rm|push|pull`: inspect, repair and move the configured state store. */
import { parseArgs } from 'node:util';
import { plural } from '../plural.ts';
import { copyStore, openConfiguredStore, openOtherStore, type OtherStore } from '../run/state.ts';
import { describeLockHolder, readStateSummary, renderHistoryText, renderRecordText, renderSummaryText } from '../state/inspect.ts';
import { checkContractId, checkTenant } from '../state/store-input.ts';
import type { StateStore } from '../state/types.ts';
import { formatDiagnostics } from '../diagnostic-format.ts';
import { EXIT, parseFormat, UsageError, type CliIo, type ExitCode } from './io.ts';

export const STATE_HELP = `Usage: contract-sync state <subcommand> [--config FILE] [--repo DIR] [options]

Inspect and repair the state store the config names (state: in contract-sync.yaml).

Subcommands:
  list [--tenant T] [--format text|json]      tenants, record counts, last applied commit,
                                              pending contracts, lock holder
  show TENANT ID [--format text|json]         one contract's record
  history [--tenant T] [--limit N] [--format text|json]
                                              apply and drift --fix runs, newest first
  unlock TENANT [--force]                     force-unlock a tenant whose run is gone; without
                                              --force, shows the holder and changes nothing
  rm TENANT ID [--force]                      forget a contract's record (the next plan reads it
                                              as never applied); without --force, shows it
  push --to postgres --url-env NAME [--schema S] | --to file --path DIR [--force]
                                              copy every record, run record and history entry
                                              of the configured store to another one, then read
                                              the copy back and compare (exit 1 on a difference)
  pull --from postgres --url-env NAME [--schema S] | --from file --path DIR [--force]
                                              the same, from another store into the configured one

Options:
  --config FILE   the engine config (default DIR/contract-sync.yaml)
  --repo DIR      the repository (default .)
  --tenant T      only this tenant (list, history)
  --limit N       at most N runs (history; default 20)
  --format F      text (default) or json (list, show, history)
  --url-env NAME  the variable holding the other store's postgresql:// URL (push, pull)
  --schema S      the other PostgreSQL store's schema (default contract_sync)
  --path DIR      the other file store's directory (push, pull)
  --force         confirm unlock or rm; push/pull into a store that already holds state
  -h, --help      show this help

Exit codes: 0 done; 1 error, nothing found (show, rm), unlock/rm refused without --force, a
push/pull into a store holding state without --force, or a copy that differs when read back.
`;

const SUBCOMMANDS = ['list', 'show', 'history', 'unlock', 'rm', 'push', 'pull'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

interface Options {
  readonly tenant?: string;
  readonly limit: number;
  readonly format: 'text' | 'json';
  readonly force: boolean;
  /** push and pull: the other store. */
  readonly other?: OtherStore;
}

/** How push and pull open the other store: --to/--from postgres|file with --url-env/--schema or --path. */
function otherStore(sub: 'push' | 'pull', values: { to?: string; from?: string; 'url-env'?: string; schema?: string; path?: string }): OtherStore {
  const flag = sub === 'push' ? '--to' : '--from';
  const backend = sub === 'push' ? values.to : values.from;
  if (backend === 'file') {
    if (values.path === undefined) throw new UsageError(`${flag} file needs --path DIR`);
    return { backend, path: values.path };
  }
  if (backend !== 'postgres') throw new UsageError(`${flag} must be postgres or file; got ${backend === undefined ? 'nothing' : `"${backend}"`}`);
  if (values['url-env'] === undefined) throw new UsageError(`${flag} postgres needs --url-env NAME (the variable holding the URL)`);
  return { backend, urlEnv: values['url-env'], ...(values.schema === undefined ? {} : { schema: values.schema }) };
}

/** push / pull: copies `from` into `to` unless `to` holds state already (without --force). */
async function copy(sub: 'push' | 'pull', store: StateStore, options: Options, io: CliIo): Promise<ExitCode> {
  const other = await openOtherStore(io, options.other!);
  if (typeof other === 'string') {
    io.stderr.write(`contract-sync state ${sub}: ${other}\n`);
    return EXIT.error;
  }
  try {
    const [from, to] = sub === 'push' ? [store, other] : [other, store];
    const result = await copyStore(from, to, options.force);
    if (result.kind === 'held') {
      io.stderr.write(
        `contract-sync state ${sub}: the ${sub === 'push' ? 'target' : 'configured'} store already holds state; nothing copied. Run again with --force to copy over it (records of the same contracts are replaced, others kept)\n`,
      );
      return EXIT.error;
    }
    const { copied, mismatches } = result;
    io.stdout.write(
      `copied ${plural(copied.tenants, 'tenant')}: ${plural(copied.records, 'record')}, ${plural(copied.runs, 'run record')}, ${plural(copied.history, 'history entry', 'history entries')}\n`,
    );
    if (mismatches.length > 0) {
      io.stderr.write(`contract-sync state ${sub}: the copy differs from the source when read back:\n${mismatches.map((line) => `  ${line}\n`).join('')}`);
      return EXIT.error;
    }
    io.stdout.write('verified: the copy read back holds the same records (fingerprints), run records and history\n');
    return EXIT.ok;
  } finally {
    await other.close();
  }
}

function checked(check: (value: string) => void, value: string): string {
  try {
    check(value);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return value;
}

function positionalsOf(sub: Subcommand, positionals: readonly string[], names: readonly string[]): string[] {
  if (positionals.length !== names.length)
    throw new UsageError(`state ${sub} takes ${names.length === 0 ? 'no arguments' : names.join(' ')}; got ${plural(positionals.length, 'argument')}`);
  return [...positionals];
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 20;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(limit) || limit < 1) throw new UsageError(`--limit must be a whole number >= 1; got "${value}"`);
  return limit;
}

/** One subcommand on an open store. */
async function run(sub: Subcommand, args: readonly string[], options: Options, store: StateStore, io: CliIo): Promise<ExitCode> {
  const json = options.format === 'json';
  if (sub === 'push' || sub === 'pull') return copy(sub, store, options, io);
  if (sub === 'list') {
    const summary = await readStateSummary(store, options.tenant);
    io.stdout.write(json ? `${JSON.stringify({ tenants: summary }, null, 2)}\n` : renderSummaryText(summary));
    return EXIT.ok;
  }
  if (sub === 'history') {
    const entries = await store.readHistory({ ...(options.tenant === undefined ? {} : { tenant: options.tenant }), limit: options.limit });
    io.stdout.write(json ? `${JSON.stringify({ runs: entries }, null, 2)}\n` : renderHistoryText(entries));
    return EXIT.ok;
  }
  const tenant = checked(checkTenant, args[0]!);
  if (sub === 'show') {
    const id = checked(checkContractId, args[1]!);
    const record = await store.readRecord(tenant, id);
    if (record === undefined) {
      io.stderr.write(`contract-sync state show: no record of contract ${id} for tenant ${tenant}\n`);
      return EXIT.error;
    }
    io.stdout.write(json ? `${JSON.stringify({ tenant, ...record }, null, 2)}\n` : renderRecordText(tenant, record));
    return EXIT.ok;
  }
  if (sub === 'unlock') {
    if (!options.force) {
      const holder = await store.lockHolder(tenant);
      if (holder === undefined) {
        io.stdout.write(`tenant ${tenant} is not locked; nothing to do\n`);
        return EXIT.ok;
      }
      io.stdout.write(`tenant ${tenant} is locked by ${describeLockHolder(holder)}\n`);
      io.stderr.write(
        `contract-sync state unlock: not unlocked. If that run is gone (crashed, runner lost), run again with --force; removing the lock of a live run lets a second run apply to ${tenant} beside it\n`,
      );
      return EXIT.error;
    }
    const holder = await store.forceUnlock(tenant);
    io.stdout.write(
      holder === undefined
        ? `tenant ${tenant} was not locked; nothing to do\n`
        : `unlocked tenant ${tenant}: the lock was held by ${describeLockHolder(holder)}\n`,
    );
    return EXIT.ok;
  }
  const id = checked(checkContractId, args[1]!);
  const record = await store.readRecord(tenant, id);
  if (record === undefined) {
    io.stderr.write(`contract-sync state rm: no record of contract ${id} for tenant ${tenant}; nothing removed\n`);
    return EXIT.error;
  }
  if (!options.force) {
    io.stdout.write(renderRecordText(tenant, record));
    io.stderr.write(
      `contract-sync state rm: not removed; run again with --force to forget this record (the next plan reads contract ${id} as never applied)\n`,
    );
    return EXIT.error;
  }
  await store.removeRecord(tenant, id);
  io.stdout.write(`removed the record of contract ${id} for tenant ${tenant}\n`);
  return EXIT.ok;
}

export async function stateCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      tenant: { type: 'string' },
      limit: { type: 'string' },
      format: { type: 'string' },
      force: { type: 'boolean', default: false },
      to: { type: 'string' },
      from: { type: 'string' },
      'url-env': { type: 'string' },
      schema: { type: 'string' },
      path: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(STATE_HELP);
    return EXIT.ok;
  }
  const [name, ...rest] = positionals;
  if (name === undefined) throw new UsageError(`a subcommand is required (${SUBCOMMANDS.join(', ')})`);
  if (!(SUBCOMMANDS as readonly string[]).includes(name)) throw new UsageError(`unknown subcommand "${name}" (expected ${SUBCOMMANDS.join(', ')})`);
  const sub = name as Subcommand;
  const names = sub === 'show' || sub === 'rm' ? ['TENANT', 'ID'] : sub === 'unlock' ? ['TENANT'] : [];
  const subArgs = positionalsOf(sub, rest, names);
  const options: Options = {
    ...(values.tenant === undefined ? {} : { tenant: checked(checkTenant, values.tenant) }),
    limit: parseLimit(values.limit),
    format: parseFormat(values.format, ['text', 'json'] as const, 'text'),
    force: values.force,
    ...(sub === 'push' || sub === 'pull' ? { other: otherStore(sub, values) } : {}),
  };

  const store = await openConfiguredStore(io, { repo: values.repo, ...(values.config === undefined ? {} : { config: values.config }) });
  if (typeof store === 'object' && 'diagnostics' in store) {
    io.stderr.write(formatDiagnostics(store.diagnostics, 'text'));
    return EXIT.error;
  }
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync state ${sub}: ${store}\n`);
    return EXIT.error;
  }
  try {
    return await run(sub, subArgs, options, store, io);
  } catch (error) {
    // The store's own errors (an unreadable file, a database gone): one line, named by the store.
    const code = (error as { code?: unknown }).code;
    if (code !== 'state-format' && code !== 'state-postgres' && code !== 'lock-timeout') throw error;
    io.stderr.write(`contract-sync state ${sub}: ${(error as Error).message}\n`);
    return EXIT.error;
  } finally {
    await store.close();
  }
}
