/**
 * A bound on what one evaluation of a rule may cost, decided before it runs (CEL has no loops, so
 * the work is bounded by the expression and the lists it iterates): nodes × (longest list + 1) ^
 * comprehension depth. An expression over the bound on a contract is not run; the rule fails
 * closed with a finding saying so. Deterministic, unlike a timer: every run gives the same verdict
 * on the same contract. Pure.
 */
import type { CompiledExpression } from './types.ts';

/** About a tenth of a second of evaluation (measured: 90,000 inner steps of a two-deep rule, bound 1.2e6, took 0.6 s on Node 20); real rules on real contracts cost far less. */
export const MAX_EVALUATION_COST = 200_000;

/** The longest list anywhere in `value` (its collections; the ops). */
export function longestList(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  // Loops, not reduce, and no call for a scalar: run on every contract, the calls cost as much as the walk.
  if (Array.isArray(value)) {
    let longest = value.length;
    for (const item of value as readonly unknown[]) {
      if (item === null || typeof item !== 'object') continue;
      const inner = longestList(item);
      if (inner > longest) longest = inner;
    }
    return longest;
  }
  let longest = 0;
  for (const key in value) {
    const item = (value as Readonly<Record<string, unknown>>)[key];
    if (item === null || typeof item !== 'object') continue;
    const inner = longestList(item);
    if (inner > longest) longest = inner;
  }
  return longest;
}

/** The bound of one evaluation of `expression` over input lists of at most `longest` items. */
export function evaluationCost(expression: CompiledExpression, longest: number): number {
  const { nodes, depth, widest } = expression.cost;
  return nodes * (Math.max(longest, widest) + 1) ** depth;
}
