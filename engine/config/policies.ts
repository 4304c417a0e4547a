/**
 * `policies:` and `policyExceptions:` of contract-sync.yaml, once the schema has accepted them:
 * the checks the schema cannot make (unique names, exceptions naming a rule that exists), and the
 * rules as data with the position of every expression, which engine/policy/compile.ts compiles.
 * Pure.
 */
import type { Node, Scalar } from 'yaml';
import type { PathSegment } from '../model/schema-validator.ts';
import { closest } from '../text/suggest.ts';
import { positionOf, yamlPackage, type SchemaProblem, type YamlSource } from '../yaml/yaml-source.ts';
import type { ExpressionSource, PolicyConfig, PolicyExceptionConfig, SourceAt } from './types.ts';

/** The policies part of the config as written, once the schema has accepted it. */
export interface RawPolicies {
  policies?: {
    name: string;
    on: PolicyConfig['on'];
    matchConditions?: { name: string; expression: string }[];
    variables?: { name: string; expression: string }[];
    validations: { expression: string; message?: string; messageExpression?: string }[];
    action: PolicyConfig['action'];
  }[];
  policyExceptions?: Omit<PolicyExceptionConfig, 'at'>[];
}

/** Whether the config has either key: such a config is read by the exact path, which knows positions. */
export function hasPolicies(raw: Readonly<Record<string, unknown>>): boolean {
  return raw.policies !== undefined || raw.policyExceptions !== undefined;
}

function duplicates(names: readonly string[]): number[] {
  const seen = new Set<string>();
  return names.flatMap((name, index) => {
    if (seen.has(name)) return [index];
    seen.add(name);
    return [];
  });
}

/** Duplicate rule, condition and variable names, and exceptions for a rule that does not exist. */
export function policyProblems(raw: RawPolicies): SchemaProblem[] {
  const policies = raw.policies ?? [];
  const problems: SchemaProblem[] = [];
  for (const index of duplicates(policies.map((policy) => policy.name))) {
    problems.push({ path: ['policies', index, 'name'], code: 'config', message: `policy "${policies[index]!.name}" is defined twice; names are unique` });
  }
  for (const [index, policy] of policies.entries()) {
    for (const key of ['matchConditions', 'variables'] as const) {
      const entries = policy[key] ?? [];
      for (const at of duplicates(entries.map((entry) => entry.name))) {
        problems.push({
          path: ['policies', index, key, at, 'name'],
          code: 'config',
          message: `"${entries[at]!.name}" is named twice in ${key} of policy "${policy.name}"`,
        });
      }
    }
  }
  const names = policies.map((policy) => policy.name);
  for (const [index, exception] of (raw.policyExceptions ?? []).entries()) {
    if (names.includes(exception.policy)) continue;
    const suggestion = closest(exception.policy, names);
    const hint = suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
    problems.push({ path: ['policyExceptions', index, 'policy'], code: 'config', message: `no policy named "${exception.policy}"${hint}` });
  }
  return problems;
}

/** The lines of a literal block's value as they sit in `text`, when every line is there verbatim. */
function blockLines(text: string, node: Scalar, value: string, start: SourceAt): ExpressionSource {
  const fallback = { text: value, lines: [start], exact: false };
  // The header (`|`, `|-`, `|2`) ends its line; the content starts on the next one.
  const headerEnd = text.indexOf('\n', node.range![0]);
  if (headerEnd === -1) return fallback;
  const pieces = value.replace(/\n$/, '').split('\n');
  const lines: SourceAt[] = [];
  let offset = headerEnd + 1;
  let line = start.line + 1;
  while (lines.length < pieces.length && offset <= text.length) {
    const newline = text.indexOf('\n', offset);
    const lineEnd = newline === -1 ? text.length : newline;
    const sourceLine = text.slice(offset, lineEnd).replace(/\r$/, '');
    const piece = pieces[lines.length]!;
    const indent = sourceLine.length - piece.length;
    if (piece === '' ? sourceLine.trim() === '' : indent >= 0 && sourceLine.endsWith(piece) && sourceLine.slice(0, indent).trim() === '') {
      lines.push({ line, column: Math.max(indent, 0) + 1 });
    } else if (!(lines.length === 0 && sourceLine.trim() === '')) {
      return fallback;
    }
    offset = lineEnd + 1;
    line += 1;
  }
  return lines.length === pieces.length ? { text: value, lines, exact: true } : fallback;
}

/**
 * Where the text of the expression at `path` is in the file: exact for a plain or quoted scalar
 * without escapes on one line and for a literal block (`|`); else its start, with exact false.
 */
function expressionSource(source: YamlSource, text: string, path: readonly PathSegment[], value: string): ExpressionSource {
  const start = positionOf(source, path);
  const node = source.doc.getIn(path, true) as Node | undefined;
  const { isScalar } = yamlPackage();
  if (!isScalar(node) || node.range === undefined || node.range === null) return { text: value, lines: [start], exact: false };
  const [from] = node.range;
  switch (node.type) {
    case 'PLAIN':
      return { text: value, lines: [start], exact: !value.includes('\n') && text.startsWith(value, from) };
    case 'QUOTE_SINGLE':
    case 'QUOTE_DOUBLE':
      return { text: value, lines: [{ line: start.line, column: start.column + 1 }], exact: !value.includes('\n') && text.startsWith(value, from + 1) };
    case 'BLOCK_LITERAL':
      return blockLines(text, node, value, start);
    default:
      return { text: value, lines: [start], exact: false };
  }
}

/** The rules and exceptions as data, each expression with its position in the file. */
export function policiesOf(raw: RawPolicies, source: YamlSource, text: string): { policies: PolicyConfig[]; policyExceptions: PolicyExceptionConfig[] } {
  function expression(path: readonly PathSegment[], value: string): ExpressionSource {
    return expressionSource(source, text, path, value);
  }
  const policies = (raw.policies ?? []).map((policy, index): PolicyConfig => {
    function at(...rest: PathSegment[]): PathSegment[] {
      return ['policies', index, ...rest];
    }
    return {
      name: policy.name,
      at: positionOf(source, at('name')),
      on: policy.on,
      matchConditions: (policy.matchConditions ?? []).map((condition, i) => ({
        name: condition.name,
        expression: expression(at('matchConditions', i, 'expression'), condition.expression),
      })),
      variables: (policy.variables ?? []).map((variable, i) => ({
        name: variable.name,
        expression: expression(at('variables', i, 'expression'), variable.expression),
      })),
      validations: policy.validations.map((validation, i) => ({
        expression: expression(at('validations', i, 'expression'), validation.expression),
        ...(validation.message === undefined ? {} : { message: validation.message }),
        ...(validation.messageExpression === undefined
          ? {}
          : { messageExpression: expression(at('validations', i, 'messageExpression'), validation.messageExpression) }),
      })),
      action: policy.action,
    };
  });
  const policyExceptions = (raw.policyExceptions ?? []).map((exception, index): PolicyExceptionConfig => ({
    ...exception,
    contracts: [...exception.contracts],
    at: positionOf(source, ['policyExceptions', index]),
  }));
  return { policies, policyExceptions };
}
