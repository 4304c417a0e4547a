/**
 * The desired state one tenant at a time (issue 14): files are grouped by tenant, and each group is
 * parsed, validated and handed on before the next is parsed, so that a run holds one tenant's
 * contracts, not the whole repository's. Pure: files in, per-tenant contract sets and diagnostics out.
 *
 * The checks across files (a ContractId declared twice, the tenant's paths) are per tenant, so a
 * group validated alone gives what validating every file together gives, provided every file of a
 * tenant is in its group. Grouping uses a cheap sniff of the `tenant:` line; the real parse checks
 * every file against its group, and a sniff that was wrong starts the run over with every file
 * grouped by its parsed tenant (the caller's visitor is told to discard what it did).
 */
import { compareText } from '../compare-text.ts';
import type { Config } from '../config/types.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic.ts';
import { parseDesiredFile } from './parse-file.ts';
import type { ContractSet, DesiredFile } from './types.ts';
import { validateDesiredState } from './validate.ts';

// One top-level `tenant:` line with a value YAML reads as that very string. Anything fancier (a
// tag, an anchor, an escape, a value YAML reads as a boolean or null) is left to the parser.
const TENANT_LINE = /^tenant:[ \t]+(?:"([A-Za-z0-9_.-]+)"|'([A-Za-z0-9_.-]+)'|([A-Za-z][A-Za-z0-9_.-]*))[ \t]*(?:#.*)?\r?$/;
// Any line that could be a top-level key mentioning tenant: more than one and the sniff gives up.
const TENANT_MENTION = /^[?"' \t]*tenant\b/gm;
const NOT_STRINGS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n']);

function textOf(content: DesiredFile['content']): string {
  // latin1: each byte one character, so an ASCII line reads as itself and no byte is rejected.
  return typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1');
}

/** The tenant a file declares, when one plain `tenant:` line says it unambiguously; else undefined. */
export function sniffTenant(file: DesiredFile): string | undefined {
  const text = textOf(file.content);
  const mentions = text.match(TENANT_MENTION);
  if (mentions?.length !== 1) return undefined;
  const start = text.search(TENANT_MENTION);
  const end = text.indexOf('\n', start);
  const match = TENANT_LINE.exec(text.slice(start, end === -1 ? undefined : end));
  if (!match) return undefined;
  const tenant = match[1] ?? match[2] ?? match[3]!;
  return match[3] !== undefined && NOT_STRINGS.has(tenant.toLowerCase()) ? undefined : tenant;
}

/** The tenant validation files a file under: that of its contract set; undefined when it has none. */
export function parsedTenant(file: DesiredFile): string | undefined {
  return parseDesiredFile(file).contractSet?.tenant;
}

export interface TenantFiles {
  /** Undefined: files that declare no valid tenant (they only contribute diagnostics). */
  readonly tenant: string | undefined;
  /** Sorted by path. */
  readonly files: readonly DesiredFile[];
}

/**
 * Files grouped by `tenantOf` (default: the sniff, and the parse where the sniff cannot tell);
 * the group of files without a tenant first, then tenants sorted by name.
 */
export function groupByTenant(
  files: readonly DesiredFile[],
  tenantOf: (file: DesiredFile) => string | undefined = (file) => sniffTenant(file) ?? parsedTenant(file),
): TenantFiles[] {
  const groups = new Map<string | undefined, DesiredFile[]>();
  for (const file of [...files].sort((a, b) => compareText(a.path, b.path))) {
    const tenant = tenantOf(file);
    const group = groups.get(tenant) ?? [];
    groups.set(tenant, group);
    group.push(file);
  }
  const tenants = [...groups.keys()].filter((tenant) => tenant !== undefined).sort(compareText);
  return [...(groups.has(undefined) ? [undefined] : []), ...tenants].map((tenant) => ({ tenant, files: groups.get(tenant)! }));
}

export interface TenantVisitor {
  /**
   * One tenant's valid contract sets, in path order, right after its files were validated. `errors`:
   * errors found so far, this tenant's included (a run with any writes nothing, so it may stop planning).
   */
  tenant(tenant: string, contractSets: readonly ContractSet[], progress: { readonly errors: number }): Promise<void> | void;
  /** A sniff was wrong: everything visited so far is to be discarded; the tenants come again. */
  restart(): Promise<void> | void;
}

export interface ByTenantResult {
  readonly errors: Diagnostic[];
  readonly warnings: Diagnostic[];
  /** Valid contracts, every tenant. */
  readonly contracts: number;
  /** Files with a contract set or a diagnostic (what `validate` counts). */
  readonly files: number;
}

async function visitGroups(groups: readonly TenantFiles[], config: Pick<Config, 'tenants'>, visitor: TenantVisitor): Promise<ByTenantResult | 'misgrouped'> {
  const diagnostics: Diagnostic[] = [];
  const files = new Set<string>();
  let errors = 0;
  let contracts = 0;
  for (const group of groups) {
    const result = validateDesiredState(group.files, config);
    if (result.contractSets.some((set) => set.tenant !== group.tenant)) return 'misgrouped';
    diagnostics.push(...result.errors, ...result.warnings);
    errors += result.errors.length;
    for (const diagnostic of [...result.errors, ...result.warnings]) files.add(diagnostic.file);
    for (const set of result.contractSets) {
      files.add(set.file);
      contracts += set.contracts.length;
    }
    if (group.tenant !== undefined && result.contractSets.length > 0) await visitor.tenant(group.tenant, result.contractSets, { errors });
  }
  // The order validateDesiredState gives: each file is in one group, so sorting the groups'
  // diagnostics together orders them as sorting all of them at once does.
  diagnostics.sort(compareDiagnostics);
  return {
    errors: diagnostics.filter((d) => d.severity === 'error'),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
    contracts,
    files: files.size,
  };
}

/**
 * Validates `files` tenant by tenant, calling `visitor.tenant` for each tenant with valid contract
 * sets. The diagnostics are those of validateDesiredState(files, config), in the same order.
 * `options.sniff` replaces sniffTenant (tests: a sniff that is wrong).
 */
export async function validateByTenant(
  files: readonly DesiredFile[],
  config: Pick<Config, 'tenants'>,
  visitor: TenantVisitor,
  options: { readonly sniff?: (file: DesiredFile) => string | undefined } = {},
): Promise<ByTenantResult> {
  const sniff = options.sniff ?? sniffTenant;
  const result = await visitGroups(
    groupByTenant(files, (file) => sniff(file) ?? parsedTenant(file)),
    config,
    visitor,
  );
  if (result !== 'misgrouped') return result;
  await visitor.restart();
  const regrouped = await visitGroups(groupByTenant(files, parsedTenant), config, visitor);
  if (regrouped === 'misgrouped') throw new Error('validateByTenant: files grouped by their parsed tenant did not validate as that tenant');
  return regrouped;
}
