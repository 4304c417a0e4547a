/** "Did you mean" for misspelt field names. */

/**
 * The edit distance between `a` and `b` (arrays of code points), or `limit + 1` as soon as it is
 * sure to exceed `limit`: each name is compared with every field name, so this stays cheap.
 */
function distance(a: readonly number[], b: readonly number[], limit: number): number {
  let previous = new Uint32Array(b.length + 1);
  let current = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 0; i < a.length; i++) {
    current[0] = i + 1;
    let rowMin = current[0];
    for (let j = 0; j < b.length; j++) {
      const value = Math.min(previous[j + 1]! + 1, current[j]! + 1, previous[j]! + (a[i] === b[j] ? 0 : 1));
      current[j + 1] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

function codePoints(text: string): number[] {
  return Array.from(text, (char) => char.codePointAt(0)!);
}

/** The candidates (field and option names, a few hundred at most) in lower case, as code points. */
const candidateCodes = new Map<string, number[]>();

function candidateCodePoints(candidate: string): number[] {
  let codes = candidateCodes.get(candidate);
  if (codes === undefined) {
    codes = codePoints(candidate.toLowerCase());
    if (candidateCodes.size < 10_000) candidateCodes.set(candidate, codes);
  }
  return codes;
}

/** The closest of `candidates` to `name`, when it is close enough to be a likely typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  const lower = codePoints(name.toLowerCase());
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const allowed = Math.max(2, Math.floor(candidate.length / 4));
    const other = candidateCodePoints(candidate);
    // The distance is at least the difference in length: most candidates need no table at all.
    if (Math.abs(lower.length - other.length) > allowed) continue;
    const score = distance(lower, other, allowed);
    if (score <= allowed && (!best || score < best.score)) best = { candidate, score };
  }
  return best?.candidate;
}
