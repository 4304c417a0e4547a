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
import { compareText } from '../text/compare-text.ts';
import type { Config } from '../config/types.ts';
import { compareDiagnostics, type Diagnostic } from '../diagnostic/diagnostic.ts';
import { parseDesiredFile } from './parse-file.ts';
import type { ContractSet, DesiredFile, DesiredFileList } from './types.ts';
import { validateDesiredState } from './validate.ts';

// One top-level `tenant:` line with a value YAML reads as that very string. Anything fancier (a
// tag, an anchor, an escape, a value YAML reads as a boolean or null) is left to the parser.
const TENANT_LINE = /^tenant:[ \t]+(?:"([A-Za-z0-9_.-]+)"|'([A-Za-z0-9_.-]+)'|([A-Za-z][A-Za-z0-9_.-]*))[ \t]*(?:#.*)?\r?$/;
const NOT_STRINGS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n']);

const TENANT = 'tenant';
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** What may come before `tenant` on a line that could be a top-level key mentioning it: `?`, a quote, white space. */
function isKeyLead(code: number): boolean {
  return code === 0x3f || code === 0x22 || code === 0x27 || code === 0x20 || code === 0x09;
}

/** A character of a word, as the ASCII `\b` of a regular expression counts it. */
function isWordCharacter(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
}

/** A file's bytes, or its text as one character a byte; read without copying either. */
interface Scanned {
  readonly length: number;
  indexOf(word: string, from: number): number;
  codeAt(index: number): number;
  /** The line from `start` up to the next line feed, as text (latin1: each byte one character). */
  lineFrom(start: number): string;
}

function scannedOf(content: DesiredFile['content']): Scanned {
  if (typeof content === 'string') {
    return {
      length: content.length,
      indexOf: (word, from) => content.indexOf(word, from),
      codeAt: (index) => content.charCodeAt(index),
      lineFrom: (start) => {
        const end = content.indexOf('\n', start);
        return content.slice(start, end === -1 ? undefined : end);
      },
    };
  }
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  return {
    length: bytes.length,
    indexOf: (word, from) => bytes.indexOf(word, from, 'latin1'),
    codeAt: (index) => bytes[index]!,
    lineFrom: (start) => {
      const end = bytes.indexOf(LINE_FEED, start);
      return bytes.toString('latin1', start, end === -1 ? undefined : end);
    },
  };
}

/**
 * Where the lines start that could be a top-level key mentioning tenant (what `/^[?"' \t]*tenant\b/gm`
 * matches), the first two at most: one `indexOf` per occurrence of the word instead of a regular
 * expression tried at every line of the file.
 */
function tenantMentions(scanned: Scanned): number[] {
  const starts: number[] = [];
  for (let at = scanned.indexOf(TENANT, 0); at !== -1 && starts.length < 2; at = scanned.indexOf(TENANT, at + 1)) {
    const after = at + TENANT.length;
    if (after < scanned.length && isWordCharacter(scanned.codeAt(after))) continue;
    let start = at;
    while (start > 0 && isKeyLead(scanned.codeAt(start - 1))) start -= 1;
    const before = start === 0 ? LINE_FEED : scanned.codeAt(start - 1);
    if (before === LINE_FEED || before === CARRIAGE_RETURN) starts.push(start);
  }
  return starts;
}

/** The tenant a file declares, when one plain `tenant:` line says it unambiguously; else undefined. */
export function sniffTenant(file: DesiredFile): string | undefined {
  const scanned = scannedOf(file.content);
  // More than one line that could be a top-level key mentioning tenant: the sniff gives up.
  const mentions = tenantMentions(scanned);
  if (mentions.length !== 1) return undefined;
  const match = TENANT_LINE.exec(scanned.lineFrom(mentions[0]!));
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

/**
 * The first reading keeps files' contents up to this many bytes (content length), so that a
 * repository of this size or less is read once; beyond it, a file is read again when its tenant
 * comes. What a run holds of the desired state is this and the tenant it is at.
 */
export const KEPT_FROM_GROUPING = 64 * 1024 * 1024;

/** Files read at a time while grouping: each is sniffed (or parsed) and let go before the next batch. */
const GROUPING_BATCH = 16;

/** A tenant's paths, sorted; the files themselves are read when the tenant comes. */
interface TenantPaths {
  readonly tenant: string | undefined;
  readonly paths: readonly string[];
}

/** Files already in memory, as a list read from them. */
function listOf(files: readonly DesiredFile[]): DesiredFileList {
  const byPath = new Map(files.map((file) => [file.path, file]));
  return { paths: [...byPath.keys()], read: async (paths) => paths.map((file) => byPath.get(file)!) };
}

function contentLength(file: DesiredFile): number {
  return typeof file.content === 'string' ? file.content.length : file.content.byteLength;
}

/**
 * Every file of `list` read a batch at a time and grouped by `tenantOf`, as groupByTenant groups
 * them; the contents of the first files, up to `keep.budget` bytes, are kept in `keep.files`.
 */
async function groupListed(
  list: DesiredFileList,
  tenantOf: (file: DesiredFile) => string | undefined,
  keep: { readonly budget: number; readonly files: Map<string, DesiredFile> },
): Promise<TenantPaths[]> {
  const paths = [...list.paths].sort(compareText);
  const groups = new Map<string | undefined, string[]>();
  let kept = 0;
  for (let from = 0; from < paths.length; from += GROUPING_BATCH) {
    for (const file of await list.read(paths.slice(from, from + GROUPING_BATCH))) {
      const tenant = tenantOf(file);
      const group = groups.get(tenant) ?? [];
      groups.set(tenant, group);
      group.push(file.path);
      const length = contentLength(file);
      if (kept + length <= keep.budget) {
        keep.files.set(file.path, file);
        kept += length;
      }
    }
  }
  const tenants = [...groups.keys()].filter((tenant) => tenant !== undefined).sort(compareText);
  return [...(groups.has(undefined) ? [undefined] : []), ...tenants].map((tenant) => ({ tenant, paths: groups.get(tenant)! }));
}

/** A group's files: those kept from the grouping (let go as they are taken), the others read now. */
async function filesOf(list: DesiredFileList, paths: readonly string[], kept: Map<string, DesiredFile>): Promise<DesiredFile[]> {
  const missing = paths.filter((file) => !kept.has(file));
  const read = missing.length === 0 ? [] : await list.read(missing);
  const readByPath = new Map(read.map((file) => [file.path, file]));
  return paths.map((file) => {
    const found = kept.get(file) ?? readByPath.get(file)!;
    kept.delete(file);
    return found;
  });
}

async function visitGroups(
  list: DesiredFileList,
  groups: readonly TenantPaths[],
  kept: Map<string, DesiredFile>,
  config: Pick<Config, 'tenants'>,
  visitor: TenantVisitor,
): Promise<ByTenantResult | 'misgrouped'> {
  const diagnostics: Diagnostic[] = [];
  const files = new Set<string>();
  let errors = 0;
  let contracts = 0;
  for (const group of groups) {
    const result = validateDesiredState(await filesOf(list, group.paths, kept), config);
    if (result.contractSets.some((set) => set.tenant !== group.tenant)) return 'misgrouped';
    errors += result.errors.length;
    // A loop, not push(...list): a million problems would overflow the stack as arguments.
    for (const diagnostic of [...result.errors, ...result.warnings]) {
      diagnostics.push(diagnostic);
      files.add(diagnostic.file);
    }
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

export interface ByTenantOptions {
  /** Replaces sniffTenant (tests: a sniff that is wrong). */
  readonly sniff?: (file: DesiredFile) => string | undefined;
  /** Bytes of content the grouping keeps for the tenants (default KEPT_FROM_GROUPING). */
  readonly keepBytes?: number;
}

/**
 * Validates `files` tenant by tenant, calling `visitor.tenant` for each tenant with valid contract
 * sets. The diagnostics are those of validateDesiredState(files, config), in the same order.
 * Given a list (files read when asked), every file is read once to group it, and a tenant's files
 * when it comes (those of the first `keepBytes` not again): the run holds one tenant's files, not
 * every file's content.
 */
export async function validateByTenant(
  files: readonly DesiredFile[] | DesiredFileList,
  config: Pick<Config, 'tenants'>,
  visitor: TenantVisitor,
  options: ByTenantOptions = {},
): Promise<ByTenantResult> {
  const list = 'read' in files ? files : listOf(files);
  const sniff = options.sniff ?? sniffTenant;
  const budget = options.keepBytes ?? KEPT_FROM_GROUPING;
  let kept = new Map<string, DesiredFile>();
  const groups = await groupListed(list, (file) => sniff(file) ?? parsedTenant(file), { budget, files: kept });
  const result = await visitGroups(list, groups, kept, config, visitor);
  if (result !== 'misgrouped') return result;
  await visitor.restart();
  kept = new Map();
  const regrouped = await visitGroups(list, await groupListed(list, parsedTenant, { budget, files: kept }), kept, config, visitor);
  if (regrouped === 'misgrouped') throw new Error('validateByTenant: files grouped by their parsed tenant did not validate as that tenant');
  return regrouped;
}
