/**
 * JSON Schemas derived from the field table. specs/contracts.schema.json and
 * specs/patch.schema.json are these objects written out (`npm run specs`); a test keeps them equal.
 */
import { DURATION_UNITS, FIELDS, opPath, type FieldSpec } from './fields.ts';
import type { JsonSchema } from './json-schema-type.ts';

export const SPEC_BASE_URL = 'https://contract-sync.dev/specs';

/** Tenant names: also used in URLs, file names and log lines. */
export const TENANT_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/**
 * ContractIds: the service does not publish their format; we accept URL-safe ids that cannot
 * escape the `/contract/` path segment.
 */
export const CONTRACT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$';

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
    properties: Object.fromEntries(DURATION_UNITS.map((unit) => [unit, { type: ['number', 'null'], minimum: -DURATION_LIMITS[unit], maximum: DURATION_LIMITS[unit] }])),
    additionalProperties: false,
    description: `A duration; absent units mean null. Units: ${DURATION_UNITS.join(', ')}`,
  },
} as const satisfies Record<Exclude<FieldSpec['kind'], 'collection'>, JsonSchema>;

/** The schema of a field's value in a desired-state file (a collection: the list of members). */
export function fieldValueSchema(field: FieldSpec): JsonSchema {
  if (field.kind === 'collection') return { type: 'array', items: field.member };
  return KIND_SCHEMAS[field.kind];
}

/** The schema of one op's `value` in a PATCH body. */
function opValueSchema(field: FieldSpec): JsonSchema {
  return field.kind === 'collection' ? field.member : KIND_SCHEMAS[field.kind];
}

function fieldDescription(field: FieldSpec): string {
  if (field.kind === 'collection') {
    const identity = field.identity.map((path) => path.join('.')).join(' + ');
    return `Collection of members, matched by ${identity}; changed with Add and Remove.`;
  }
  return `${field.kind}; changed with Replace. Leave it out to leave it unmanaged.`;
}

export function contractSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'The desired fields of one contract. A field left out is not managed.',
    properties: Object.fromEntries(
      FIELDS.map((field) => [field.name, { ...fieldValueSchema(field), description: fieldDescription(field) }]),
    ),
    additionalProperties: false,
  };
}

export function contractsFileSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_BASE_URL}/contracts.schema.json`,
    title: 'contract-sync desired-state file',
    description: 'One tenant and the desired state of its contracts, keyed by ContractId.',
    type: 'object',
    properties: {
      tenant: { type: 'string', pattern: TENANT_PATTERN, description: 'The tenant, as named in contract-sync.yaml.' },
      contracts: {
        type: 'object',
        propertyNames: { pattern: CONTRACT_ID_PATTERN },
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
        properties: { op: { const: op }, path: { const: opPath(field.name as never) }, value: opValueSchema(field) },
        required: ['op', 'path', 'value'],
        additionalProperties: false,
      } satisfies JsonSchema,
    })),
  );
}

export function patchSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_BASE_URL}/patch.schema.json`,
    title: 'Body of PATCH /contract/{ContractId}',
    description: 'A non-empty list of operations, applied all-or-nothing.',
    type: 'array',
    minItems: 1,
    items: { oneOf: opShapes().map((shape) => shape.schema) },
  };
}
