/**
 * What apply and drift --fix say again just above their question (engine/run/render-run.ts): the
 * per-tenant summary when the plan scrolled away or went elsewhere, and where the plan is.
 */
import { describe, expect, it } from 'vitest';
import { PLAN_VERSION, type PlanDocument } from '../../engine/plan/types.ts';
import { beforeQuestion, shownPlan } from '../../engine/run/render-run.ts';

const PLAN: PlanDocument = {
  version: PLAN_VERSION,
  createdAt: '2027-01-01T00:00:00.000Z',
  source: { repo: '.', ref: null, commit: null },
  tenants: [{ tenant: 'acme', contracts: [] }],
  summary: { tenants: 1, contracts: 0, changed: 0, ops: 0 },
};

describe('what is said again above the question', () => {
  const shown = shownPlan('line 1\nline 2\nline 3\n', PLAN);

  it('counts the lines the plan took, and holds its summary', () => {
    expect(shown).toEqual({ lines: 3, summary: 'No changes: no contract to plan.\n' });
  });

  it.each([
    ['a plan taller than the terminal', { isTTY: true, rows: 3 }, 'No changes: no contract to plan.\nThe whole plan is above.\n'],
    ['a plan that fits', { isTTY: true, rows: 4 }, undefined],
    ['a terminal of unknown height', { isTTY: true }, undefined],
    [
      'stdout a file or a pipe',
      { isTTY: false, rows: 4 },
      'No changes: no contract to plan.\nThe whole plan was written to standard output (not this terminal).\n',
    ],
  ])('%s', (_name, stdout, said) => {
    expect(beforeQuestion(shown, stdout)).toBe(said);
  });

  it('says nothing when no plan was shown', () => {
    expect(beforeQuestion(undefined, { isTTY: false })).toBeUndefined();
  });
});
