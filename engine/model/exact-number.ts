/**
 * Numbers that JSON (and so the service) cannot carry as written. Pure. YAML reads `1e-400` as 0
 * without a word: the value sent would not be the value reviewed, so such a number is an error
 * where it is written. (Integers beyond 2^53 and infinities are refused by every schema's bounds:
 * each number field, duration unit and config number has a minimum and a maximum.)
 */

const SPECIAL = /^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$/;

/** Why the plain scalar `source`, read as `value`, is not that number exactly; undefined when it is. */
export function inexactNumber(source: string, value: number): string | undefined {
  const text = source.trim();
  if (value !== 0 || SPECIAL.test(text)) return undefined;
  const mantissa = text.split(/[eE]/)[0]!;
  return /[1-9]/.test(mantissa) ? `${text} is too small for a JSON number; it would be sent as 0` : undefined;
}
