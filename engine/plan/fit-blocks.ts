/**
 * Fitting contracts into a length budget (a pull-request comment). Pure. Every contract keeps a
 * line while lines fit; the contracts whose detail is longest lose it first, so one huge value
 * cannot hide every other change. When even the lines do not fit, the last contracts are named by
 * id only (items that can be, `listed`), so that every one is still named; only when even that
 * does not fit are the last ones left out (the first keep their lines, within half the budget).
 */

export interface Fittable {
  /** The contract with its detail. */
  readonly full: string;
  /** The contract's one line, without the detail. */
  readonly short: string;
  /** The length of naming it by id only in a closing list; without it the item is never listed, only omitted. */
  readonly listed?: number;
}

export type FitChoice = 'full' | 'short' | 'listed' | 'omitted';

/** How an item is named when it loses its line: by id, or not at all when it cannot be listed. */
function named(item: Fittable): FitChoice {
  return item.listed === undefined ? 'omitted' : 'listed';
}

function listedCost(item: Fittable): number {
  return item.listed ?? 0;
}

/** For each item, in order: whether it is shown whole, as its line, by id only, or not at all, so that the total stays within `budget`. */
export function fitBlocks(items: readonly Fittable[], budget: number): FitChoice[] {
  const choices: FitChoice[] = items.map(() => 'full');
  let total = items.reduce((sum, item) => sum + item.full.length, 0);
  if (total <= budget) return choices;

  // The most items that keep their line while every later one is named by id.
  let lines = items.reduce((sum, item) => sum + item.short.length, 0);
  let kept = items.length;
  while (kept > 0 && lines > budget) {
    kept -= 1;
    lines += listedCost(items[kept]!) - items[kept]!.short.length;
  }
  if (lines > budget) {
    // Not even the ids of all fit: lines for the first within half the budget, then ids while they fit.
    lines = 0;
    kept = 0;
    while (kept < items.length && lines + items[kept]!.short.length <= budget / 2) lines += items[kept++]!.short.length;
    let index = kept;
    while (index < items.length && lines + listedCost(items[index]!) <= budget) lines += listedCost(items[index++]!);
    for (let rest = index; rest < items.length; rest++) choices[rest] = 'omitted';
    for (let rest = kept; rest < index; rest++) choices[rest] = named(items[rest]!);
  } else {
    for (let rest = kept; rest < items.length; rest++) choices[rest] = named(items[rest]!);
  }
  total = items.reduce((sum, item, index) => sum + (choices[index] === 'full' ? item.full.length : choices[index] === 'listed' ? listedCost(item) : 0), 0);

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
