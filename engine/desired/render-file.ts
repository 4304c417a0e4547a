/**
 * A desired-state file from contracts as the service holds them (what `import` writes). Pure.
 *
 * The file says exactly what the service holds, in the house style of the examples: ContractIds
 * as quoted keys, fields in the field table's order, member fields in their schema's order, short
 * maps (durations, members) in flow style. What a desired-state file cannot say is left out and
 * reported as a note: a field the service holds as null stays unmanaged, a member field the model
 * does not know is not compared anyway (docs/architecture.md section 3.3), so the file still plans to no op.
 */
import { Document, isMap, isScalar, isSeq, Pair, Scalar, stringify, YAMLMap, type Node } from 'yaml';
import { DURATION_UNITS, FIELDS, type FieldSpec } from '../model/fields.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import { missingMemberFields } from '../model/members.ts';
import { isJsonObject, isUtcTimestamp, normaliseTimestamp } from '../model/normalise.ts';

export interface RenderFileInput {
  readonly tenant: string;
  /** ContractId -> the contract's fields as read; rendered in this map's order. */
  readonly contracts: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** The `$schema` of the `# yaml-language-server` first line: a path relative to the file, or a URL. */
  readonly schema: string;
}

/** Something the service holds that the file does not say, and why. */
export interface RenderNote {
  readonly contractId: string;
  /** Dotted path inside the contract, e.g. `Owner[0].User.Phone`. */
  readonly field: string;
  readonly message: string;
}

export interface RenderedFile {
  readonly text: string;
  readonly notes: readonly RenderNote[];
}

/** A map longer than this on one line is written as a block, its nested maps each decided again. */
export const MAX_FLOW_WIDTH = 80;

// YAML 1.1 reads these plain words as booleans; YAML 1.2 (our parser) as strings. Quoted, they are
// strings to every reader, human or tool.
const YAML_1_1_BOOLEANS = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;

interface Shaped {
  readonly value: unknown;
  readonly notes: readonly { readonly field: string; readonly message: string }[];
}

const KEEP: Shaped['notes'] = [];

function allowsNull(schema: JsonSchema): boolean {
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
}

/**
 * An object's keys in its schema's order; keys the schema does not know are dropped, and so are
 * nulls it does not allow (an absent member field is not compared, so neither changes the plan).
 * Values of the wrong type are kept: validation reports them.
 */
function shapeObject(value: Record<string, unknown>, schema: JsonSchema, at: string): Shaped {
  const properties = schema.properties ?? {};
  const shaped: Record<string, unknown> = {};
  const notes: Shaped['notes'][number][] = [];
  for (const [key, property] of Object.entries(properties)) {
    if (!Object.hasOwn(value, key)) continue;
    const member = value[key];
    if (member === undefined) continue;
    if (member === null && !allowsNull(property)) {
      notes.push({ field: `${at}.${key}`, message: 'is null in the service; left out (a member field left out is not compared)' });
      continue;
    }
    if (isJsonObject(member) && property.properties !== undefined) {
      const inner = shapeObject(member, property, `${at}.${key}`);
      shaped[key] = inner.value;
      notes.push(...inner.notes);
      continue;
    }
    shaped[key] = member;
  }
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(properties, key)) notes.push({ field: `${at}.${key}`, message: 'is not a field of the contract model; left out (it is not compared)' });
  }
  return { value: shaped, notes };
}

function shapeDuration(value: Record<string, unknown>, at: string): Shaped {
  const shaped: Record<string, unknown> = {};
  // Absent and null units mean the same (docs/architecture.md section 3.2): only the set ones are written.
  for (const unit of DURATION_UNITS) if (value[unit] !== null && value[unit] !== undefined) shaped[unit] = value[unit];
  const unknown = Object.keys(value).filter((key) => !(DURATION_UNITS as readonly string[]).includes(key));
  return { value: shaped, notes: unknown.map((key) => ({ field: `${at}.${key}`, message: 'is not a duration unit; left out' })) };
}

/** A field's value as the file writes it; `undefined` leaves the field out. */
function shapeField(field: FieldSpec, value: unknown): Shaped {
  if (value === null)
    return { value: undefined, notes: [{ field: field.name, message: 'is null in the service; left unmanaged (a desired-state file cannot say null here)' }] };
  if (field.kind === 'timestamp' && typeof value === 'string' && !isUtcTimestamp(value)) {
    // Desired files take UTC only; the same instant in UTC compares equal (docs/architecture.md section 3.2).
    const utc = normaliseTimestamp(value);
    return { value: utc === undefined ? value : utc.replace(/\.000Z$/, 'Z'), notes: KEEP };
  }
  if (field.kind === 'duration' && isJsonObject(value)) return shapeDuration(value, field.name);
  if (field.kind === 'collection' && Array.isArray(value)) {
    const notes: Shaped['notes'][number][] = [];
    const members = value.map((member, index) => {
      if (!isJsonObject(member)) return member;
      const shaped = shapeObject(member, field.member, `${field.name}[${index}]`);
      notes.push(...shaped.notes);
      return shaped.value;
    });
    // A desired member must give every non-nullable member field (docs/architecture.md section 2).
    // Leaving the incomplete member out would make authoritative mode remove it: the whole field
    // is left unmanaged instead, so that the file validates and plans nothing for it.
    const incomplete = members.flatMap((member, index) => missingMemberFields(field, member).map((path) => `${field.name}[${index}].${path}`));
    if (incomplete.length > 0) {
      return {
        value: undefined,
        notes: [
          ...notes,
          {
            field: field.name,
            message: `has members without ${incomplete.join(', ')} in the service; left unmanaged (a desired member must give every non-nullable member field)`,
          },
        ],
      };
    }
    return { value: members, notes };
  }
  return { value, notes: KEEP };
}

function hasMultiLineString(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\n');
  if (Array.isArray(value)) return value.some(hasMultiLineString);
  return isJsonObject(value) && Object.values(value).some(hasMultiLineString);
}

function fitsOnOneLine(value: unknown): boolean {
  if (hasMultiLineString(value)) return false;
  return stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trimEnd().length <= MAX_FLOW_WIDTH;
}

/** Flow style for maps that fit on one line; lists stay blocks (one member per line). */
function style(node: unknown): void {
  if (isScalar(node)) {
    if (typeof node.value === 'string' && YAML_1_1_BOOLEANS.test(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    return;
  }
  if (isSeq(node)) {
    for (const item of node.items) style(item);
    return;
  }
  if (!isMap(node)) return;
  node.flow = fitsOnOneLine(node.toJSON());
  for (const pair of node.items) style(pair.value);
}

export function renderDesiredFile(input: RenderFileInput): RenderedFile {
  const doc = new Document({ tenant: input.tenant });
  const contracts = new YAMLMap<Scalar<string>, Node>();
  const notes: RenderNote[] = [];
  for (const [contractId, live] of input.contracts) {
    const fields = new YAMLMap<Scalar<string>, Node>();
    // FIELDS order: the order of ops in a PATCH and of the fields in every plan.
    for (const field of FIELDS as readonly FieldSpec[]) {
      if (!Object.hasOwn(live, field.name) || live[field.name] === undefined) continue;
      const shaped = shapeField(field, live[field.name]);
      notes.push(...shaped.notes.map((note) => ({ contractId, ...note })));
      if (shaped.value === undefined) continue;
      const node = doc.createNode(shaped.value);
      style(node);
      fields.items.push(new Pair(new Scalar(field.name), node));
    }
    // Always quoted: `0815:` would be read as the number 815, and `4711` as a number too.
    const key = new Scalar(contractId);
    key.type = Scalar.QUOTE_DOUBLE;
    contracts.items.push(new Pair(key, fields));
  }
  // An empty map in block style would be read as null: `contracts: {}` keeps the file valid.
  if (contracts.items.length === 0) contracts.flow = true;
  doc.set('contracts', contracts);
  style(doc.get('tenant', true));
  // lineWidth 0: no folding, so that each string is on the lines it has in the service.
  const body = doc.toString({ lineWidth: 0 });
  return { text: `# yaml-language-server: $schema=${input.schema}\n${body}`, notes };
}
