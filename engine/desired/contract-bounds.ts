/**
 * How many keys a map and how many items a list inside one contract may hold. Pure. A contract has
 * a dozen fields and its collections a few hundred members at most; a hostile file could hold a
 * million keys in one contract, each an "unknown field" to report, which took minutes and gigabytes
 * and ended in a stack overflow. Counted on the parsed value before any schema check (one pass,
 * no YAML positions), so a file past a bound costs little more than reading it: its contracts are
 * named, one line each, and the file is read no further.
 */
import type { PathSegment } from '../model/schema-validator.ts';

export const CONTRACT_BOUNDS = {
  /** Keys of any map in a contract, the contract's own included: far above the dozen fields it may have. */
  keys: 1000,
  /** Items of any list in a contract: members of one collection. */
  items: 10_000,
} as const;

export interface BoundExceeded {
  readonly contractId: string;
  /** The map or list inside the contract, relative to it ([] for the contract itself); the diagnostic's field. */
  readonly path: readonly PathSegment[];
  readonly message: string;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

/**
 * The first map or list of `value` past a bound, depth first; undefined when none is. Its path is
 * built on the way back, so that the walk over a file within bounds allocates nothing.
 */
function firstExceeded(value: unknown): { path: PathSegment[]; message: string } | undefined {
  if (Array.isArray(value)) {
    if (value.length > CONTRACT_BOUNDS.items) {
      return { path: [], message: `${count(value.length)} items; a list in a contract holds at most ${count(CONTRACT_BOUNDS.items)}` };
    }
    for (let index = 0; index < value.length; index++) {
      const found = firstExceeded(value[index]);
      if (found === undefined) continue;
      found.path.unshift(index);
      return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const keys = Object.keys(value);
  if (keys.length > CONTRACT_BOUNDS.keys) {
    return { path: [], message: `${count(keys.length)} keys; a map in a contract holds at most ${count(CONTRACT_BOUNDS.keys)}` };
  }
  for (const key of keys) {
    const found = firstExceeded((value as Record<string, unknown>)[key]);
    if (found === undefined) continue;
    found.path.unshift(key);
    return found;
  }
  return undefined;
}

/** Every contract of `contracts` with a map or list past its bound, with the first such place in it. */
export function exceededBounds(contracts: Readonly<Record<string, unknown>>): BoundExceeded[] {
  const exceeded: BoundExceeded[] = [];
  for (const [contractId, fields] of Object.entries(contracts)) {
    const found = firstExceeded(fields);
    if (found === undefined) continue;
    exceeded.push({ contractId, path: found.path, message: `${found.message}: the file is read no further` });
  }
  return exceeded;
}
