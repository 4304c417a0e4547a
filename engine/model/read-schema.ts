/**
 * The read schema: a contract as the service returns it, not as a desired file writes it
 * (docs/architecture.md section 2). The service does not publish its read shape, so a read may
 * carry fields and member keys the model does not list; they are ignored, and left out of the
 * fields handed to the planner, the state store and the fingerprint. Known fields of the wrong
 * type are refused, so that no PATCH is planned from a contract the engine cannot understand.
 * specs/contract-read.schema.json is contractReadSchema() written out (`npm run specs`).
 */
import { FIELDS, type FieldSpec } from './fields.ts';
import type { JsonSchema } from './json-schema-type.ts';
import { fieldValueSchema, SPEC_ID_BASE } from './json-schemas.ts';
import { identityMemberSchema } from './members.ts';
import { isJsonObject } from './normalise.ts';
import { compileSchema, type SchemaCheck, type SchemaIssue } from './schema-validator.ts';
import type { ContractFields } from './types.ts';

function allowsNull(schema: JsonSchema): boolean {
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
}

function withNull(schema: JsonSchema): JsonSchema {
  if (schema.type === undefined || allowsNull(schema)) return schema;
  return { ...schema, type: [...(typeof schema.type === 'string' ? [schema.type] : schema.type), 'null'] };
}

/**
 * `schema` as a read may fill it: every object open to keys it does not list, and every key it
 * does not require nullable (a null the model does not allow is read as "not set" and left out by
 * projectKnown). Required keys (member identities) keep their type: a member without a usable
 * identity cannot be matched, and so cannot be managed.
 */
function tolerant(schema: JsonSchema): JsonSchema {
  const { additionalProperties: _closed, properties, items, ...rest } = schema;
  const required = new Set(schema.required ?? []);
  return {
    ...rest,
    ...(properties
      ? {
          properties: Object.fromEntries(
            Object.entries(properties).map(([key, value]) => [key, required.has(key) ? tolerant(value) : withNull(tolerant(value))]),
          ),
        }
      : {}),
    ...(items ? { items: tolerant(items) } : {}),
  };
}

/**
 * The read schema of one field. A scalar may be null (the service's "not set"; read as absent);
 * a timestamp may carry an offset (it is compared as an instant); a collection must be a list.
 */
function fieldReadSchema(field: FieldSpec): JsonSchema {
  if (field.kind === 'collection') return tolerant({ type: 'array', items: identityMemberSchema(field) });
  if (field.kind === 'timestamp') return { type: ['string', 'null'], description: 'ISO 8601 date-time; any offset' };
  return withNull(tolerant(fieldValueSchema(field)));
}

export function contractReadSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${SPEC_ID_BASE}/contract-read.schema.json`,
    title: 'A contract as read from the service',
    description:
      'What contract-sync accepts from GET /contract/{ContractId}. Fields and member keys it does not list are ignored; ' +
      'a listed field of another type makes the contract unreadable (it is not patched). null means "not set", except for a ' +
      'collection and a member identity field, which must have their type.',
    type: 'object',
    properties: Object.fromEntries(FIELDS.map((field) => [field.name, fieldReadSchema(field)])),
  };
}

/**
 * Only what the model's `schema` lists, recursively: unknown keys are left out, and so are nulls
 * where the model does not allow null (read as "not set"; a member field left out is not compared).
 */
function projectKnown(schema: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) return schema.items ? value.map((item) => projectKnown(schema.items!, item)) : value;
  if (!isJsonObject(value) || !schema.properties) return value;
  const kept: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(schema.properties)) {
    const item = value[key];
    if (!Object.hasOwn(value, key) || item === undefined || (item === null && !allowsNull(sub))) continue;
    kept[key] = projectKnown(sub, item);
  }
  return kept;
}

export interface ReadContract {
  /** The known fields: unknown fields and member keys left out, and nulls where the model allows none. */
  readonly fields: ContractFields;
  /** Known fields of the wrong type, with their paths from the contract root; empty when readable. */
  readonly issues: readonly SchemaIssue[];
}

let readCheck: SchemaCheck | undefined;

/** Checks a read against the read schema and keeps what the model knows. Never throws. */
export function readContract(body: unknown): ReadContract {
  readCheck ??= compileSchema(contractReadSchema());
  const issues = readCheck(body);
  if (issues.length > 0 || !isJsonObject(body)) return { fields: {}, issues };
  const fields: Record<string, unknown> = {};
  for (const field of FIELDS as readonly FieldSpec[]) {
    const value = body[field.name];
    if (value === undefined || value === null) continue;
    fields[field.name] = projectKnown(fieldValueSchema(field), value);
  }
  return { fields: fields as ContractFields, issues };
}
