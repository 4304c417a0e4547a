/**
 * Complete members (docs/architecture.md section 2): a desired member and an `Add` carry every
 * member field the seed does not call nullable; the nullable ones may be left out of a desired file
 * and are sent as null, as a duration's unset units are. A read, and the `Remove` of a member as
 * read, need only the member's identity.
 */
import type { CollectionFieldSpec, MemberPath } from './fields.ts';
import type { JsonSchema } from './json-schema-type.ts';
import { cloneJson, isJsonObject } from './normalise.ts';

function allowsNull(schema: JsonSchema): boolean {
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
}

/** `schema` with `required` cut down to the identity `paths` below it (nested objects likewise); `open` also lets unknown keys in. */
function requireOnly(schema: JsonSchema, paths: readonly MemberPath[], open: boolean): JsonSchema {
  if (!schema.properties) return schema;
  const heads = new Set(paths.map((path) => path[0]!));
  const required = (schema.required ?? []).filter((key) => heads.has(key));
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([key, sub]) => [
      key,
      requireOnly(
        sub,
        paths.filter((path) => path[0] === key && path.length > 1).map((path) => path.slice(1)),
        open,
      ),
    ]),
  );
  const { required: _all, additionalProperties, ...rest } = schema;
  return { ...rest, properties, ...(required.length > 0 ? { required } : {}), ...(open || additionalProperties === undefined ? {} : { additionalProperties }) };
}

/**
 * The member schema with only the identity required and other keys tolerated: what a `Remove`
 * must carry. It sends the member as known (a record may hold keys the model does not list), and
 * the service matches it by identity.
 */
export function identityMemberSchema(field: CollectionFieldSpec): JsonSchema {
  return requireOnly(field.member, field.identity, true);
}

/**
 * The member schema with only the identity required, other keys still refused: what the
 * emulator's seed may hold (the service's data, which may lack a field a desired member must give).
 */
export function storedMemberSchema(field: CollectionFieldSpec): JsonSchema {
  return requireOnly(field.member, field.identity, false);
}

/** One property of a schema as fill walks it, worked out once per schema (every member of every planned contract is filled). */
export interface FillStep {
  readonly key: string;
  readonly sub: JsonSchema;
  readonly nullable: boolean;
  /** Not required and has properties: an absent nested map is created. */
  readonly createNested: boolean;
}

/** A schema's fill steps, and the keys they name. */
export interface FillPlan {
  readonly steps: readonly FillStep[];
  readonly keys: ReadonlySet<string>;
}

const FILL_PLANS = new WeakMap<JsonSchema, FillPlan>();

function fillPlan(schema: JsonSchema & { readonly properties: NonNullable<JsonSchema['properties']> }): FillPlan {
  let plan = FILL_PLANS.get(schema);
  if (plan === undefined) {
    const required = schema.required ?? [];
    const steps = Object.entries(schema.properties).map(([key, sub]) => ({
      key,
      sub,
      nullable: allowsNull(sub),
      createNested: sub.properties !== undefined && !required.includes(key),
    }));
    plan = { steps, keys: new Set(steps.map((step) => step.key)) };
    FILL_PLANS.set(schema, plan);
  }
  return plan;
}

/**
 * How fill completes a map of `schema` (its steps in order, the keys they name); undefined when the
 * schema has no properties (fill gives such a value as it is). For a reader that walks a member as
 * completeMember would complete it, without the copy (the text plan).
 */
export function fillPlanOf(schema: JsonSchema): FillPlan | undefined {
  return schema.properties ? fillPlan(schema as Parameters<typeof fillPlan>[0]) : undefined;
}

/**
 * `value` with every member field it leaves out taken from `fallback` (a known member) or, when
 * the field is nullable, set to null; recursively (nested maps are created), in schema order.
 */
function fill(schema: JsonSchema, value: unknown, fallback: unknown, copy = false): unknown {
  if (!schema.properties || (value !== undefined && !isJsonObject(value))) return copy ? cloneJson(value) : value;
  const given = value ?? {};
  const known = isJsonObject(fallback) ? fallback : {};
  const filled: Record<string, unknown> = {};
  for (const { key, sub, nullable, createNested } of fillPlan(schema as Parameters<typeof fillPlan>[0]).steps) {
    const item = given[key];
    if (item !== undefined) filled[key] = fill(sub, item, known[key], copy);
    else if (known[key] !== undefined && known[key] !== null) filled[key] = fill(sub, cloneJson(known[key]), undefined);
    else if (nullable) filled[key] = null;
    else if (createNested) filled[key] = fill(sub, undefined, undefined);
  }
  for (const key of Object.keys(given)) {
    const item = given[key];
    if (!Object.hasOwn(filled, key) && item !== undefined) filled[key] = copy ? cloneJson(item) : item;
  }
  return filled;
}

/**
 * A member as an `Add` sends it: the member fields a desired member leaves out are null when
 * nullable (`{Lookup: ICT, IsDora: false}` → `{Lookup: ICT, EbaCode: null, IsDora: false}`), or,
 * for a changed member, kept as `known` holds them: what the desired file does not write is not
 * managed, so re-adding a member must not clear it.
 */
export function completeMember<T>(field: CollectionFieldSpec, member: T, known?: unknown): T {
  return fill(field.member, member, known) as T;
}

/** completeMember of a copy of `member` (what an `Add` sends shares nothing with the desired state), copied as it is completed. */
export function completedCopy<T>(field: CollectionFieldSpec, member: T, known?: unknown): T {
  return fill(field.member, member, known, true) as T;
}

function missingIn(schema: JsonSchema, value: unknown, at: readonly string[]): string[] {
  if (!schema.properties || !isJsonObject(value)) return [];
  const missing: string[] = [];
  for (const [key, sub] of Object.entries(schema.properties)) {
    const item = value[key];
    if ((item === undefined || item === null) && (schema.required ?? []).includes(key) && !allowsNull(sub)) missing.push([...at, key].join('.'));
    else missing.push(...missingIn(sub, item, [...at, key]));
  }
  return missing;
}

/** The non-nullable member fields `member` lacks (or holds as null), as dotted paths: `['Name']`, `['OwnerType.Name']`. */
export function missingMemberFields(field: CollectionFieldSpec, member: unknown): string[] {
  return missingIn(field.member, member, []);
}

function requiredIn(schema: JsonSchema, at: readonly string[]): string[] {
  if (!schema.properties) return [];
  return Object.entries(schema.properties).flatMap(([key, sub]) => {
    if (!(schema.required ?? []).includes(key) || allowsNull(sub)) return [];
    return sub.properties ? requiredIn(sub, [...at, key]) : [[...at, key].join('.')];
  });
}

/** Every member field a desired member must give, as dotted paths: Owner → `OwnerType.Name, OwnerType.Value, User.Id`. */
export function requiredMemberFields(field: CollectionFieldSpec): string[] {
  return requiredIn(field.member, []);
}
