/** Emulator seed files: parse (YAML or JSON) and validate against specs/emulator-seed.schema.json. */
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { compileSchema, findDuplicateMembers, memberIdentity, type ContractFields, type SchemaCheck } from '../engine/model/index.ts';
import { SEED_DEFAULTS, seedSchema } from './seed-schema.ts';

export interface SeedClient {
  readonly clientId: string;
  readonly secret: string;
  readonly previousSecret?: string;
  readonly scopes: readonly string[];
}

export interface SeedTenant {
  readonly clients?: readonly SeedClient[];
  readonly contracts?: Readonly<Record<string, ContractFields>>;
}

/** Optional behaviours of a service where it publishes nothing (emulator/README.md); all off by default. */
export interface SeedBehaviours {
  /** GET answers `{[readEnvelope]: contract, Links: {...}}`. */
  readonly readEnvelope?: string;
  /** GET writes timestamps without an offset. */
  readonly naiveTimestamps?: boolean;
  /** The only Content-Type a PATCH may have (default application/json). */
  readonly patchContentType?: string;
  /** The status of a conflicting Add/Remove (default 409). */
  readonly conflictStatus?: number;
}

export interface Seed {
  readonly realm: string;
  readonly behaviours?: SeedBehaviours;
  readonly tokenTtlSeconds?: number;
  readonly rateLimit?: { readonly requestsPerSecond: number; readonly burst: number };
  readonly tenants: Readonly<Record<string, SeedTenant>>;
}

/** A seed with its defaults filled in. */
export interface ResolvedSeed extends Seed {
  readonly tokenTtlSeconds: number;
  readonly rateLimit: { readonly requestsPerSecond: number; readonly burst: number };
}

/** A seed the emulator cannot start from; `problems` lists every one, each naming where. */
export class SeedError extends Error {
  readonly code = 'invalid-seed';
  readonly problems: readonly string[];
  constructor(source: string, problems: readonly string[]) {
    super(`invalid emulator seed ${source}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.problems = problems;
  }
}

let seedCheck: SchemaCheck | undefined;

const MAP_KEYS = new Set(['tenants', 'contracts']);

function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(root)';
  // Tenant names and contract ids that look like numbers are still map keys, not list indexes.
  return path
    .map((segment, i) => (typeof segment === 'number' && !MAP_KEYS.has(String(path[i - 1])) ? `[${segment}]` : `${i === 0 ? '' : '.'}${segment}`))
    .join('');
}

/** Problems no schema can express: a clientId used twice, a collection member listed twice. */
interface Problem {
  readonly path: (string | number)[];
  readonly atKey?: boolean;
  readonly message: string;
}

function crossChecks(seed: Seed): Problem[] {
  const problems: Problem[] = [];
  const owners = new Map<string, string>();
  for (const [tenant, { clients = [], contracts = {} }] of Object.entries(seed.tenants)) {
    for (const [index, client] of clients.entries()) {
      const owner = owners.get(client.clientId);
      if (owner !== undefined) {
        problems.push({ path: ['tenants', tenant, 'clients', index, 'clientId'], message: `clientId "${client.clientId}" is already used by tenant ${owner}` });
      }
      owners.set(client.clientId, tenant);
      if (client.previousSecret !== undefined && client.previousSecret === client.secret) {
        problems.push({ path: ['tenants', tenant, 'clients', index, 'previousSecret'], message: 'previousSecret equals secret' });
      }
    }
    for (const [id, contract] of Object.entries(contracts)) {
      for (const { field, index, member } of findDuplicateMembers(contract as Record<string, unknown>)) {
        const identity = memberIdentity(field, member);
        problems.push({ path: ['tenants', tenant, 'contracts', id, field.name, index], message: `duplicate ${field.name} member ${identity}` });
      }
    }
  }
  return problems;
}

function yamlKeys(path: readonly (string | number)[]): (string | number)[] {
  return path.map((segment, i) => (typeof segment === 'number' && MAP_KEYS.has(String(path[i - 1])) ? String(segment) : segment));
}

/** `:line:column` of the node at `path` (of its key, for an unknown key), or of its nearest ancestor. */
function lineOf(doc: Document | undefined, lines: LineCounter | undefined, path: readonly (string | number)[], atKey = false): string {
  if (!doc || !lines) return '';
  const keys = yamlKeys(path);
  if (atKey && keys.length > 0) {
    const parent = doc.getIn(keys.slice(0, -1), true);
    const pair = isMap(parent) ? parent.items.find((item) => isScalar(item.key) && String(item.key.value) === String(keys.at(-1))) : undefined;
    const offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
    if (offset !== undefined) {
      const { line, col } = lines.linePos(offset);
      return `:${line}:${col}`;
    }
  }
  for (let depth = keys.length; depth >= 0; depth -= 1) {
    const node = doc.getIn(keys.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    const offset = node?.range?.[0];
    if (offset === undefined) continue;
    const { line, col } = lines.linePos(offset);
    return `:${line}:${col}`;
  }
  return '';
}

function isSecretPath(path: readonly (string | number)[]): boolean {
  return path.at(-1) === 'secret' || path.at(-1) === 'previousSecret';
}

function check(value: unknown, source: string, doc?: Document, lines?: LineCounter): ResolvedSeed {
  seedCheck ??= compileSchema(seedSchema());
  const issues = seedCheck(value, { sensitive: isSecretPath });
  // A secret of the wrong type is named by its expected type only, never quoted.
  const problems: Problem[] = issues.map((issue) => ({
    path: [...issue.path],
    atKey: issue.atKey,
    message: isSecretPath(issue.path) && issue.keyword === 'type' ? 'expected a string' : issue.message,
  }));
  if (problems.length === 0) problems.push(...crossChecks(value as Seed));
  if (problems.length > 0) {
    throw new SeedError(
      source,
      problems.map(({ path, atKey, message }) => `${source}${lineOf(doc, lines, path, atKey)} ${formatPath(path)}: ${message}`),
    );
  }
  const seed = value as Seed;
  return {
    ...seed,
    tokenTtlSeconds: seed.tokenTtlSeconds ?? SEED_DEFAULTS.tokenTtlSeconds,
    rateLimit: seed.rateLimit ?? SEED_DEFAULTS.rateLimit,
  };
}

/** A seed given as an object (in-process use). Throws SeedError listing every problem. */
export function resolveSeed(seed: unknown, source = '(seed object)'): ResolvedSeed {
  return check(structuredClone(seed), source);
}

/** A seed file's text, YAML or JSON. Throws SeedError listing every problem with line:column. */
export function parseSeed(text: string, source: string): ResolvedSeed {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SeedError(
      source,
      doc.errors.map((error) => {
        const { line, col } = lines.linePos(error.pos[0]);
        return `${source}:${line}:${col} ${error.message.split('\n')[0]}`;
      }),
    );
  }
  return check(doc.toJS({ maxAliasCount: 100 }), source, doc, lines);
}

/** Adapter: a seed file from disk. */
export async function readSeedFile(file: string, source = file): Promise<ResolvedSeed> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SeedError(source, [code === 'ENOENT' ? `${source}: file not found` : `${source}: cannot read (${code ?? 'error'})`]);
  }
  return parseSeed(text, source);
}
