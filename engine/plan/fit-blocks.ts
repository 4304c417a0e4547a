/**
 * Fitting contracts into a length budget (a pull-request comment). Pure. Every contract keeps a
 * line while lines fit; the contracts whose detail is longest lose it first, so one huge value
 * cannot hide every other change. Only when even the lines do not fit are the last ones left out.
 */

export interface Fittable {
  /** The contract with its detail. */
  readonly full: string;
  /** The contract's one line, without the detail. */
  readonly short: string;
}

export type FitChoice = 'full' | 'short' | 'omitted';

/** For each item, in order: whether it is shown whole, as its line, or not at all, so that the total stays within `budget`. */
export function fitBlocks(items: readonly Fittable[], budget: number): FitChoice[] {
  const choices: FitChoice[] = items.map(() => 'full');
  let total = items.reduce((sum, item) => sum + item.full.length, 0);
  if (total <= budget) return choices;
  // Lines first: when even they do not all fit, the last contracts are left out.
  let lines = items.reduce((sum, item) => sum + item.short.length, 0);
  for (let index = items.length - 1; index >= 0 && lines > budget; index--) {
    lines -= items[index]!.short.length;
    total -= items[index]!.full.length;
    choices[index] = 'omitted';
  }
  // Then the largest details go first (ties: the later contract first, so earlier ones keep theirs).
  const bySize = items
    .map((item, index) => ({ index, saving: item.full.length - item.short.length }))
    .filter(({ index }) => choices[index] === 'full')
    .sort((a, b) => b.saving - a.saving || b.index - a.index);
  for (const { index, saving } of bySize) {
    if (total <= budget) break;
    if (saving <= 0) continue;
    choices[index] = 'short';
    total -= saving;
  }
  return choices;
}
