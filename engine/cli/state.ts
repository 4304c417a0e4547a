/** `contract-sync state list|show|history|unlock|rm|push|pull`: inspect, repair and move the configured state store. */
import { plural } from '../text/plural.ts';
import { renderStateOutcome, type StateReport } from '../run/render-state.ts';
import { runState, type OtherStore, type StateRequest } from '../run/state.ts';
import { checkContractId, checkTenant } from '../state/store-input.ts';
import { EXIT, parseCommand, parseFormat, UsageError, type CliIo, type ExitCode } from './io.ts';
import { WHERE_OPTIONS, whereOf } from './run-args.ts';

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

/** What a subcommand found or did, said: the exit code. */
function writeState(report: StateReport, sub: Subcommand, io: CliIo): ExitCode {
  if (report.text !== '') io.stdout.write(report.text);
  if (report.diagnostics !== undefined) io.stderr.write(report.diagnostics);
  if (report.problem !== undefined) io.stderr.write(`contract-sync state ${sub}: ${report.problem}\n`);
  return report.problem === undefined && report.diagnostics === undefined ? EXIT.ok : EXIT.error;
}

export async function stateCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, helped } = parseCommand(io, STATE_HELP, args, true, {
    ...WHERE_OPTIONS,
    tenant: { type: 'string' },
    limit: { type: 'string' },
    format: { type: 'string' },
    force: { type: 'boolean', default: false },
    to: { type: 'string' },
    from: { type: 'string' },
    'url-env': { type: 'string' },
    schema: { type: 'string' },
    path: { type: 'string' },
  });
  if (helped) return EXIT.ok;
  const [name, ...rest] = positionals;
  if (name === undefined) throw new UsageError(`a subcommand is required (${SUBCOMMANDS.join(', ')})`);
  if (!(SUBCOMMANDS as readonly string[]).includes(name)) throw new UsageError(`unknown subcommand "${name}" (expected ${SUBCOMMANDS.join(', ')})`);
  const sub = name as Subcommand;
  const names = sub === 'show' || sub === 'rm' ? ['TENANT', 'ID'] : sub === 'unlock' ? ['TENANT'] : [];
  const [tenant, id] = positionalsOf(sub, rest, names);
  const where = whereOf(values);
  const json = parseFormat(values.format, ['text', 'json'] as const, 'text') === 'json';
  const only = values.tenant === undefined ? {} : { tenant: checked(checkTenant, values.tenant) };
  const limit = parseLimit(values.limit);
  const force = values.force;
  const request: StateRequest =
    sub === 'list'
      ? { where, kind: sub, ...only }
      : sub === 'history'
        ? { where, kind: sub, ...only, limit }
        : sub === 'push' || sub === 'pull'
          ? { where, kind: sub, other: otherStore(sub, values), force }
          : sub === 'unlock'
            ? { where, kind: sub, tenant: checked(checkTenant, tenant!), force }
            : { where, kind: sub, tenant: checked(checkTenant, tenant!), id: checked(checkContractId, id!), force };
  return writeState(renderStateOutcome(await runState(request, io), json), sub, io);
}
