/**
 * The one table of the service's 19 patchable contract fields.
 *
 * Everything that needs a field name — JSON Schemas in specs/, the desired-state validator, the
 * planner, the renderers, the emulator — derives it from FIELDS. Order matters: it is the order of
 * ops inside one PATCH (docs/architecture.md section 3.5).
 */
import type { JsonSchema } from './json-schema-type.ts';

export type ScalarKind = 'number' | 'integer' | 'string' | 'timestamp' | 'duration';
export type FieldKind = ScalarKind | 'collection';
export type OpName = 'Replace' | 'Add' | 'Remove';

/** A path inside a collection member, e.g. `['OwnerType', 'Value']`. */
export type MemberPath = readonly string[];

export interface ScalarFieldSpec {
  readonly name: string;
  readonly kind: ScalarKind;
  readonly ops: readonly ['Replace'];
}

export interface CollectionFieldSpec {
  readonly name: string;
  readonly kind: 'collection';
  readonly ops: readonly ['Add', 'Remove'];
  /**
   * JSON Schema of one member as a desired file writes it and an `Add` sends it: every field the
   * seed does not call nullable is required; nullable ones may be left out (sent as null).
   */
  readonly member: JsonSchema;
  /** Member identity: two members with equal values at these paths are the same member. */
  readonly identity: readonly MemberPath[];
}

export type FieldSpec = ScalarFieldSpec | CollectionFieldSpec;

const REPLACE = ['Replace'] as const;
const ADD_REMOVE = ['Add', 'Remove'] as const;

// The service's integers are JSON numbers: only safe integers survive a round trip.
const integer = { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } as const;
const string = { type: 'string' } as const;
// Nullable where the service's own example owner has null (docs/architecture.md section 2).
const nullableInteger = { type: ['integer', 'null'], minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } as const;
const nullableString = { type: ['string', 'null'] } as const;

export const FIELDS = [
  { name: 'AnnualExpensesAmount', kind: 'number', ops: REPLACE },
  { name: 'AnnualExpensesCurrencyId', kind: 'integer', ops: REPLACE },
  { name: 'Area', kind: 'integer', ops: REPLACE },
  { name: 'Category', kind: 'integer', ops: REPLACE },
  { name: 'Comment', kind: 'string', ops: REPLACE },
  { name: 'Description', kind: 'string', ops: REPLACE },
  { name: 'DescriptionSLAConditions', kind: 'string', ops: REPLACE },
  { name: 'Evaluation', kind: 'string', ops: REPLACE },
  { name: 'Signature', kind: 'string', ops: REPLACE },
  { name: 'Name', kind: 'string', ops: REPLACE },
  { name: 'ShortSLAConditions', kind: 'string', ops: REPLACE },
  { name: 'ValidFrom', kind: 'timestamp', ops: REPLACE },
  { name: 'ValidTo', kind: 'timestamp', ops: REPLACE },
  { name: 'OrderingPartyNoticePeriod', kind: 'duration', ops: REPLACE },
  { name: 'SupplierNoticePeriod', kind: 'duration', ops: REPLACE },
  {
    name: 'Company',
    kind: 'collection',
    ops: ADD_REMOVE,
    member: {
      type: 'object',
      properties: { Id: integer, RelationType: string },
      required: ['Id', 'RelationType'],
      additionalProperties: false,
    },
    identity: [['Id'], ['RelationType']],
  },
  {
    name: 'OrganizationalUnit',
    kind: 'collection',
    ops: ADD_REMOVE,
    member: {
      type: 'object',
      properties: { Id: integer, Name: string },
      required: ['Id', 'Name'],
      additionalProperties: false,
    },
    identity: [['Id']],
  },
  {
    name: 'Owner',
    kind: 'collection',
    ops: ADD_REMOVE,
    member: {
      type: 'object',
      properties: {
        OwnerType: {
          type: 'object',
          properties: { Name: string, Value: integer },
          required: ['Name', 'Value'],
          additionalProperties: false,
        },
        User: {
          type: 'object',
          properties: {
            Id: integer,
            Name: nullableString,
            Email: nullableString,
            OrganizationalUnit: {
              type: 'object',
              properties: { Id: nullableInteger, Name: nullableString },
              additionalProperties: false,
            },
          },
          required: ['Id'],
          additionalProperties: false,
        },
      },
      required: ['OwnerType', 'User'],
      additionalProperties: false,
    },
    identity: [
      ['OwnerType', 'Value'],
      ['User', 'Id'],
    ],
  },
  {
    name: 'Type',
    kind: 'collection',
    ops: ADD_REMOVE,
    member: {
      type: 'object',
      properties: {
        Lookup: string,
        EbaCode: { type: ['string', 'null'] },
        IsDora: { type: 'boolean' },
      },
      required: ['Lookup', 'IsDora'],
      additionalProperties: false,
    },
    identity: [['Lookup']],
  },
] as const satisfies readonly FieldSpec[];

export type FieldName = (typeof FIELDS)[number]['name'];
export type CollectionFieldName = Extract<(typeof FIELDS)[number], { kind: 'collection' }>['name'];
export type ScalarFieldName = Exclude<FieldName, CollectionFieldName>;

export const FIELD_NAMES: readonly FieldName[] = FIELDS.map((field) => field.name);

const FIELD_BY_NAME: ReadonlyMap<string, FieldSpec> = new Map(FIELDS.map((field) => [field.name, field]));

export function getField(name: string): FieldSpec | undefined {
  return FIELD_BY_NAME.get(name);
}

export function isFieldName(name: string): name is FieldName {
  return FIELD_BY_NAME.has(name);
}

export function isCollectionField(field: FieldSpec): field is CollectionFieldSpec {
  return field.kind === 'collection';
}

export const COLLECTION_FIELDS: readonly CollectionFieldSpec[] = (FIELDS as readonly FieldSpec[]).filter(isCollectionField);

type OpPath = `/Contract/${FieldName}`;

// Made once per field: every op of every planned contract carries one, and a whole string is written (JSON, text) without being joined first.
const OP_PATHS: ReadonlyMap<string, OpPath> = new Map(FIELDS.map((field): [string, OpPath] => [field.name, `/Contract/${field.name}`]));

/** The path of a field in a service op, e.g. `/Contract/Name`. */
export function opPath(field: FieldName): OpPath {
  return OP_PATHS.get(field) ?? `/Contract/${field}`;
}

/** Duration members, in the order the service lists them. Absent and null mean the same. */
export const DURATION_UNITS = ['Days', 'Hours', 'Minutes', 'Seconds', 'Milliseconds', 'Microseconds'] as const;
export type DurationUnit = (typeof DURATION_UNITS)[number];
