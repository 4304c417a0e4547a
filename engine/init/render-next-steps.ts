/** What `contract-sync init` says after writing its files: what to do next. Pure. */
import type { CiProvider } from './scaffold.ts';

export interface NextSteps {
  /** The config as the user names it from the working directory. */
  readonly config: string;
  /** `--dir`, as shown, when not `.`. */
  readonly dir?: string;
  readonly ci: CiProvider;
  /** This contract-sync is installed for the repository (its node_modules or one above it). */
  readonly installed: boolean;
  /** The specs/ directory the $schema lines point into, as shown. */
  readonly specs: string;
}

/** What to do next, for how init ran: from a copy installed for the repository, or from elsewhere (a global install, a checkout). */
export function renderNextSteps({ config, dir, ci, installed, specs }: NextSteps): string {
  const ciNote =
    ci === 'none'
      ? '  (no CI file: contract-sync init --ci github|gitlab writes one)\n'
      : '  add each tenant secret to the CI settings, named as in the config\n';
  const chdir = dir === undefined ? '' : ` --chdir ${dir}`;
  const install = installed
    ? ''
    : `  npm install --save-dev <contract-sync's packed tarball or git URL>   # in ${dir ?? 'the repository'}: CI and npx run that copy\n`;
  const schemas = installed ? '' : `The $schema lines point into ${specs}, the specs/ of the contract-sync that ran init.\n`;
  return `
Next:
${install}  edit ${config}: api.baseUrl, auth.url, auth.realm and each tenant's clientId
  npx contract-sync validate${chdir}
  npx contract-sync policy test${chdir}   # the example policy rule's cases
${ciNote}${schemas}`;
}
