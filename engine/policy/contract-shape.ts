/**
 * A contract as CEL sees it, derived from the field table (engine/model/fields.ts): the shape the
 * rules are checked against when they are compiled, and the conversion of a contract's fields to
 * CEL values. Integers (the table's `integer` fields, member ids, duration units) become CEL ints,
 * so that `object.Area / 2` is an integer division; `number` fields are doubles; timestamps stay
 * RFC 3339 UTC strings (`timestamp(object.ValidTo)` reads them); durations are maps of their
 * units; collections are lists of maps (engine/policy/cel-values.ts converts a contract). Pure.
 */
import { DURATION_UNITS, FIELDS, type FieldSpec } from '../model/fields.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';

export type ScalarShape = 'int' | 'double' | 'string' | 'bool' | 'timestamp';

/** What the compiler knows of a value; `dyn` where it knows nothing. */
export type Shape =
  | { readonly kind: 'scalar'; readonly type: ScalarShape; readonly nullable: boolean }
  | { readonly kind: 'map'; readonly name: string; readonly fields: ReadonlyMap<string, Shape> }
  | { readonly kind: 'list'; readonly element: Shape }
  | { readonly kind: 'dyn' };

export const DYN: Shape = { kind: 'dyn' };

function scalar(type: ScalarShape, nullable = false): Shape {
  return { kind: 'scalar', type, nullable };
}

/** The shape of a member field's JSON Schema (engine/model/fields.ts writes only these forms). */
function shapeOfSchema(schema: JsonSchema, name: string): Shape {
  if (typeof schema !== 'object' || schema === null) return DYN;
  const node = schema as { type?: string | readonly string[]; properties?: Readonly<Record<string, JsonSchema>> };
  const types = typeof node.type === 'string' ? [node.type] : (node.type ?? []);
  const nullable = types.includes('null');
  if (types.includes('object') && node.properties !== undefined) {
    return { kind: 'map', name, fields: new Map(Object.entries(node.properties).map(([key, value]) => [key, shapeOfSchema(value, `${name}.${key}`)])) };
  }
  if (types.includes('integer')) return scalar('int', nullable);
  if (types.includes('number')) return scalar('double', nullable);
  if (types.includes('string')) return scalar('string', nullable);
  if (types.includes('boolean')) return scalar('bool', nullable);
  return DYN;
}

const DURATION: Shape = { kind: 'map', name: 'duration', fields: new Map(DURATION_UNITS.map((unit) => [unit, scalar('int', true)])) };

function shapeOfField(field: FieldSpec): Shape {
  switch (field.kind) {
    case 'number':
      return scalar('double');
    case 'integer':
      return scalar('int');
    case 'string':
      return scalar('string');
    case 'timestamp':
      return scalar('timestamp');
    case 'duration':
      return DURATION;
    case 'collection':
      return { kind: 'list', element: shapeOfSchema(field.member, `${field.name}[]`) };
  }
}

/** `object` and `oldObject`: a map of the table's fields. */
export const CONTRACT_SHAPE: Shape = {
  kind: 'map',
  name: 'the contract',
  fields: new Map((FIELDS as readonly FieldSpec[]).map((field) => [field.name, shapeOfField(field)])),
};

/** A planned op: `{op, path, value}`. */
export const OP_SHAPE: Shape = {
  kind: 'map',
  name: 'an op',
  fields: new Map<string, Shape>([
    ['op', scalar('string')],
    ['path', scalar('string')],
    ['value', DYN],
  ]),
};

/** The shape of the field an op's path names (`/Contract/Owner`), for its value. */
export function fieldShape(name: string): Shape {
  if (CONTRACT_SHAPE.kind !== 'map') return DYN;
  return CONTRACT_SHAPE.fields.get(name) ?? DYN;
}
