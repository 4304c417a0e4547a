/**
 * What can be known of a rule before any contract is seen, from its parsed CEL: a field the
 * contract table does not have (`object.Nmae`, `o.OwnerType.Nmae` inside `object.Owner.exists(o,
 * ...)`), a comparison or arithmetic of a table field with a literal of another type
 * (`object.Area > "x"`), a name that is not a variable of the rule (`oldObject` in an `on:
 * contract` rule, `variables.x` before x is defined), and comprehensions nested too deep. Each
 * problem carries the offset in the expression it is about. Pure.
 */
import type { parse } from '@bufbuild/cel';
import { closest } from '../text/suggest.ts';
import { CONTRACT_SHAPE, DYN, OP_SHAPE, type Shape } from './contract-shape.ts';

/** A parsed CEL expression (cel.expr.Expr). */
type Expr = ReturnType<typeof parse>['expr'];

export interface ExpressionProblem {
  /** 0-based offset in the expression's text. */
  readonly offset: number;
  readonly message: string;
}

/**
 * What one evaluation of an expression may cost, known before it runs: its nodes, and how deep
 * its comprehensions nest inside the steps of others (the body of the innermost of d nested
 * comprehensions over lists of n items runs n^d times).
 */
export interface ExpressionCost {
  readonly nodes: number;
  readonly depth: number;
  /** The longest list the expression writes itself (`[1, 2, 3]`). */
  readonly widest: number;
}

export interface CheckScope {
  /** `contract` rules see tenant, id, object; `change` rules also oldObject, knownFrom, ops. */
  readonly on: 'contract' | 'change';
  /** The variables defined before this expression, in order, with what is known of them. */
  readonly variables: ReadonlyMap<string, Shape>;
}

/** Comprehensions inside comprehensions beyond this are refused: each level multiplies the work by a list's length. */
export const MAX_COMPREHENSION_DEPTH = 3;

const CHANGE_ONLY = new Set(['oldObject', 'knownFrom', 'ops']);
// Type names a CEL expression may use as values (`type(x) == string`).
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn', 'timestamp', 'duration']);
const ORDERING = new Set(['_<_', '_<=_', '_>_', '_>=_', '_+_', '_-_', '_*_', '_/_', '_%_']);
const EQUALITY = new Set(['_==_', '_!=_']);

type LiteralType = 'string' | 'number' | 'bool' | 'null' | 'bytes';

function literalType(expr: Expr): LiteralType | undefined {
  if (expr.exprKind.case !== 'constExpr') return undefined;
  switch (expr.exprKind.value.constantKind.case) {
    case 'stringValue':
      return 'string';
    case 'int64Value':
    case 'uint64Value':
    case 'doubleValue':
      return 'number';
    case 'boolValue':
      return 'bool';
    case 'nullValue':
      return 'null';
    case 'bytesValue':
      return 'bytes';
    default:
      return undefined;
  }
}

/** Whether a scalar field of this shape can meet a literal of that type in an operator. */
function compatible(shape: Shape, literal: LiteralType): boolean {
  if (shape.kind !== 'scalar') return true;
  if (literal === 'null') return shape.nullable;
  switch (shape.type) {
    case 'int':
    case 'double':
      return literal === 'number';
    case 'string':
    case 'timestamp':
      return literal === 'string';
    case 'bool':
      return literal === 'bool';
  }
}

function describeShape(shape: Shape): string {
  if (shape.kind === 'scalar') return shape.type === 'timestamp' ? 'a timestamp string' : `${shape.type === 'int' ? 'an' : 'a'} ${shape.type}`;
  return shape.kind === 'map' ? 'a map' : shape.kind === 'list' ? 'a list' : 'a value';
}

function describeExpr(expr: Expr): string {
  switch (expr.exprKind.case) {
    case 'identExpr':
      return expr.exprKind.value.name;
    case 'selectExpr':
      return `${describeExpr(expr.exprKind.value.operand!)}.${expr.exprKind.value.field}`;
    default:
      return 'the value';
  }
}

/** The shape of a name an expression reads: a local, a variable of the rule, or a problem (`report`) and `dyn`. */
function nameShape(name: string, locals: ReadonlyMap<string, Shape>, scope: CheckScope, report: (message: string) => void): Shape {
  const local = locals.get(name);
  if (local !== undefined) return local;
  if (name === 'object') return CONTRACT_SHAPE;
  if (name === 'tenant' || name === 'id') return { kind: 'scalar', type: 'string', nullable: false };
  if (name === 'variables') return { kind: 'map', name: 'variables', fields: scope.variables };
  if (CHANGE_ONLY.has(name)) {
    if (scope.on === 'contract') report(`${name} is a variable of on: change rules only; this rule is on: contract`);
    if (name === 'oldObject') return CONTRACT_SHAPE;
    if (name === 'ops') return { kind: 'list', element: OP_SHAPE };
    return { kind: 'scalar', type: 'string', nullable: false };
  }
  if (TYPE_NAMES.has(name)) return DYN;
  const known = ['tenant', 'id', 'object', 'variables', ...(scope.on === 'change' ? CHANGE_ONLY : []), ...locals.keys()];
  const suggestion = closest(name, known);
  report(`unknown name "${name}"${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`);
  return DYN;
}

/** The problems of `expr` and the shape of its value. */
export function checkExpression(
  text: string,
  expr: Expr,
  positions: Readonly<Record<string, number>>,
  scope: CheckScope,
): { problems: ExpressionProblem[]; shape: Shape; cost: ExpressionCost; reads: ReadonlySet<string> | 'all'; names: ReadonlySet<string> } {
  const problems: ExpressionProblem[] = [];
  function offsetOf(node: Expr): number {
    return positions[String(node.id)] ?? 0;
  }

  let nodes = 0;
  let deepest = 0;
  let widest = 0;
  // The contract fields the expression selects, and whether it reads a contract otherwise.
  const reads = new Set<string>();
  const selected = new Set<Expr>();
  let readsWhole = false;
  // The names of the rule's scope it reads (tenant, id, object, variables, ...): what its value depends on.
  const names = new Set<string>();
  function visit(node: Expr, locals: ReadonlyMap<string, Shape>, depth: number): Shape {
    nodes += 1;
    deepest = Math.max(deepest, depth);
    const kind = node.exprKind;
    switch (kind.case) {
      case 'identExpr': {
        const { name } = kind.value;
        // Read otherwise than field by field (or compared with null), the whole contract is read.
        if (!locals.has(name) && (name === 'object' || name === 'oldObject') && !selected.has(node)) readsWhole = true;
        if (!locals.has(name)) names.add(name);
        return nameShape(name, locals, scope, (message) => problems.push({ offset: offsetOf(node), message }));
      }
      case 'selectExpr': {
        const { field } = kind.value;
        if (kind.value.operand!.exprKind.case === 'identExpr') {
          selected.add(kind.value.operand!);
          reads.add(field);
        }
        const operand = visit(kind.value.operand!, locals, depth);
        if (operand.kind !== 'map') return DYN;
        const shape = operand.fields.get(field);
        if (shape !== undefined) return shape;
        const candidates = [...operand.fields.keys()];
        const suggestion = closest(field, candidates);
        const what = operand.name === 'variables' ? `no variable "${field}" is defined before this expression` : `${operand.name} has no field "${field}"`;
        // CEL places a selection at its dot, and `has(object.X)` at `has`: the field name follows the next dot naming it.
        const dot = text.indexOf(`.${field}`, offsetOf(node));
        problems.push({
          offset: (dot === -1 ? offsetOf(node) : dot) + 1,
          message: `${what}${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`,
        });
        return DYN;
      }
      case 'callExpr': {
        const { target, args } = kind.value;
        if (EQUALITY.has(kind.value.function) && args.length === 2 && args.some((arg) => literalType(arg) === 'null')) {
          for (const arg of args) selected.add(arg);
        }
        const targetShape = target === undefined ? undefined : visit(target, locals, depth);
        const shapes = args.map((arg) => visit(arg, locals, depth));
        const fn = kind.value.function;
        if ((ORDERING.has(fn) || EQUALITY.has(fn)) && args.length === 2) {
          for (const [side, other] of [
            [0, 1],
            [1, 0],
          ] as const) {
            const literal = literalType(args[other]!);
            const shape = shapes[side]!;
            if (literal === undefined || shape.kind !== 'scalar' || compatible(shape, literal)) continue;
            problems.push({
              offset: offsetOf(args[other]!),
              message: `${describeExpr(args[side]!)} is ${describeShape(shape)}; ${EQUALITY.has(fn) ? 'compared with' : 'used with'} a ${literal} it is ${EQUALITY.has(fn) ? 'never equal' : 'an error'}`,
            });
            break;
          }
        }
        if (fn === '_?_:_' && shapes.length === 3) return shapes[1]!.kind !== 'dyn' ? shapes[1]! : shapes[2]!;
        if (fn === '_[_]' && shapes[0]?.kind === 'list') return shapes[0].element;
        if (targetShape !== undefined && (fn === 'filter' || fn === 'map')) return targetShape;
        return DYN;
      }
      case 'listExpr': {
        widest = Math.max(widest, kind.value.elements.length);
        const shapes = kind.value.elements.map((element) => visit(element, locals, depth));
        return { kind: 'list', element: shapes[0] ?? DYN };
      }
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value, locals, depth);
          if (entry.value) visit(entry.value, locals, depth);
        }
        return DYN;
      case 'comprehensionExpr': {
        const comprehension = kind.value;
        if (depth + 1 > MAX_COMPREHENSION_DEPTH) {
          problems.push({
            offset: offsetOf(node),
            message: `comprehensions (all, exists, map, filter, ...) are nested more than ${MAX_COMPREHENSION_DEPTH} deep`,
          });
          return DYN;
        }
        const range = visit(comprehension.iterRange!, locals, depth);
        const accumulator = visit(comprehension.accuInit!, locals, depth);
        const inner = new Map(locals);
        inner.set(comprehension.iterVar, range.kind === 'list' ? range.element : DYN);
        if (comprehension.iterVar2 !== '') inner.set(comprehension.iterVar2, DYN);
        inner.set(comprehension.accuVar, accumulator);
        for (const part of [comprehension.loopCondition, comprehension.loopStep]) if (part) visit(part, inner, depth + 1);
        const resultScope = new Map(locals);
        resultScope.set(comprehension.accuVar, accumulator);
        return comprehension.result ? visit(comprehension.result, resultScope, depth) : DYN;
      }
      default:
        return DYN;
    }
  }

  const shape = visit(expr, new Map(), 0);
  return { problems, shape, cost: { nodes, depth: deepest, widest }, reads: readsWhole ? 'all' : reads, names };
}
