/**
 * Ajv, compiled once per schema, with its errors turned into messages a person understands:
 * `expected an integer, got "12a"` rather than `must be integer`.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv/dist/2020.js';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema } from './json-schema-type.ts';
import { plural } from '../text/plural.ts';
import { timestampProblem } from './normalise.ts';
import { PRECOMPILED } from './precompiled.ts';
import { SCHEMA_FORMATS } from './schema-formats.ts';

export type PathSegment = string | number;

export interface SchemaIssue {
  /** Where the problem is, from the validated root: `['contracts', '4711', 'Company', 1, 'Id']`. */
  readonly path: readonly PathSegment[];
  /** True when the problem is the key at `path` (an unknown field), not its value. */
  readonly atKey: boolean;
  readonly keyword: string;
  readonly message: string;
}

export interface ValidateOptions {
  /** Values at these paths are never quoted in messages (secrets). */
  readonly sensitive?: (path: readonly PathSegment[]) => boolean;
}

export type SchemaCheck = (value: unknown, options?: ValidateOptions) => SchemaIssue[];

/** The one Ajv setup; `extra` adds the build's code-generation options (scripts/precompile-schemas.ts). */
export function createAjv(extra: Options = {}): Ajv2020 {
  // Loaded on first use: Ajv and compiling a schema dominate start-up, and a build's validate needs neither.
  const { Ajv2020: AjvClass } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof AjvModule;
  const ajv = new AjvClass({ allErrors: true, strict: true, strictNumbers: true, allowUnionTypes: true, verbose: true, ...extra });
  for (const [name, format] of Object.entries(SCHEMA_FORMATS)) ajv.addFormat(name, format);
  // Editor hints in the specs; meaningless to validation.
  ajv.addKeyword('markdownDescription');
  return ajv;
}

/** What identifies a schema among the precompiled validators. */
export function schemaKey(schema: JsonSchema): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/**
 * Validators compiled at build time (engine/model/precompiled.ts), by schemaKey: the first file's
 * at the first check, the other's when a schema is not among the first. The sources have none and
 * compile on use; a schema missing there (or changed since the build) is compiled too.
 */
function loadPrecompiled(file: keyof typeof PRECOMPILED): ReadonlyMap<string, ValidateFunction> {
  const factory = PRECOMPILED[file]();
  return factory === undefined ? new Map() : new Map(Object.entries(factory(SCHEMA_FORMATS)));
}

let precompiled: ReadonlyMap<string, ValidateFunction> | undefined;
let precompiledForRuns: ReadonlyMap<string, ValidateFunction> | undefined;
let shared: Ajv2020 | undefined;

function precompiledValidator(key: string): ValidateFunction | undefined {
  precompiled ??= loadPrecompiled('startup');
  const found = precompiled.get(key);
  if (found) return found;
  precompiledForRuns ??= loadPrecompiled('run');
  return precompiledForRuns.get(key);
}

export function compileSchema(schema: JsonSchema): SchemaCheck {
  let validate = precompiledValidator(schemaKey(schema));
  if (!validate) {
    shared ??= createAjv();
    validate = shared.compile(schema as object);
  }
  const check = validate;
  return (value, options = {}) => {
    if (check(value)) return [];
    return toIssues(check.errors ?? [], value, options);
  };
}

/**
 * A JSON pointer into `root` as a path: a segment is a number only where it indexes a list. A map
 * key stays the string it is, so a ContractId like "12345678901234567890" is not rounded.
 */
function parsePointer(pointer: string, root: unknown): PathSegment[] {
  if (pointer === '') return [];
  const path: PathSegment[] = [];
  let value = root;
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const segment = Array.isArray(value) && /^(0|[1-9]\d*)$/.test(part) ? Number(part) : part;
    path.push(segment);
    value = value !== null && typeof value === 'object' && Object.hasOwn(value, segment) ? (value as Record<PathSegment, unknown>)[segment] : undefined;
  }
  return path;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Object.hasOwn(value, segment) ? (value as Record<PathSegment, unknown>)[segment] : undefined;
  }
  return value;
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a map',
  array: 'a list',
  null: 'null',
};

function describeType(type: string | readonly string[]): string {
  const types = typeof type === 'string' ? [type] : type;
  return types.map((name) => TYPE_NAMES[name] ?? name).join(' or ');
}

/** A value as quoted in a message: bounded, and never the value itself where it is sensitive. */
export function describeValue(value: unknown, sensitive = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (sensitive && typeof value !== 'object') return `a literal ${typeof value}`;
  switch (typeof value) {
    case 'object':
      return 'a map';
    case 'string': {
      const quoted = JSON.stringify(value);
      return quoted.length > 60 ? `${quoted.slice(0, 57)}…"` : quoted;
    }
    case 'number':
      return Number.isFinite(value) ? String(value) : `${String(value)} (not a finite number)`;
    default:
      return String(value);
  }
}

function messageFor(error: ErrorObject, value: unknown, sensitive: boolean): string {
  const params = error.params as Record<string, unknown>;
  const got = describeValue(value, sensitive);
  switch (error.keyword) {
    case 'type':
      if (typeof value === 'number' && !Number.isFinite(value)) return `expected a finite number, got ${String(value)}`;
      return `expected ${describeType(params.type as string | string[])}, got ${got}`;
    case 'required':
      return `missing required field "${String(params.missingProperty)}"`;
    case 'additionalProperties':
      return `unknown field "${String(params.additionalProperty)}"`;
    case 'format':
    case 'pattern':
      if (params.format === 'date-time' || (error.parentSchema as JsonSchema | undefined)?.format === 'date-time') {
        return `expected an ISO 8601 date-time in UTC like 2027-01-01T00:00:00Z, got ${got} (${timestampProblem(String(value)) ?? 'invalid'})`;
      }
      if (params.format === 'date') return `expected a date like 2026-06-01, got ${got}`;
      if (params.format === 'uri') return `expected a URL, got ${got}`;
      if (error.propertyName !== undefined) {
        // A pattern with a description says its rule in words (a ContractId's pattern is not one to read).
        const rule = (error.parentSchema as JsonSchema | undefined)?.description;
        return `invalid name ${JSON.stringify(error.propertyName)}: ${rule ?? `expected to match ${String(params.pattern)}`}`;
      }
      return `expected a value matching ${String(params.pattern)}, got ${got}`;
    case 'minimum':
    case 'maximum':
      if (Math.abs(Number(params.limit)) === Number.MAX_SAFE_INTEGER) {
        return `expected a number between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER} (larger ones lose precision), got ${got}`;
      }
      return `expected a number ${error.keyword === 'minimum' ? '>=' : '<='} ${String(params.limit)}, got ${got}`;
    case 'exclusiveMinimum':
      return `expected a number > ${String(params.limit)}, got ${got}`;
    case 'const':
      return `expected ${JSON.stringify(params.allowedValue)}, got ${got}`;
    case 'enum':
      return `expected one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${got}`;
    case 'minItems':
      return `expected at least ${plural(Number(params.limit), 'item')}`;
    case 'minLength':
      return params.limit === 1 ? 'expected a non-empty string' : `expected at least ${String(params.limit)} characters`;
    case 'minProperties':
      return `expected at least ${plural(Number(params.limit), 'key')}`;
    case 'oneOf':
    case 'anyOf':
      return `does not match any allowed form, got ${got}`;
    default:
      return `${error.message ?? 'is invalid'}`;
  }
}

// Keywords whose error is only a summary of errors already reported underneath.
const SUMMARY_KEYWORDS = new Set(['propertyNames', 'if', 'then', 'else']);

const MISMATCH_KEYWORDS = new Set(['type', 'enum', 'const']);

/**
 * A value failing a oneOf fails every branch; only the branches of its own type say something
 * useful (a map under `collections` should hear about its keys, not that it is not a string).
 */
function withoutMismatchedBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  const dropped = new Set<string>();
  for (const oneOf of errors.filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf')) {
    const branches = new Map<string, boolean>();
    for (const error of errors) {
      const match = error.schemaPath.startsWith(`${oneOf.schemaPath}/`) && /^(\d+)\//.exec(error.schemaPath.slice(oneOf.schemaPath.length + 1));
      if (!match) continue;
      const branch = `${oneOf.schemaPath}/${match[1]}/`;
      const mismatched = error.instancePath === oneOf.instancePath && MISMATCH_KEYWORDS.has(error.keyword);
      branches.set(branch, (branches.get(branch) ?? false) || mismatched);
    }
    if (![...branches.values()].some((mismatched) => !mismatched)) continue;
    for (const [branch, mismatched] of branches) if (mismatched) dropped.add(branch);
  }
  const kept = errors.filter((error) => ![...dropped].some((branch) => error.schemaPath.startsWith(branch)));
  // The summary "matches no branch" says nothing once a branch has said what is wrong.
  return kept.filter(
    (error) => (error.keyword !== 'oneOf' && error.keyword !== 'anyOf') || !kept.some((other) => other.schemaPath.startsWith(`${error.schemaPath}/`)),
  );
}

function toIssues(allErrors: readonly ErrorObject[], root: unknown, options: ValidateOptions): SchemaIssue[] {
  const issues = new Map<string, SchemaIssue>();
  const errors = withoutMismatchedBranches(allErrors);
  for (const error of errors) {
    if (SUMMARY_KEYWORDS.has(error.keyword)) continue;
    const base = parsePointer(error.instancePath, root);
    const params = error.params as Record<string, unknown>;
    let path: PathSegment[] = base;
    let atKey = false;
    if (error.keyword === 'additionalProperties') {
      path = [...base, String(params.additionalProperty)];
      atKey = true;
    } else if (error.propertyName !== undefined) {
      path = [...base, error.propertyName];
      atKey = true;
    }
    const missing = error.keyword === 'required' ? String(params.missingProperty) : '';
    const key = `${JSON.stringify(path)}:${atKey}:${missing}`;
    // One message per place: a timestamp fails both pattern and format, a value one of its types.
    if (issues.has(key)) continue;
    const sensitive = options.sensitive?.(path) ?? false;
    const value = valueAt(root, error.keyword === 'required' ? base : path);
    issues.set(key, { path, atKey, keyword: error.keyword, message: messageFor(error, value, sensitive) });
  }
  return [...issues.values()];
}
