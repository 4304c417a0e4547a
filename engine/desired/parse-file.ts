/** One desired-state file: YAML -> ContractSet, with every problem positioned. Pure. */
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { FIELD_NAMES, getField, isCollectionField } from '../model/fields.ts';
import { contractsFileSchema } from '../model/json-schemas.ts';
import { requiredMemberFields } from '../model/members.ts';
import { describeIdentity, findDuplicateMembers, normaliseTimestamp } from '../model/normalise.ts';
import { compileSchema, type PathSegment, type SchemaCheck } from '../model/schema-validator.ts';
import type { ContractFields } from '../model/types.ts';
import {
  decodeYamlText,
  DEFAULT_YAML_LIMITS,
  diagnosticAt,
  formatPath,
  keyNodeAt,
  loneSurrogateProblems,
  parseYamlSource,
  positionOf,
  type Position,
  type SchemaProblem,
  type YamlLimits,
  type YamlSource,
  withinStack,
  yamlPackage,
} from '../yaml/yaml-source.ts';
import { exceededBounds, type BoundExceeded } from './contract-bounds.ts';
import { fastParseDesired } from './fast-parse.ts';
import { closest } from '../text/suggest.ts';
import type { ContractSet, DesiredContract, DesiredFile } from './types.ts';

let check: SchemaCheck | undefined;

export interface ParsedFile {
  readonly contractSet?: ContractSet;
  readonly diagnostics: Diagnostic[];
  /** Where the tenant value is, for the cross-file checks; with every contractSet. No YAML tree outlives its file. */
  readonly tenantPosition?: Position;
}

/** What a diagnostic at `path` is about: inside a contract, the field relative to the contract. */
function describePath(tenant: unknown) {
  return (path: readonly PathSegment[]): Pick<Diagnostic, 'field'> & Partial<Diagnostic> => {
    const about = typeof tenant === 'string' ? { tenant } : {};
    if (path[0] === 'contracts' && path.length >= 2) {
      const contractId = String(path[1]);
      return { ...about, contractId, field: path.length > 2 ? formatPath(path.slice(2)) : formatPath(path) };
    }
    return { ...about, field: formatPath(path) };
  };
}

/**
 * A member without a field it must give: says which fields every member of that collection gives
 * (docs/architecture.md section 2), so that upgrading a file that relied on partial members is one read.
 */
function withMemberRule(problem: SchemaProblem, keyword: string): SchemaProblem {
  const [root, , name, index] = problem.path;
  const field = typeof name === 'string' ? getField(name) : undefined;
  if (keyword !== 'required' || root !== 'contracts' || typeof index !== 'number' || field === undefined || !isCollectionField(field)) return problem;
  const message = problem.message.replace(/^missing required field/, 'missing member field');
  return {
    ...problem,
    message: `${message}: every ${field.name} member gives ${requiredMemberFields(field).join(', ')} (only nullable fields may be left out)`,
  };
}

function withSuggestion(problem: SchemaProblem): SchemaProblem {
  if (!problem.atKey || !problem.message.startsWith('unknown field')) return problem;
  const name = String(problem.path.at(-1));
  const candidates = problem.path.length === 3 ? FIELD_NAMES : problem.path.length === 1 ? ['tenant', 'contracts'] : [];
  const suggestion = closest(name, candidates);
  return suggestion ? { ...problem, message: `${problem.message} (did you mean "${suggestion}"?)` } : problem;
}

/** Keys like `0815:` are read by YAML as the number 815: the id would silently change. */
function contractIdProblems(source: YamlSource, ids: readonly string[]): SchemaProblem[] {
  const { isScalar } = yamlPackage();
  const problems: SchemaProblem[] = [];
  for (const id of ids) {
    const key = keyNodeAt(source, ['contracts', id]);
    if (isScalar(key) && key.value === '<<' && key.type === 'PLAIN') {
      // Any id is allowed now, but a plain `<<` is a merge key to YAML 1.1 readers (js-yaml among them).
      problems.push({
        path: ['contracts', id],
        atKey: true,
        code: 'contract-id',
        message: 'ContractId << is read by YAML 1.1 tools as a merge key; quote it: "<<"',
      });
      continue;
    }
    if (!isScalar(key) || typeof key.value === 'string') continue;
    const written = key.source ?? String(key.value);
    if (typeof key.value !== 'number' || written !== String(key.value)) {
      problems.push({
        path: ['contracts', id],
        atKey: true,
        code: 'contract-id',
        message: `ContractId ${written} is read by YAML as ${JSON.stringify(key.value)}; quote it: "${written}"`,
      });
    }
  }
  return problems;
}

function contractProblems(id: string, fields: ContractFields): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const { ValidFrom: from, ValidTo: to } = fields;
  if (from !== undefined && to !== undefined && normaliseTimestamp(from)! > normaliseTimestamp(to)!) {
    problems.push({
      path: ['contracts', id, 'ValidTo'],
      code: 'valid-range',
      message: `ValidTo ${to} is before ValidFrom ${from}`,
    });
  }
  for (const { field, index, firstIndex, member } of findDuplicateMembers(fields)) {
    problems.push({
      path: ['contracts', id, field.name, index],
      code: 'duplicate-member',
      message: `same identity (${describeIdentity(field, member)}) as ${field.name}[${firstIndex}]; each member may appear once`,
    });
  }
  return problems;
}

/** The id of the contract a problem is in, if any. */
function contractOf(problem: SchemaProblem): string | undefined {
  return problem.path[0] === 'contracts' && problem.path.length >= 2 ? String(problem.path[1]) : undefined;
}

type Contracts = Record<string, ContractFields>;

function contractsOf(document: { contracts?: unknown }): Contracts {
  const { contracts } = document;
  return contracts !== null && typeof contracts === 'object' && !Array.isArray(contracts) ? (contracts as Contracts) : {};
}

const SURROGATE_OR_ESCAPE = /[\ud800-\udfff\\]/;

/** Every problem of a file's value, in order: schema, `extra` (found in the YAML source), lone surrogates, then each contract's own. */
function valueProblems(value: object, contracts: Contracts, extra: readonly SchemaProblem[], surrogatesPossible = true): SchemaProblem[] {
  check ??= compileSchema(contractsFileSchema());
  const problems: SchemaProblem[] = [
    ...check(value).map((issue) =>
      withMemberRule(withSuggestion({ path: issue.path, atKey: issue.atKey, code: 'schema', message: issue.message }), issue.keyword),
    ),
    ...extra,
  ];
  // One message per place: a timestamp with a lone surrogate is reported for its format alone.
  const reported = new Set(problems.map((problem) => JSON.stringify(problem.path)));
  // Loops, not push(...list): a list of a million problems would overflow the stack as arguments.
  if (surrogatesPossible) for (const problem of loneSurrogateProblems(value)) if (!reported.has(JSON.stringify(problem.path))) problems.push(problem);
  const invalid = new Set(problems.map(contractOf));
  for (const [id, fields] of Object.entries(contracts)) {
    if (!invalid.has(id)) for (const problem of contractProblems(id, fields)) problems.push(problem);
  }
  return problems;
}

/** A selected path that is not a regular file: said, never skipped silently, never opened. */
function skippedWarning(file: string, kind: string): Diagnostic {
  return {
    severity: 'warning',
    code: 'not-a-regular-file',
    file,
    line: 1,
    column: 1,
    field: '',
    message: `not read: ${kind}, not a regular file (desired-state files are read only as regular files in the repository)`,
  };
}

/** A contract past CONTRACT_BOUNDS, at its ContractId: the file is read no further. */
function boundDiagnostic(file: string, position: Position, tenant: unknown, exceeded: BoundExceeded): Diagnostic {
  return {
    severity: 'error',
    code: 'contract-too-large',
    file,
    line: position.line,
    column: position.column,
    field: exceeded.path.length === 0 ? `contracts.${exceeded.contractId}` : formatPath(exceeded.path),
    message: exceeded.message,
    ...(typeof tenant === 'string' ? { tenant } : {}),
    contractId: exceeded.contractId,
  };
}

/**
 * The fast path: a file that js-yaml reads and that has no problem at all. Anything else (a problem
 * to report, something only the `yaml` package reads exactly) returns undefined.
 */
function parseFast(file: DesiredFile, text: string, limits: YamlLimits): ParsedFile | undefined {
  const fast = fastParseDesired(text, limits);
  if (fast === undefined) return undefined;
  const { value, contractPositions, tenantPosition } = fast;
  const document = value as { tenant?: unknown; contracts?: unknown };
  if (typeof document.tenant !== 'string' || tenantPosition === undefined) return undefined;
  const contracts = contractsOf(document);
  const exceeded = exceededBounds(contracts);
  if (exceeded.length > 0) {
    return {
      diagnostics: exceeded.map((item) => boundDiagnostic(file.path, contractPositions.get(item.contractId) ?? { line: 1, column: 1 }, document.tenant, item)),
    };
  }
  // A value holds a surrogate only if the text does, or spells one as an escape (a backslash in a double-quoted string).
  if (valueProblems(value, contracts, [], SURROGATE_OR_ESCAPE.test(text)).length > 0) return undefined;
  const valid: DesiredContract[] = [];
  for (const [id, fields] of Object.entries(contracts)) {
    const position = contractPositions.get(id);
    if (position === undefined) return undefined;
    valid.push({ id, line: position.line, column: position.column, fields });
  }
  return { diagnostics: [], tenantPosition, contractSet: { tenant: document.tenant, file: file.path, contracts: valid } };
}

/** Reads a desired-state file: the fast way when it can vouch for the result, else with the `yaml` package. */
export function parseDesiredFile(file: DesiredFile, limits: YamlLimits = DEFAULT_YAML_LIMITS): ParsedFile {
  if (file.skipped !== undefined) return { diagnostics: [skippedWarning(file.path, file.skipped)] };
  const text = decodeYamlText(file.path, file.content, limits);
  if (typeof text !== 'string') return { diagnostics: [text] };
  return withinStack(file.path, () => parseFast(file, text, limits) ?? parseExactly(file, text, limits));
}

/**
 * The `yaml` package's path alone: exact messages and positions for every problem. parseDesiredFile
 * falls back to it; exported so that tests can hold the fast path to it.
 */
export function parseDesiredFileExactly(file: DesiredFile, limits: YamlLimits = DEFAULT_YAML_LIMITS): ParsedFile {
  const text = decodeYamlText(file.path, file.content, limits);
  if (typeof text !== 'string') return { diagnostics: [text] };
  return parseExactly(file, text, limits);
}

function parseExactly(file: DesiredFile, text: string, limits: YamlLimits): ParsedFile {
  const parsed = parseYamlSource(file.path, text, limits);
  if (!parsed.ok) return { diagnostics: parsed.diagnostics };
  const { source, value } = parsed;
  if (value === null || value === undefined) {
    const message = 'file is empty: it declares no tenant and no contracts';
    return { diagnostics: [...parsed.diagnostics, diagnosticAt(source, { path: [], code: 'empty-file', message, severity: 'warning' })] };
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    const message = `expected a map with "tenant" and "contracts", got ${Array.isArray(value) ? 'a list' : 'a single value'}`;
    return { diagnostics: [...parsed.diagnostics, diagnosticAt(source, { path: [], code: 'schema', message })] };
  }

  const document = value as { tenant?: unknown; contracts?: unknown };
  const contracts = contractsOf(document);
  const exceeded = exceededBounds(contracts);
  if (exceeded.length > 0) {
    const tenant = document.tenant;
    return { diagnostics: exceeded.map((item) => boundDiagnostic(file.path, positionOf(source, ['contracts', item.contractId], true), tenant, item)) };
  }
  const problems = valueProblems(value, contracts, contractIdProblems(source, Object.keys(contracts)));

  const diagnostics = [...parsed.diagnostics, ...problems.map((problem) => diagnosticAt(source, problem, describePath(document.tenant)))];
  // A problem outside any contract (tenant, the file's shape) invalidates the whole file.
  if (problems.some((problem) => contractOf(problem) === undefined) || typeof document.tenant !== 'string') {
    return { diagnostics };
  }
  const failed = new Set(problems.map(contractOf));
  const valid: DesiredContract[] = [];
  for (const [id, fields] of Object.entries(contracts)) {
    if (failed.has(id)) continue;
    valid.push({ id, ...positionOf(source, ['contracts', id], true), fields });
  }
  return {
    diagnostics,
    tenantPosition: positionOf(source, ['tenant']),
    contractSet: { tenant: document.tenant, file: file.path, contracts: valid },
  };
}
