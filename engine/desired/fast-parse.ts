/**
 * The fast path of reading a desired-state file: engine/yaml/plain-yaml.ts, with the positions of the
 * `tenant` value and of every ContractId key taken from the same pass. For anything it cannot
 * vouch for it returns undefined and the caller reads the file with the `yaml` package
 * (engine/yaml/yaml-source.ts), which gives the exact messages and positions of every problem.
 */
import { positionsIn, readPlainYamlMap, type PlainYamlAncestor, type PlainYamlForm } from '../yaml/plain-yaml.ts';
import type { Position, YamlLimits } from '../yaml/yaml-source.ts';

export interface FastParse {
  /** The file's top-level map. */
  readonly value: Record<string, unknown>;
  /** Where the `tenant` value starts, if the file has one. */
  readonly tenantPosition?: Position;
  /** Where each key of the `contracts` map starts. */
  readonly contractPositions: ReadonlyMap<string, Position>;
}

/**
 * Reads `text` (already size-checked and decoded) the fast way, or returns undefined when the
 * `yaml` package must read it. Never throws.
 */
export function fastParseDesired(text: string, limits: YamlLimits): FastParse | undefined {
  let at: ((offset: number) => Position) | undefined;
  const contractPositions = new Map<string, Position>();
  let tenantPosition: Position | undefined;
  function visit(ancestors: readonly PlainYamlAncestor[], key: string | undefined, form: PlainYamlForm, start: number): boolean {
    if (key !== undefined) {
      if (ancestors.length === 2 && ancestors[0]!.key === 'contracts') contractPositions.set(key, (at ??= positionsIn(text))(start));
      return true;
    }
    if (ancestors.length !== 1 || ancestors[0]!.key !== 'tenant') return true;
    // Only a tenant written as a plain or quoted scalar is a string with a position both parsers agree on.
    if (form !== 'inline') return false;
    tenantPosition = (at ??= positionsIn(text))(start);
    return true;
  }
  const value = readPlainYamlMap(text, limits, visit);
  if (value === undefined) return undefined;
  return { value, contractPositions, ...(tenantPosition ? { tenantPosition } : {}) };
}
