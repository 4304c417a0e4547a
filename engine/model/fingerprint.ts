/**
 * The fingerprint of a contract's known state: sha256 of its canonical JSON. A plan records it;
 * apply refuses a contract whose known state no longer has it ("stale plan").
 */
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so that equal data gives equal text whatever the
 * order it was built in. Like JSON.stringify, undefined object members are left out and -0 is 0.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** `sha256:<64 hex digits>`. Unknown state (undefined) is fingerprinted as JSON `null`. */
export function fingerprint(value: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(value ?? null))
    .digest('hex')}`;
}
