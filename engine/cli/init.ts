/** `contract-sync init`: scaffolds a repository of contracts (engine/init decides what it holds). */
import path from 'node:path';
import { renderNextSteps } from '../init/render-next-steps.ts';
import { CI_PROVIDERS, CONFIG_FILE, GITIGNORE_FILE, tenantNameProblem, type CiProvider } from '../init/scaffold.ts';
import { installedFor } from '../init/schema-path.ts';
import { packageRoot } from '../package/package-root.ts';
import { runInit } from '../run/init.ts';
import { EXIT, parseCommand, UsageError, type CliIo, type ExitCode } from './io.ts';

export const INIT_HELP = `Usage: contract-sync init [--dir DIR] [--tenant T]... [--ci github|gitlab|none] [--force]

Writes the files of a new repository of desired state:
  contract-sync.yaml                  the engine config, commented; each tenant's client secret is
                                      read from an environment variable (never written in a file)
  contracts/<tenant>/example.yaml     one desired-state file per tenant, managing no contract yet
                                      (the service has no create endpoint: contract-sync manages
                                      contracts that exist; the file says how to add them)
  .gitignore                          .contract-sync/ (the file state store) and node_modules/,
                                      appended to an existing .gitignore, lines it has left out
  the CI file                         .github/workflows/contract-sync.yml (the contract-sync
                                      GitHub Action) or .gitlab-ci.yml
Then edit the URLs and client ids in contract-sync.yaml and run contract-sync validate.

Options:
  --dir DIR       the repository's root (default: .); created when missing
  --tenant T      a tenant key (repeatable; default: example): letters, digits, ".", "_", "-"
  --ci CI         github, gitlab or none (default: github when DIR/.github exists, else none)
  --force         overwrite files that exist (default: list them, write nothing, exit 1)

Exit codes: 0 written, 1 a file exists (without --force) or an argument is wrong.
`;

const DEFAULT_TENANT = 'example';

export async function initCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, helped } = parseCommand(io, INIT_HELP, args, false, {
    dir: { type: 'string', default: '.' },
    tenant: { type: 'string', multiple: true },
    ci: { type: 'string' },
    force: { type: 'boolean', default: false },
  });
  if (helped) return EXIT.ok;
  const tenants = parseTenants(values.tenant ?? [DEFAULT_TENANT]);
  const root = path.resolve(io.cwd, values.dir);
  const result = await runInit({ kind: 'init', root, tenants, ...(values.ci === undefined ? {} : { ci: parseCi(values.ci) }), force: values.force });
  function shown(file: string): string {
    return path.relative(io.cwd, path.join(root, file)) || '.';
  }
  if (result.kind === 'exists') {
    for (const file of result.existing) io.stderr.write(`contract-sync init: ${shown(file)} exists\n`);
    io.stderr.write(`contract-sync init: nothing was written; --force overwrites ${result.existing.length === 1 ? 'it' : 'these files'}\n`);
    return EXIT.error;
  }
  for (const file of result.files) io.stdout.write(`${result.existing.includes(file) ? 'overwrote' : 'created'}  ${shown(file)}\n`);
  if (result.gitignore !== undefined) io.stdout.write(`${result.gitignore}  ${shown(GITIGNORE_FILE)}\n`);
  io.stdout.write(
    renderNextSteps({
      config: values.dir === '.' ? CONFIG_FILE : shown(CONFIG_FILE),
      dir: values.dir === '.' ? undefined : shown(''),
      ci: result.ci,
      installed: installedFor(root),
      specs: shown(path.relative(root, path.join(packageRoot(), 'specs'))),
    }),
  );
  return EXIT.ok;
}

function parseTenants(tenants: readonly string[]): string[] {
  const problems = tenants.map(tenantNameProblem).filter((problem) => problem !== undefined);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  const twice = tenants.filter((tenant, index) => tenants.indexOf(tenant) !== index);
  if (twice.length > 0) throw new UsageError(`--tenant ${twice[0] ?? ''} is given more than once`);
  return [...tenants];
}

function parseCi(value: string): CiProvider {
  const ci = CI_PROVIDERS.find((provider) => provider === value);
  if (ci === undefined) throw new UsageError(`--ci must be one of ${CI_PROVIDERS.join(', ')}; got "${value}"`);
  return ci;
}
