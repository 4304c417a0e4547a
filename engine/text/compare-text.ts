/**
 * Order of strings by UTF-16 code units, as the default sort gives, as a comparator: the order of
 * paths, tenants and ids everywhere (independent of locale, so stable across machines). Pure.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
