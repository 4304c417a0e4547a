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
  // Built as it goes (every known contract of a plan is fingerprinted): no intermediate arrays.
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) text += ',';
      // A hole stays empty, as Array.prototype.map leaves it (JSON data has none).
      if (!(index in value)) continue;
      const item: unknown = value[index];
      text += item === undefined ? 'null' : canonicalJson(item);
    }
    return `${text}]`;
  }
  const keys = Object.keys(value).sort();
  let text = '';
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `{${text}}`;
}

/** `sha256:<64 hex digits>`. Unknown state (undefined) is fingerprinted as JSON `null`. */
export function fingerprint(value: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(value ?? null))
    .digest('hex')}`;
}
