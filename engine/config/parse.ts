/** Parse and validate contract-sync.yaml. Pure: text in, config and diagnostics out. */
import { compareDiagnostics, isError, type Diagnostic } from '../diagnostic/diagnostic.ts';
import { COLLECTION_FIELDS, type CollectionFieldName } from '../model/fields.ts';
import { compileSchema, type PathSegment, type SchemaCheck } from '../model/schema-validator.ts';
import { readPlainYamlMap } from '../yaml/plain-yaml.ts';
import { decodeYamlText, DEFAULT_YAML_LIMITS, diagnosticAt, parseYamlSource, withinStack, type SchemaProblem } from '../yaml/yaml-source.ts';
import { isNotifySecretPath, notifyProblems, notifySecretMessage } from './notify.ts';
import { hasActiveCharacter } from '../text/text-escape.ts';
import { configPathProblems } from './paths.ts';
import { hasPolicies, policiesOf, policyProblems, type RawPolicies } from './policies.ts';
import { configSchema } from './schema.ts';
import { withKeySuggestion } from './suggest-key.ts';
import {
  DEFAULTS,
  type AuditFieldPointers,
  type CollectionMode,
  type NotifyChannel,
  type Config,
  type SecretRef,
  type StateConfig,
  type TenantConfig,
} from './types.ts';

export interface ConfigResult {
  /** Present when there is no error. */
  readonly config?: Config;
  readonly diagnostics: Diagnostic[];
}

let check: SchemaCheck | undefined;

const SECRET_KEYS = new Set(['clientSecret', 'previousClientSecret']);

/** The path of the secret reference `path` is inside of, if any. */
function secretPathOf(path: readonly PathSegment[]): readonly PathSegment[] | undefined {
  if (path[0] === 'tenants' && SECRET_KEYS.has(String(path[2]))) return path.slice(0, 3);
  if (isNotifySecretPath(path)) return path.slice(0, 3);
  if (path[0] === 'state' && path[1] === 'url') return path.slice(0, 2);
  return undefined;
}

const LITERAL_SECRET = 'expected a secret reference { env: NAME } or { file: PATH }; literal secrets are not allowed in this file';

function schemaProblems(value: unknown): SchemaProblem[] {
  check ??= compileSchema(configSchema());
  const issues = check(value, { sensitive: (path) => secretPathOf(path) !== undefined });
  const problems: SchemaProblem[] = [];
  const reportedSecrets = new Set<string>();
  for (const issue of issues) {
    const secretPath = secretPathOf(issue.path);
    if (secretPath === undefined || (issue.keyword === 'required' && issue.path.length < 3)) {
      const message = issue.atKey === true ? withKeySuggestion(configSchema(), issue.path, issue.message) : issue.message;
      problems.push({ path: issue.path, atKey: issue.atKey, code: 'config', message });
      continue;
    }
    // A secret reference fails both of its forms at once; say it once, and never quote the value.
    const key = JSON.stringify(secretPath);
    if (reportedSecrets.has(key)) continue;
    reportedSecrets.add(key);
    const message = secretPath[0] === 'notify' ? notifySecretMessage(secretPath, value) : LITERAL_SECRET;
    problems.push({ path: secretPath, code: 'literal-secret', message });
  }
  return problems;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** Plain http:// is allowed only to a loopback host (the emulator, a local proxy); the config refuses the rest. */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK.test(url.hostname);
}

/** A written URL held to the config's rules: https://, http:// only to a loopback host, no credentials. */
function urlProblemsAt(path: PathSegment[], value: string): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push({ path, code: 'config', message: `expected an https:// URL, got ${url.protocol}` });
    return problems;
  }
  if (url.protocol === 'http:' && !isLoopbackHttp(url)) {
    problems.push({ path, code: 'insecure-url', message: `http:// is allowed only for loopback hosts; use https:// for ${url.hostname}` });
  }
  if (url.username !== '' || url.password !== '') {
    problems.push({ path, code: 'literal-secret', message: 'credentials in a URL are not allowed; configure the tenant clients instead' });
  }
  return problems;
}

function urlProblems(raw: Record<string, unknown>): SchemaProblem[] {
  const urls: [PathSegment[], unknown][] = [
    [['api', 'baseUrl'], (raw.api as Record<string, unknown> | undefined)?.baseUrl],
    [['auth', 'url'], (raw.auth as Record<string, unknown> | undefined)?.url],
    [['auth', 'tokenEndpoint'], (raw.auth as Record<string, unknown> | undefined)?.tokenEndpoint],
  ];
  return urls.flatMap(([path, value]) => (typeof value === 'string' && URL.canParse(value) ? urlProblemsAt(path, value) : []));
}

/** Every check of the config as written beyond its schema. */
function ruleProblems(raw: Record<string, unknown>): SchemaProblem[] {
  return [...urlProblems(raw), ...configPathProblems(raw), ...notifyProblems(raw, urlProblemsAt)];
}

/** `U+0000`: the first character of `text` that escapeForTerminal would make visible. */
function firstActive(text: string): string {
  for (const char of text) {
    if (hasActiveCharacter(char)) return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return '';
}

/**
 * Every string of the config, keys included, free of control, bidi and zero-width characters: each
 * is a single-line name, URL, path or reference (a NUL in a clientId passed validate and failed at
 * the token endpoint after another tenant was applied). The value is never quoted: the character is
 * named by its code point.
 */
/** A policy rule's CEL, which may span lines (a YAML block): newlines and tabs are its layout, not hidden text. */
function isExpression(path: readonly PathSegment[]): boolean {
  return path[0] === 'policies' && (path.at(-1) === 'expression' || path.at(-1) === 'messageExpression');
}

function controlProblems(value: unknown, path: PathSegment[] = []): SchemaProblem[] {
  if (typeof value === 'string') {
    return hasActiveCharacter(isExpression(path) ? value.replace(/[\n\t]/g, ' ') : value)
      ? [
          {
            path,
            code: 'config-control-character',
            message: isExpression(path)
              ? `holds a control, invisible or bidirectional character (${firstActive(value.replace(/[\n\t]/g, ' '))})`
              : `holds a control, invisible or bidirectional character (${firstActive(value)}); config values are single-line text`,
          },
        ]
      : [];
  }
  if (value === null || typeof value !== 'object') return [];
  const problems: SchemaProblem[] = [];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) for (const problem of controlProblems(item, [...path, index])) problems.push(problem);
    return problems;
  }
  for (const [key, item] of Object.entries(value)) {
    if (hasActiveCharacter(key)) {
      problems.push({
        path: [...path, key],
        atKey: true,
        code: 'config-control-character',
        message: `the key holds a control, invisible or bidirectional character (${firstActive(key)})`,
      });
      continue;
    }
    for (const problem of controlProblems(item, [...path, key])) problems.push(problem);
  }
  return problems;
}

function isWithin(path: readonly PathSegment[], ancestor: readonly PathSegment[]): boolean {
  return ancestor.length <= path.length && ancestor.every((segment, index) => path[index] === segment);
}

/** `problems` without those a control problem explains: at the same place, or the secret reference holding it. */
function withoutControlled(problems: readonly SchemaProblem[], control: readonly SchemaProblem[]): SchemaProblem[] {
  if (control.length === 0) return [...problems];
  return problems.filter(
    (problem) =>
      !control.some((found) =>
        problem.code === 'literal-secret' ? isWithin(found.path, problem.path) : isWithin(problem.path, found.path) && isWithin(found.path, problem.path),
      ),
  );
}

function collectionModes(raw: RawConfig['collections']): Record<CollectionFieldName, CollectionMode> {
  const modes = {} as Record<CollectionFieldName, CollectionMode>;
  for (const field of COLLECTION_FIELDS) {
    const name = field.name as CollectionFieldName;
    const mode = typeof raw === 'string' ? raw : raw?.[name];
    modes[name] = mode ?? DEFAULTS.collectionMode;
  }
  return modes;
}

/** A tenant as written: the schema allows an integer tenantId. */
type RawTenant = Omit<TenantConfig, 'tenantId'> & { tenantId?: string | number };

/** The config as written, once the schema has accepted it. */
interface RawConfig extends RawPolicies {
  api: {
    baseUrl: string;
    read?: { path: string; pointer?: string; timestamps?: 'utc' | 'error' };
    audit?: { path: string; pointer?: string; fields: AuditFieldPointers };
    patch?: { contentType?: string };
    conflictStatuses?: number[];
    timeoutMs?: number;
  };
  auth: { url: string; realm: string; tokenEndpoint?: string; timeoutMs?: number };
  tenants: Record<string, RawTenant>;
  desired?: { paths?: string[] };
  collections?: CollectionMode | Partial<Record<CollectionFieldName, CollectionMode>>;
  rate?: Partial<Config['rate']>;
  retry?: Partial<Config['retry']>;
  state?: { backend: 'file'; path?: string } | { backend: 'postgres'; url: SecretRef; schema?: string };
  safety?: Partial<Config['safety']>;
  notify?: NotifyChannel[];
}

// tenant_id is compared as text: a numeric id written without quotes means the same id.
function tenantOf(raw: RawTenant): TenantConfig {
  const { tenantId, ...rest } = raw;
  return tenantId === undefined ? rest : { ...rest, tenantId: String(tenantId) };
}

/** Apply defaults to a config the schema accepted. */
function withDefaults(raw: RawConfig): Config {
  const state: StateConfig =
    raw.state?.backend === 'postgres'
      ? { backend: 'postgres', url: raw.state.url, ...(raw.state.schema === undefined ? {} : { schema: raw.state.schema }) }
      : { backend: 'file', path: raw.state?.path ?? DEFAULTS.state.path };
  return {
    api: {
      baseUrl: String(raw.api.baseUrl).replace(/\/+$/, ''),
      ...(raw.api.read
        ? {
            read: {
              path: raw.api.read.path,
              pointer: raw.api.read.pointer ?? DEFAULTS.readPointer,
              timestamps: raw.api.read.timestamps ?? DEFAULTS.readTimestamps,
            },
          }
        : {}),
      ...(raw.api.audit ? { audit: { path: raw.api.audit.path, pointer: raw.api.audit.pointer ?? DEFAULTS.auditPointer, fields: raw.api.audit.fields } } : {}),
      patch: { contentType: raw.api.patch?.contentType ?? DEFAULTS.patchContentType },
      conflictStatuses: raw.api.conflictStatuses ?? [...DEFAULTS.conflictStatuses],
      timeoutMs: raw.api.timeoutMs ?? DEFAULTS.timeoutMs,
    },
    auth: {
      url: String(raw.auth.url).replace(/\/+$/, ''),
      realm: raw.auth.realm,
      ...(raw.auth.tokenEndpoint === undefined ? {} : { tokenEndpoint: raw.auth.tokenEndpoint }),
      timeoutMs: raw.auth.timeoutMs ?? DEFAULTS.authTimeoutMs,
    },
    tenants: Object.fromEntries(Object.entries(raw.tenants).map(([key, tenant]) => [key, tenantOf(tenant)])),
    desired: { paths: raw.desired?.paths ?? DEFAULTS.desiredPaths },
    collections: collectionModes(raw.collections),
    rate: { ...DEFAULTS.rate, ...raw.rate },
    retry: { ...DEFAULTS.retry, ...raw.retry },
    state,
    safety: { ...DEFAULTS.safety, ...raw.safety },
    ...(raw.notify === undefined ? {} : { notify: raw.notify }),
  };
}

/** Reads the config: the fast way when it can vouch for the result, else with the `yaml` package. */
export function parseConfig(file: string, content: Uint8Array | string): ConfigResult {
  const text = decodeYamlText(file, content, DEFAULT_YAML_LIMITS);
  if (typeof text !== 'string') return { diagnostics: [text] };
  return withinStack(file, () => parseFast(text) ?? parseExactly(file, text));
}

/**
 * The `yaml` package's path alone: exact messages and positions for every problem. parseConfig
 * falls back to it; exported so that tests can hold the fast path to it.
 */
export function parseConfigExactly(file: string, content: Uint8Array | string): ConfigResult {
  const text = decodeYamlText(file, content, DEFAULT_YAML_LIMITS);
  if (typeof text !== 'string') return { diagnostics: [text] };
  return parseExactly(file, text);
}

/**
 * The fast path: a config that js-yaml reads and that has no problem at all. Anything else (a
 * problem to report at its position, something only the `yaml` package reads exactly) returns
 * undefined.
 */
function parseFast(text: string): ConfigResult | undefined {
  const value = readPlainYamlMap(text, DEFAULT_YAML_LIMITS);
  // Rules are read by the exact path: their expressions' positions are needed to report compile errors.
  if (value === undefined || hasPolicies(value) || schemaProblems(value).length > 0 || ruleProblems(value).length > 0 || controlProblems(value).length > 0)
    return undefined;
  const raw: object = value;
  return { config: withDefaults(raw as RawConfig), diagnostics: [] };
}

function parseExactly(file: string, text: string): ConfigResult {
  const parsed = parseYamlSource(file, text);
  if (!parsed.ok) return { diagnostics: parsed.diagnostics };
  const { source, value } = parsed;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const message = value === null ? 'the config file is empty' : 'expected a map with api, auth and tenants';
    return { diagnostics: [...parsed.diagnostics, diagnosticAt(source, { path: [], code: 'config', message })] };
  }
  // One message per place: a control character is the reason a value fails its pattern, or a secret reference its form.
  const control = controlProblems(value);
  const schema = schemaProblems(value);
  // The checks across rules assume the shapes the schema guarantees.
  const policies = schema.length === 0 ? policyProblems(value as RawConfig) : [];
  const problems = [...withoutControlled(schema, control), ...policies, ...ruleProblems(value as Record<string, unknown>), ...control];
  const diagnostics = [...parsed.diagnostics, ...problems.map((problem) => diagnosticAt(source, problem))].sort(compareDiagnostics);
  if (diagnostics.some(isError)) return { diagnostics };
  const config = withDefaults(value as RawConfig);
  if (!hasPolicies(value as Record<string, unknown>)) return { config, diagnostics };
  return { config: { ...config, ...policiesOf(value as RawConfig, source, text) }, diagnostics };
}
