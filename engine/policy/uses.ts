/**
 * What a rule does with the contract fields it reads, known from its parsed CEL before any
 * contract is seen: a field may be read whole (compared, passed to a function, put in a list), or
 * only in parts: tested for presence (`has(object.Owner)`), a field of it selected
 * (`object.Owner[*].OwnerType.Name`), its items iterated (`object.Type.exists(t, t.IsDora)`). A
 * memo (engine/policy/memo.ts) keys a contract by the parts its rule reads, so that a DORA rule
 * over the owners' types finds again what it gave for another contract whose owners are other
 * people of the same types. Pure.
 *
 * The walk is conservative: a value is read in parts only where it is the operand of a selection,
 * the range of a one-variable comprehension, a branch of `_?_:_`, or a rule variable's value;
 * anything else reads it whole. A variable's value is what its expression's value may be, read
 * where the variable is.
 */
import type { parse } from '@bufbuild/cel';

type Expr = ReturnType<typeof parse>['expr'];

/** What is read of one value: all of it, or the parts below (none: only that it is there). */
export interface Use {
  whole: boolean;
  /** Fields selected of it (a map's). */
  fields?: Map<string, Use>;
  /** What is read of each of its items (a list iterated). */
  items?: Use;
}

export function newUse(): Use {
  return { whole: false };
}

/** The values an expression's value may be, as places in the read tree. */
export type Refs = readonly Use[];

/** `variables` itself, of which a selection is a rule variable's value. */
const VARIABLES: Use = { whole: false };

/**
 * Records in `object` (the read tree of the rule's `object`) what `expr` reads of it, given the
 * values of the rule's variables defined before it. An expression's value is read whole (a
 * condition's, a validation's, a message's); a variable's is returned unread, to be read where
 * the variable is.
 */
export function recordUses(expr: Expr, object: Use, variables: ReadonlyMap<string, Refs>, of: 'value' | 'variable'): Refs {
  function readWhole(refs: Refs): void {
    for (const ref of refs) {
      if (ref === VARIABLES) for (const value of variables.values()) readWhole(value);
      else ref.whole = true;
    }
  }
  function field(parent: Use, name: string): Use {
    parent.fields ??= new Map();
    let found = parent.fields.get(name);
    if (found === undefined) {
      found = newUse();
      parent.fields.set(name, found);
    }
    return found;
  }
  function visit(node: Expr, locals: ReadonlyMap<string, Refs>): Refs {
    const kind = node.exprKind;
    switch (kind.case) {
      case 'identExpr': {
        const local = locals.get(kind.value.name);
        if (local !== undefined) return local;
        if (kind.value.name === 'object') return [object];
        return kind.value.name === 'variables' ? [VARIABLES] : [];
      }
      case 'selectExpr': {
        const { field: name, testOnly } = kind.value;
        const selected: Use[] = [];
        for (const ref of visit(kind.value.operand!, locals)) {
          if (ref === VARIABLES) {
            if (!testOnly) selected.push(...(variables.get(name) ?? []));
            continue;
          }
          // `has(x.f)` reads that f is there: its place is made, nothing of it is read.
          const place = field(ref, name);
          if (!testOnly) selected.push(place);
        }
        return selected;
      }
      case 'callExpr': {
        const { target, args } = kind.value;
        if (kind.value.function === '_?_:_' && target === undefined && args.length === 3) {
          readWhole(visit(args[0]!, locals));
          return [...visit(args[1]!, locals), ...visit(args[2]!, locals)];
        }
        if (target !== undefined) readWhole(visit(target, locals));
        for (const arg of args) readWhole(visit(arg, locals));
        return [];
      }
      case 'listExpr':
        for (const element of kind.value.elements) readWhole(visit(element, locals));
        return [];
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') readWhole(visit(entry.keyKind.value, locals));
          if (entry.value) readWhole(visit(entry.value, locals));
        }
        return [];
      case 'comprehensionExpr': {
        const comprehension = kind.value;
        const range = visit(comprehension.iterRange!, locals);
        let items: Use[] = [];
        // Two variables (index and item, key and value) read the range whole; so does a range that is `variables`.
        if (comprehension.iterVar2 !== '' || range.includes(VARIABLES)) readWhole(range);
        else items = range.map((ref) => (ref.items ??= newUse()));
        readWhole(visit(comprehension.accuInit!, locals));
        const inner = new Map(locals);
        inner.set(comprehension.iterVar, items);
        inner.set(comprehension.accuVar, []);
        for (const part of [comprehension.loopCondition, comprehension.loopStep]) if (part) readWhole(visit(part, inner));
        const resultScope = new Map(locals);
        resultScope.set(comprehension.accuVar, []);
        if (comprehension.result) readWhole(visit(comprehension.result, resultScope));
        return [];
      }
      default:
        return [];
    }
  }
  const value = visit(expr, new Map());
  if (of === 'variable') return value;
  readWhole(value);
  return [];
}

/**
 * The same use, one object however many rules read a field so (`interned`, by field and shape), so
 * that a contract's number for it is made once; undefined where it is whole in effect (read whole,
 * or a list whose items are read whole): then the field's own number serves.
 */
export function sharedUse(interned: Map<string, Use>, field: string, use: Use): Use | undefined {
  if (wholeInEffect(use)) return undefined;
  const key = `${field} ${shapeOf(use)}`;
  let found = interned.get(key);
  if (found === undefined) {
    found = use;
    interned.set(key, use);
  }
  return found;
}

function wholeInEffect(use: Use): boolean {
  return use.whole || (use.fields === undefined && use.items !== undefined && wholeInEffect(use.items));
}

function shapeOf(use: Use): string {
  if (use.whole) return '*';
  const fields = use.fields === undefined ? '' : [...use.fields].map(([name, read]) => `${JSON.stringify(name)}:${shapeOf(read)}`).join(',');
  return `{${fields}}${use.items === undefined ? '' : `[${shapeOf(use.items)}]`}`;
}
