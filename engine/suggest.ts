/** "Did you mean" for misspelt field names. */

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (const [i, charA] of [...a].entries()) {
    const current = [i + 1];
    for (const [j, charB] of [...b].entries()) {
      current.push(Math.min(previous[j + 1]! + 1, current[j]! + 1, previous[j]! + (charA === charB ? 0 : 1)));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The closest of `candidates` to `name`, when it is close enough to be a likely typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = distance(lower, candidate.toLowerCase());
    if (score <= Math.max(2, Math.floor(candidate.length / 4)) && (!best || score < best.score)) best = { candidate, score };
  }
  return best?.candidate;
}
