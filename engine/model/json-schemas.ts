/**
 * JSON Schemas derived from the field table. specs/contracts.schema.json and
 * specs/patch.schema.json are these objects written out (`npm run specs`); a test keeps them equal.
 */
import { DURATION_UNITS, FIELDS, opPath, type CollectionFieldSpec, type FieldSpec } from './fields.ts';
import type { JsonSchema } from './json-schema-type.ts';
import { identityMemberSchema } from './members.ts';

/**
 * The base of the schemas' `$id`s: a name, not an address (the project serves no web site). Files
 * point to the schemas by relative paths into the installed package's specs/ (engine/init/schema-path.ts).
 */
export const SPEC_ID_BASE = 'urn:contract-sync:specs';

/** Tenant names: also used in URLs, file names and log lines. */
export const TENANT_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/**
 * ContractIds: the service does not publish their format, so any id it could have is accepted:
 * non-empty, at most 256 characters, no control characters (C0, DEL, C1), no invisible or
 * bidirectional characters (zero-width, soft hyphen, bidi marks, overrides and isolates, U+FEFF: the
 * characters engine/text/text-escape.ts makes visible, which would make two ids look alike or one
 * read backwards), no leading or trailing white space. Every URL percent-encodes it (encodeURIComponent), so `/`, `?`, `#` and `%` cannot
 * escape the `/contract/` path segment.
 */
export const CONTRACT_ID_PATTERN = String.raw`^(?!\s)[^\u0000-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]{1,256}(?<!\s)$`;

const CONTRACT_ID = new RegExp(CONTRACT_ID_PATTERN, 'u');

/** True for an id CONTRACT_ID_PATTERN allows, counted in characters as the JSON Schemas count them. */
export function isContractId(id: unknown): id is string {
  return typeof id === 'string' && CONTRACT_ID.test(id);
}

/** What CONTRACT_ID_PATTERN allows, for messages. */
export const CONTRACT_ID_RULE =
  'a ContractId is non-empty, at most 256 characters, without control, invisible or bidirectional characters or leading or trailing white space';

const UTC_TIMESTAMP_PATTERN = String.raw`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$`;
const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * The largest magnitude of each duration unit: together they stay within what a duration can hold
 * (10,675,199 days, about 29,000 years, the range of a 64-bit count of 100-nanosecond ticks), and
 * within JSON's exact integers. `Days: 1e26` is a mistake, not a notice period.
 */
const DURATION_LIMITS: Readonly<Record<(typeof DURATION_UNITS)[number], number>> = {
  Days: 10_675_199,
  Hours: 256_204_778,
  Minutes: 15_372_286_728,
  Seconds: 922_337_203_685,
  Milliseconds: 922_337_203_685_477,
  Microseconds: SAFE,
};

const KIND_SCHEMAS = {
  number: { type: 'number', minimum: -SAFE, maximum: SAFE },
  integer: { type: 'integer', minimum: -SAFE, maximum: SAFE },
  string: { type: 'string' },
  timestamp: {
    type: 'string',
    format: 'date-time',
    pattern: UTC_TIMESTAMP_PATTERN,
    description: 'ISO 8601 date-time in UTC, e.g. 2027-01-01T00:00:00Z',
  },
  duration: {
    type: 'object',
    properties: Object.fromEntries(
      DURATION_UNITS.map((unit) => [unit, { type: ['number', 'null'], minimum: -DURATION_LIMITS[unit], maximum: DURATION_LIMITS[unit] }]),
    ),
    additionalProperties: false,
    description: `A duration; absent units mean null. Units: ${DURATION_UNITS.join(', ')}`,
  },
} as const satisfies Record<Exclude<FieldSpec['kind'], 'collection'>, JsonSchema>;

/** The schema of a field's value in a desired-state file (a collection: the list of members). */
export function fieldValueSchema(field: FieldSpec, member: (field: CollectionFieldSpec) => JsonSchema = (collection) => collection.member): JsonSchema {
  if (field.kind === 'collection') return { type: 'array', items: member(field) };
  return KIND_SCHEMAS[field.kind];
}

/**
 * The schema of one op's `value` in a PATCH body. An `Add` carries a complete member; a `Remove`
 * carries the member as known, which a read guarantees only up to its identity (the service
 * matches a Remove by identity).
 */
function opValueSchema(field: FieldSpec, op: FieldSpec['ops'][number]): JsonSchema {
  if (field.kind !== 'collection') return KIND_SCHEMAS[field.kind];
  return op === 'Remove' ? identityMemberSchema(field) : field.member;
}

function fieldDescription(field: FieldSpec): string {
  if (field.kind === 'collection') {
    const identity = field.identity.map((path) => path.join('.')).join(' + ');
    return `Collection of members, matched by ${identity}; changed with Add and Remove.`;
  }
  return `${field.kind}; changed with Replace. Leave it out to leave it unmanaged.`;
}

/**
 * The schema of one contract: as a desired file writes it (complete members), or, with
 * `storedMemberSchema`, as the emulator's seed may hold it (members need their identity only).
 */
export function contractSchema(member?: (field: CollectionFieldSpec) => JsonSchema): JsonSchema {
  return {
    type: 'object',
    description: 'The desired fields of one contract. A field left out is not managed.',
    properties: Object.fromEntries(FIELDS.map((field) => [field.name, { ...fieldValueSchema(field, member), description: fieldDescription(field) }])),
    additionalProperties: false,
  };
}

export function contractsFileSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_ID_BASE}/contracts.schema.json`,
    title: 'contract-sync desired-state file',
    description: 'One tenant and the desired state of its contracts, keyed by ContractId.',
    type: 'object',
    properties: {
      tenant: { type: 'string', pattern: TENANT_PATTERN, description: 'The tenant, as named in contract-sync.yaml.' },
      contracts: {
        type: 'object',
        propertyNames: { pattern: CONTRACT_ID_PATTERN, description: CONTRACT_ID_RULE },
        additionalProperties: { $ref: '#/$defs/Contract' },
      },
    },
    required: ['tenant', 'contracts'],
    additionalProperties: false,
    $defs: { Contract: contractSchema() },
  };
}

/** One allowed (op, path, value) combination of the service, e.g. Replace /Contract/Name string. */
export interface OpShape {
  readonly op: FieldSpec['ops'][number];
  readonly field: FieldSpec;
  readonly schema: JsonSchema;
}

export function opShapes(): OpShape[] {
  return FIELDS.flatMap((field: FieldSpec) =>
    field.ops.map((op) => ({
      op,
      field,
      schema: {
        type: 'object',
        properties: { op: { const: op }, path: { const: opPath(field.name as never) }, value: opValueSchema(field, op) },
        required: ['op', 'path', 'value'],
        additionalProperties: false,
      } satisfies JsonSchema,
    })),
  );
}

export function patchSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_ID_BASE}/patch.schema.json`,
    title: 'Body of PATCH /contract/{ContractId}',
    description: 'A non-empty list of operations, applied all-or-nothing.',
    type: 'array',
    minItems: 1,
    items: { oneOf: opShapes().map((shape) => shape.schema) },
  };
}
