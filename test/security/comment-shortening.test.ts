/** Issue 21, item 8, and issue 23, item 5: one oversized value cannot hide every other change in the pull-request comment. */
import { describe, expect, it } from 'vitest';
import type { ContractSet } from '../../engine/desired/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { fitBlocks } from '../../engine/plan/fit-blocks.ts';
import { renderPlanMarkdown } from '../../engine/plan/render-markdown.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import type { KnownState } from '../../engine/state/types.ts';
import { BASE_SOURCE, CREATED_AT } from '../plan/fixtures.ts';

function pullRequestOf(fields: Readonly<Record<string, ContractFields>>, touched: readonly string[]): ReturnType<typeof createPlan> {
  const sets: ContractSet[] = [
    {
      tenant: 'acme',
      file: 'contracts/acme.yaml',
      contracts: Object.entries(fields).map(([id, desired], index) => ({ id, line: 3 + index * 2, column: 3, fields: desired })),
    },
  ];
  const known: KnownState = new Map([['acme', new Map(Object.keys(fields).map((id) => [id, { fields: { Name: `old ${id}` }, from: 'state' as const }]))]]);
  return createPlan(sets, known, {
    createdAt: CREATED_AT,
    source: BASE_SOURCE,
    touched: { contracts: new Map([['acme', new Set(touched)]]), noLongerManaged: [] },
  });
}

/** A contract with `count` suppliers: `count` ops against a known state without any. */
function companies(count: number): ContractFields {
  return { Company: Array.from({ length: count }, (_, k) => ({ Id: k, RelationType: 'Supplier' })) };
}

function pullRequest(names: Readonly<Record<string, string>>, touched: readonly string[]): ReturnType<typeof createPlan> {
  return pullRequestOf(Object.fromEntries(Object.entries(names).map(([id, name]) => [id, { Name: name }])), touched);
}

describe('the pull-request comment: one oversized value cannot hide every other change', () => {
  it('a 70,000-character Name and a small change: both shown, the long value cut at 200 characters saying how much is left out', () => {
    const plan = pullRequest({ '1': 'N'.repeat(70_000), '2': 'a small rename' }, ['1', '2']);

    const markdown = renderPlanMarkdown(plan);

    expect(markdown.length).toBeLessThan(5_000);
    expect(markdown).toContain('**`1`** · acme');
    expect(markdown).toContain('**`2`** · acme');
    expect(markdown).toContain('"a small rename"');
    // JSON-quoted, the value is 70,002 characters: 200 shown.
    expect(markdown).toContain(`! Name: "old 1" -> "${'N'.repeat(199)}… (69,802 more characters; full value in the plan file)`);
    expect(markdown).not.toContain('N'.repeat(201));
    expect(markdown).not.toContain('Shortened');
  });

  it('with the artifact known, the cut value says the artifact has it whole', () => {
    const plan = pullRequest({ '1': 'a small rename', '2': 'N'.repeat(70_000) }, ['1']);

    const markdown = renderPlanMarkdown(plan, { artifact: { url: 'https://github.com/acme/contracts/actions/runs/42', name: 'contract-sync-plan-1-abc' } });

    expect(markdown).toContain('"a small rename"');
    expect(markdown).toContain('(69,802 more characters; full value in the plan artifact)');
  });

  it('many large contracts: every one still listed, as many details as fit, the largest losing theirs first', () => {
    const contracts = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [String(100 + i), companies(20 + i)]));
    const plan = pullRequestOf(contracts, Object.keys(contracts));

    const markdown = renderPlanMarkdown(plan, { maxLength: 30_000 });

    expect(markdown.length).toBeLessThanOrEqual(30_000);
    // 40 contracts of one tenant: a section of its own, whose titles need not name it.
    expect(markdown).toContain('<details><summary><b>acme</b>: 40 contracts, 1580 ops (40 different change lists)</summary>');
    for (const id of Object.keys(contracts)) expect(markdown).toContain(`**\`${id}\`** · contracts/acme.yaml:`);
    // The smallest keep their detail; the largest lose it.
    expect(markdown).toMatch(/\*\*`100`\*\* · contracts\/acme.yaml:3 · known from the state store, 20 ops\n\n```diff\n/);
    expect(markdown).toMatch(/\*\*`139`\*\* · .*59 ops: changes not shown here, to keep the comment short/);
    expect(markdown).toMatch(/Shortened to stay under 30,000 characters: the changes of \d+ contracts \(\d+ ops, the largest first\) not shown\./);
  });
});

describe('fitBlocks', () => {
  it('keeps everything that fits; shortens the largest first; omits the last lines only when lines do not fit', () => {
    const items = [
      { full: 'a'.repeat(10), short: 'a' },
      { full: 'b'.repeat(50), short: 'b' },
      { full: 'c'.repeat(20), short: 'c' },
    ];
    expect(fitBlocks(items, 80)).toEqual(['full', 'full', 'full']);
    expect(fitBlocks(items, 40)).toEqual(['full', 'short', 'full']);
    expect(fitBlocks(items, 12)).toEqual(['full', 'short', 'short']);
    expect(fitBlocks(items, 2)).toEqual(['short', 'short', 'omitted']);
    expect(fitBlocks(items, 1)).toEqual(['short', 'omitted', 'omitted']);
  });

  it('names the last items by id when even the lines do not fit, keeping as many lines as naming every item allows', () => {
    const items = [
      { full: 'a'.repeat(10), short: 'a'.repeat(5), listed: 1 },
      { full: 'b'.repeat(10), short: 'b'.repeat(5), listed: 1 },
      { full: 'c'.repeat(10), short: 'c'.repeat(5), listed: 1 },
    ];
    expect(fitBlocks(items, 15)).toEqual(['short', 'short', 'short']);
    expect(fitBlocks(items, 11)).toEqual(['short', 'short', 'listed']);
    expect(fitBlocks(items, 7)).toEqual(['short', 'listed', 'listed']);
    expect(fitBlocks(items, 3)).toEqual(['listed', 'listed', 'listed']);
    // Not even every id: lines within half the budget, then ids while they fit, the rest left out.
    expect(fitBlocks(items, 2)).toEqual(['listed', 'listed', 'omitted']);
  });
});
