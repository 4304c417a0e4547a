/**
 * A contract's values as CEL values, by the shapes of engine/policy/contract-shape.ts. Loaded with
 * the compiler (only for a config with rules), which hands it to the evaluator. Pure.
 */
import { celList, celMap, type CelInput } from '@bufbuild/cel';
import { DYN, type Shape } from './contract-shape.ts';

/**
 * `value` as a CEL value of `shape`: integral numbers where the shape says int become bigints
 * (CEL ints); maps and lists become CEL maps and lists, member by member, once per contract (CEL
 * reads a plain object by converting it at every access: four times slower over a rule pack);
 * keys the shape does not know (a known contract may hold more than the table) are kept.
 */
export function toCel(value: unknown, shape: Shape): CelInput {
  if (value === null || value === undefined) return null;
  if (shape.kind === 'scalar' && shape.type === 'int' && typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return celList(value.map((item) => toCel(item, shape.kind === 'list' ? shape.element : DYN)));
  if (typeof value === 'object') {
    const fields = shape.kind === 'map' ? shape.fields : undefined;
    const entries: [string, CelInput][] = [];
    for (const [key, item] of Object.entries(value)) if (item !== undefined) entries.push([key, toCel(item, fields?.get(key) ?? DYN)]);
    return celMap(new Map(entries));
  }
  return value as CelInput;
}

/** Values already converted (by toCel, field by field) as one CEL map. */
export function celMapOf(entries: Map<string, unknown>): CelInput {
  return celMap(entries as Map<string, CelInput>);
}
