/**
 * The preview before the first PATCH names the contracts it could not plan under its own
 * "Not planned:" heading, which its headline points at: a run that stops before its report (its
 * state store gone) leaves no headline pointing at a section that never comes (issue 41, item 1).
 * Above the question, the per-tenant summary is said again when the plan scrolled away or went
 * elsewhere, with where the plan is.
 */
import { describe, expect, it } from 'vitest';
import type { ContractResult } from '../../engine/apply/run-report.ts';
import type { SendPreview } from '../../engine/pipeline/index.ts';
import { PLAN_VERSION, type PlanDocument } from '../../engine/plan/types.ts';
import { beforeQuestion, renderFixPreview, shownPlan } from '../../engine/run/render-run.ts';

const PLAN: PlanDocument = {
  version: PLAN_VERSION,
  createdAt: '2027-01-01T00:00:00.000Z',
  source: { repo: '.', ref: null, commit: null },
  tenants: [{ tenant: 'acme', contracts: [] }],
  summary: { tenants: 1, contracts: 0, changed: 0, ops: 0 },
};

function unreadable(count: number, result: Partial<ContractResult> = {}): SendPreview['unreadable'] {
  return Array.from({ length: count }, (_, index) => ({
    tenant: 'acme',
    result: {
      contractId: `C-${index}`,
      file: 'contracts/acme.yaml',
      line: 3 + index,
      outcome: 'failed',
      ops: 0,
      status: 503,
      reason: 'the read was answered 503',
      ...result,
    },
  }));
}

function preview(notPlanned: SendPreview['unreadable']): SendPreview {
  return { plan: PLAN, sending: { tenants: 0, contracts: 0, ops: 0 }, refused: [], unreadable: notPlanned, findings: [] };
}

describe('the preview of a run with contracts it could not plan', () => {
  it('lists each under "Not planned:", the section its headline points at', () => {
    const text = renderFixPreview(preview(unreadable(1)), false);

    expect(text).toContain('Nothing to send: 1 contract could not be planned (listed below).\n');
    expect(text).toMatch(/\nNot planned:\n {2}acme C-0 \(contracts\/acme\.yaml:3\) 503: the read was answered 503\n$/);
  });

  it('says "not on the service", escapes what came from files and the service, and counts what it does not list', () => {
    const many = [...unreadable(1, { contractId: 'C-\u202e', outcome: 'not-on-service', status: 404, reason: 'gone\u001b[2J' }), ...unreadable(24)];

    const text = renderFixPreview(preview(many), false);

    expect(text).toContain('25 contracts could not be planned (1 not on the service) (listed below).');
    expect(text).toContain('  acme C-\\u202e (contracts/acme.yaml:3) not on the service: gone\\e[2J\n');
    expect(text.split('\n').filter((line) => line.startsWith('  acme '))).toHaveLength(20);
    expect(text).toMatch(/\n {2}and 5 contracts more\n$/);
  });

  it('adds nothing when every contract was planned', () => {
    expect(renderFixPreview(preview([]), false)).not.toContain('Not planned');
  });
});

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
