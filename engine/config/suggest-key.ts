/**
 * "Did you mean" for a misspelt key of contract-sync.yaml (`baseURL` -> `baseUrl`), as desired-state
 * files have for contract fields: the candidates are the keys the config's JSON Schema allows at
 * that place. Pure.
 */
import { closest } from '../text/suggest.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import type { PathSegment } from '../model/schema-validator.ts';

type SchemaNode = Readonly<Record<string, unknown>>;

function isNode(value: unknown): value is SchemaNode {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A node and the branches of its oneOf / anyOf / allOf: a key allowed by any of them is a candidate. */
function branches(node: SchemaNode): SchemaNode[] {
  const nested = ['oneOf', 'anyOf', 'allOf'].flatMap((keyword) => {
    const list = node[keyword];
    return Array.isArray(list) ? list.filter(isNode).flatMap(branches) : [];
  });
  return [node, ...nested];
}

/** The schemas of the value at `key` below `nodes`. */
function child(nodes: readonly SchemaNode[], key: PathSegment): SchemaNode[] {
  return nodes.flatMap((node) => {
    const properties = node.properties;
    if (isNode(properties) && isNode(properties[String(key)])) return branches(properties[String(key)] as SchemaNode);
    if (isNode(node.additionalProperties)) return branches(node.additionalProperties);
    if (isNode(node.items)) return branches(node.items);
    return [];
  });
}

/** The keys the schema allows in the map at `parent`. */
export function allowedKeys(schema: JsonSchema, parent: readonly PathSegment[]): string[] {
  let nodes = isNode(schema) ? branches(schema) : [];
  for (const key of parent) nodes = child(nodes, key);
  return [...new Set(nodes.flatMap((node) => (isNode(node.properties) ? Object.keys(node.properties) : [])))];
}

/** `unknown field "baseURL"` -> `unknown field "baseURL" (did you mean "baseUrl"?)`, when a close key is allowed there. */
export function withKeySuggestion(schema: JsonSchema, path: readonly PathSegment[], message: string): string {
  if (!message.startsWith('unknown field') || path.length === 0) return message;
  const suggestion = closest(String(path.at(-1)), allowedKeys(schema, path.slice(0, -1)));
  return suggestion === undefined ? message : `${message} (did you mean "${suggestion}"?)`;
}
