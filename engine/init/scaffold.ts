/**
 * `contract-sync init`'s content: the files of a new contracts repository, as data. Pure: the CLI
 * checks what already exists and writes them.
 */
import { stringify } from 'yaml';
import { TENANT_PATTERN } from '../model/json-schemas.ts';
import { githubWorkflow, gitlabPipeline, type TenantNames } from './ci-templates.ts';

export type CiProvider = 'github' | 'gitlab' | 'none';
export const CI_PROVIDERS: readonly CiProvider[] = ['github', 'gitlab', 'none'];

export interface ScaffoldOptions {
  /** Tenant keys, in the order given; at least one. */
  readonly tenants: readonly string[];
  readonly ci: CiProvider;
  /**
   * The `$schema` targets: from the repository's root to config.schema.json, and from
   * contracts/<tenant>/ to contracts.schema.json. Default: node_modules/contract-sync/specs of the
   * root (the CLI passes where the running package actually is, engine/init/schema-path.ts).
   */
  readonly schemas?: { readonly config: string; readonly contracts: string };
}

export interface ScaffoldFile {
  /** Relative to the repository root, `/`-separated. */
  readonly path: string;
  readonly content: string;
}

export type { TenantNames } from './ci-templates.ts';

export const CONFIG_FILE = 'contract-sync.yaml';
export const GITIGNORE_FILE = '.gitignore';
/** The file state store's directory (the config's default `state.path` lives below it). */
export const STATE_DIR = '.contract-sync/';
export const GITIGNORE_ENTRIES: readonly string[] = [STATE_DIR, 'node_modules/'];
/** Where the package's schemas are once contract-sync is a dependency of the repository. */
const INSTALLED_SPECS = 'node_modules/contract-sync/specs';
const DEFAULT_SCHEMAS = { config: `${INSTALLED_SPECS}/config.schema.json`, contracts: `../../${INSTALLED_SPECS}/contracts.schema.json` };

const TENANT_KEY = new RegExp(TENANT_PATTERN);

/** Why `name` cannot be a tenant key of contract-sync.yaml, or undefined when it can. */
export function tenantNameProblem(name: string): string | undefined {
  if (TENANT_KEY.test(name)) return undefined;
  return `tenant "${name}" is not a valid tenant key: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`;
}

/**
 * The environment variable each tenant's client secret is read from: `acme-eu` -> `ACME_EU_CLIENT_SECRET`.
 * Keys that differ only in punctuation would share a name, so later ones get a number.
 */
export function tenantNames(tenants: readonly string[]): TenantNames[] {
  const used = new Set<string>();
  return tenants.map((tenant) => {
    const stem = tenant.toUpperCase().replace(/[^A-Z0-9]/g, '_');
    const base = `${/^[0-9]/.test(stem) ? 'TENANT_' : ''}${stem}_CLIENT_SECRET`;
    let secretEnv = base;
    for (let n = 2; used.has(secretEnv); n += 1) secretEnv = `${base}_${n}`;
    used.add(secretEnv);
    return { tenant, secretEnv };
  });
}

/** A YAML scalar for `text`: plain when YAML reads it back as that string, quoted otherwise (`"123"`, `"true"`). */
function scalar(text: string): string {
  return stringify(text).trimEnd();
}

export function contractsFilePath(tenant: string): string {
  return `contracts/${tenant}/example.yaml`;
}

function configFile(names: readonly TenantNames[], schema: string): string {
  const tenantBlocks = names.map(({ tenant, secretEnv }) =>
    [
      `  ${scalar(tenant)}:`,
      `    clientId: contract-sync-${tenant}`,
      `    clientSecret: { env: ${secretEnv} }`,
      `    # previousClientSecret: { env: ${secretEnv}_OLD }   # while rotating: tried once on invalid_client`,
      `    # secretRotatedAt: 2026-01-31   # validate warns once the secret is 12 months old`,
      `    paths: [${JSON.stringify(`contracts/${tenant}/**`)}]   # the only files allowed to name this tenant`,
    ].join('\n'),
  );
  return `# yaml-language-server: $schema=${schema}
# contract-sync engine config; every key is described in the package's README (Config reference).
# Secrets are never written here: each is named by an environment variable ({ env: NAME }) or a
# file holding only the secret ({ file: /run/secrets/name }). http:// is refused except for loopback.

api:
  baseUrl: https://cms.example.com          # {base_url}: PATCH goes to {baseUrl}/contract/:ContractId
  # read: { path: "/contract/{id}" }        # if the service lets you read a contract: enables
  #                                         # plan --refresh, drift and import (quoted: braces)

auth:
  url: https://login.example.com            # {auth_url}: discovery at {url}/realms/{realm}/.well-known/openid-configuration
  realm: cms

# One OAuth client (client-credentials grant) per tenant; tokens are never shared between tenants.
tenants:
${tenantBlocks.join('\n')}

desired: { paths: ["contracts/**/*.yaml"] }  # the desired-state files

# authoritative: members of Company, OrganizationalUnit, Owner and Type that git does not list are
# removed from the service. additive: never removed. Or one mode per field: { Owner: additive }.
collections: authoritative

rate: { requestsPerSecond: 5, concurrency: 2, maxInFlight: 16 }   # per tenant; maxInFlight across tenants
retry: { maxAttempts: 5 }

# What contract-sync last applied, per contract (git-ignored). Keep it between CI runs (the CI
# file written with this one caches it), or use { backend: postgres, url: { env: DATABASE_URL } }.
state: { backend: file, path: .contract-sync/state }

# Policy rules: what your organisation forbids, written in CEL and checked by validate, plan, apply
# and drift (the package's docs/policies.md; a DORA pack is in its examples/policies/). Their tests
# are in ${POLICY_TESTS_DIR}/: npx contract-sync policy test
policies:
  - name: valid-to-not-before-valid-from
    on: contract                              # every desired contract (or change: every planned one)
    matchConditions:                          # the rule applies where all are true
      - name: has-both-dates
        expression: has(object.ValidFrom) && has(object.ValidTo)
    validations:                              # each must be true; a false one is a finding
      - expression: timestamp(object.ValidTo) >= timestamp(object.ValidFrom)
        messageExpression: '"ValidTo " + object.ValidTo + " is before ValidFrom " + object.ValidFrom'
    action: deny                              # deny fails the run; warn is shown; override: apply --override-policy
`;
}

/** Where init writes the example rule's tests (the default directory of `policy test`). */
export const POLICY_TESTS_DIR = 'policy-tests';

/** The example rule's cases: one contract it lets pass, one it denies. */
function policyTestsFile(): string {
  return `# Cases for the policy rules of contract-sync.yaml: npx contract-sync policy test
# Each case is a contract (checked as desired-state files are) and every finding it must give.
cases:
  - name: a contract whose dates are in order passes
    contract:
      ValidFrom: 2027-01-01T00:00:00Z
      ValidTo: 2027-12-31T23:59:59Z
    expect: []

  - name: a contract that ends before it starts is denied
    id: "4711"
    contract:
      ValidFrom: 2027-01-01T00:00:00Z
      ValidTo: 2026-12-31T23:59:59Z
    expect:
      - policy: valid-to-not-before-valid-from
        action: deny
        message: ValidTo 2026-12-31T23:59:59Z is before ValidFrom 2027-01-01T00:00:00Z
`;
}

function contractsFile(tenant: string, schema: string): string {
  const importTarget = `contracts/${tenant}/imported.yaml`;
  return `# yaml-language-server: $schema=${schema}
# The desired state of tenant ${tenant}'s contracts, keyed by ContractId. Any *.yaml below
# contracts/${tenant}/ may hold more; each names one tenant.
#
# contract-sync manages contracts that already exist on the service: the service has no endpoint
# to create or delete one. This file manages none yet. To bring a contract under management:
#   - with api.read configured: npx contract-sync import --tenant ${tenant} --id <ContractId> --out ${importTarget}
#     (writes the contract as the service holds it: the next plan has no op), or
#   - by hand: replace "contracts: {}" below with the commented block, put a real ContractId in
#     place of REPLACE-WITH-A-CONTRACT-ID, and keep only the fields contract-sync should manage.
# A field left out is never touched. A collection written here (Company, OrganizationalUnit,
# Owner, Type) is kept to exactly these members: the others are removed (see "collections" in
# contract-sync.yaml); "Company: []" removes every company.
tenant: ${scalar(tenant)}
contracts: {}
# contracts:
#   "REPLACE-WITH-A-CONTRACT-ID":
#     Name: Facility cleaning 2027
#     Description: Cleaning of all office buildings
#     ValidFrom: 2027-01-01T00:00:00Z
#     ValidTo: 2027-12-31T23:59:59Z
#     SupplierNoticePeriod: { Days: 30 }
#     Company:
#       - { Id: 12, RelationType: Supplier }
`;
}

/** `.contract-sync`, `/.contract-sync/` and `.contract-sync/` ignore the same directory at the root. */
function normaliseIgnoreLine(line: string): string {
  return line.trim().replace(/^\//, '').replace(/\/$/, '');
}

/** `.gitignore` with the entries contract-sync needs appended, or undefined when it has them all. */
export function mergeGitignore(existing: string | undefined): string | undefined {
  const present = new Set((existing ?? '').split(/\r?\n/).map(normaliseIgnoreLine));
  const missing = GITIGNORE_ENTRIES.filter((entry) => !present.has(normaliseIgnoreLine(entry)));
  if (missing.length === 0) return undefined;
  const before = existing === undefined || existing === '' ? '' : existing.endsWith('\n') ? `${existing}\n` : `${existing}\n\n`;
  return `${before}# contract-sync: the file state store, and the installed packages\n${missing.join('\n')}\n`;
}

/** Where the CI file of `ci` goes, or undefined for none. */
export function ciFilePath(ci: CiProvider): string | undefined {
  if (ci === 'github') return '.github/workflows/contract-sync.yml';
  if (ci === 'gitlab') return '.gitlab-ci.yml';
  return undefined;
}

/**
 * Every file of a new repository except `.gitignore` (see mergeGitignore): the config (with an
 * example policy rule), one desired-state file per tenant, the rule's tests, and the CI file. Tenant keys must be valid and distinct.
 */
export function scaffoldRepository(options: ScaffoldOptions): ScaffoldFile[] {
  if (options.tenants.length === 0) throw new TypeError('scaffoldRepository: at least one tenant is needed');
  for (const tenant of options.tenants) {
    const problem = tenantNameProblem(tenant);
    if (problem !== undefined) throw new TypeError(`scaffoldRepository: ${problem}`);
  }
  if (new Set(options.tenants).size !== options.tenants.length) throw new TypeError('scaffoldRepository: tenants must be distinct');
  const names = tenantNames(options.tenants);
  const schemas = options.schemas ?? DEFAULT_SCHEMAS;
  const files: ScaffoldFile[] = [
    { path: CONFIG_FILE, content: configFile(names, schemas.config) },
    ...names.map(({ tenant }) => ({ path: contractsFilePath(tenant), content: contractsFile(tenant, schemas.contracts) })),
    { path: `${POLICY_TESTS_DIR}/example.yaml`, content: policyTestsFile() },
  ];
  const ciPath = ciFilePath(options.ci);
  if (ciPath !== undefined) files.push({ path: ciPath, content: options.ci === 'github' ? githubWorkflow(names) : gitlabPipeline() });
  return files;
}
