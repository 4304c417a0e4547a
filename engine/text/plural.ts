/** Counts as people write them: `1 contract`, `2 contracts`, `0 contracts`; `plural(n, 'retry', 'retries')`. Pure. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}
