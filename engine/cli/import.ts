/** `contract-sync import`: reads contracts live and writes the desired-state file that declares them as they are. */
import { CONTRACT_ID_RULE, isContractId } from '../model/json-schemas.ts';
import { runView } from '../output/run-view.ts';
import { runImport } from '../run/import.ts';
import { renderImportOutcome } from '../run/render-outcome.ts';
import { clockOf, EXIT, parseCommand, UsageError, type CliIo, type ExitCode } from './io.ts';
import { WHERE_OPTIONS, whereOf } from './run-args.ts';
import { runEffects } from './run-effects.ts';
import { sayOutcome } from './run-problems.ts';

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
With --out, what was read is also recorded in the state store (under the tenant's lock, as apply
records a contract it read and found equal), so that the next plan from the state store has no op
for the imported contracts. Printed on stdout, nothing is written anywhere.

Credentials: the tenant's client secret, from the env variable or file the config names.
Scopes asked for: core:read.
Logs: on stderr: text lines at a terminal (warnings and errors only), else JSON lines at info;
see the global options --log-format and CONTRACT_SYNC_LOG_LEVEL below.

Exit codes: 0 written, 1 any error (nothing is written then).
`;

function uniqueIds(ids: readonly string[]): string[] {
  for (const id of ids) {
    if (!isContractId(id)) throw new UsageError(`--id ${JSON.stringify(id)} is not a ContractId (${CONTRACT_ID_RULE})`);
  }
  return [...new Set(ids)];
}

export async function importCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals, helped } = parseCommand(io, IMPORT_HELP, args, true, {
    tenant: { type: 'string', multiple: true },
    id: { type: 'string', multiple: true },
    out: { type: 'string' },
    force: { type: 'boolean', default: false },
    ...WHERE_OPTIONS,
  });
  if (helped) return EXIT.ok;
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const tenants = values.tenant ?? [];
  if (tenants.length !== 1) {
    throw new UsageError(
      tenants.length === 0 ? '--tenant is required: a file declares the contracts of one tenant' : `give --tenant once; got ${tenants.join(', ')}`,
    );
  }
  const ids = uniqueIds(values.id ?? []);
  if (ids.length === 0) throw new UsageError('give at least one --id: the service publishes no way to list contracts, so import reads the ones you name');

  // Progress of the reads on stderr: stdout may carry the file.
  const view = runView(io, { shardOn: 'stderr', command: 'import', now: clockOf(io).now });
  const result = await runImport(
    { kind: 'import', where: whereOf(values), tenant: tenants[0]!, ids, ...(values.out === undefined ? {} : { out: values.out }), force: values.force },
    await runEffects(io, { logs: true, onEvent: view.onEvent }),
  );
  view.finish();
  if (result.kind === 'bad-request') throw new UsageError(result.message);
  return sayOutcome(io, renderImportOutcome(result, { tenant: tenants[0]!, ids: ids.length }));
}
