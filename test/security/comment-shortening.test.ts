/** Issue 21, item 8: one oversized value cannot hide every other change in the pull-request comment. */
import { describe, expect, it } from 'vitest';
import type { ContractSet } from '../../engine/desired/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { fitBlocks } from '../../engine/plan/fit-blocks.ts';
import { MARKDOWN_MAX_LENGTH, renderPlanMarkdown } from '../../engine/plan/render-markdown.ts';
import type { KnownState } from '../../engine/state/types.ts';
import { BASE_SOURCE, CREATED_AT } from '../plan/fixtures.ts';

function pullRequest(names: Readonly<Record<string, string>>, touched: readonly string[]): ReturnType<typeof createPlan> {
  const sets: ContractSet[] = [
    {
      tenant: 'acme',
      file: 'contracts/acme.yaml',
      contracts: Object.entries(names).map(([id, name], index) => ({ id, line: 3 + index * 2, column: 3, fields: { Name: name } })),
    },
  ];
  const known: KnownState = new Map([['acme', new Map(Object.keys(names).map((id) => [id, { fields: { Name: `old ${id}` }, from: 'state' as const }]))]]);
  return createPlan(sets, known, {
    createdAt: CREATED_AT,
    source: BASE_SOURCE,
    touched: { contracts: new Map([['acme', new Set(touched)]]), noLongerManaged: [] },
  });
}

describe('the pull-request comment drops the largest detail first', () => {
  it('a 70,000-character Name and a small change: both listed, the small change shown whole', () => {
    const plan = pullRequest({ '1': 'N'.repeat(70_000), '2': 'a small rename' }, ['1', '2']);

    const markdown = renderPlanMarkdown(plan);

    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_MAX_LENGTH);
    expect(markdown).toContain('**`1`** · acme');
    expect(markdown).toContain('**`2`** · acme');
    expect(markdown).toContain('"a small rename"');
    expect(markdown).toMatch(/\*\*`1`\*\* · acme · .*1 op: changes not shown here, to keep the comment short/);
    expect(markdown).toContain('Shortened to stay under 60,000 characters: the changes of the 1 largest contract (1 op) not shown.');
    expect(markdown).not.toContain('N'.repeat(1000));
  });

  it('the same for a drifted contract outside the change', () => {
    const plan = pullRequest({ '1': 'a small rename', '2': 'N'.repeat(70_000) }, ['1']);

    const markdown = renderPlanMarkdown(plan);

    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_MAX_LENGTH);
    expect(markdown).toContain('"a small rename"');
    expect(markdown).toMatch(/\*\*`2`\*\* · acme · .*changes not shown here/);
  });

  it('many large contracts: every one still listed, as many details as fit', () => {
    const names = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [String(100 + i), `${i}`.padEnd(2_000 + i * 100, 'x')]));
    const plan = pullRequest(names, Object.keys(names));

    const markdown = renderPlanMarkdown(plan, { maxLength: 30_000 });

    expect(markdown.length).toBeLessThanOrEqual(30_000);
    for (const id of Object.keys(names)) expect(markdown).toContain(`**\`${id}\`** · acme`);
    // The smallest keep their detail.
    expect(markdown).toContain(`"${'0'.padEnd(2_000, 'x')}"`);
    expect(markdown).not.toContain(`"${'39'.padEnd(5_900, 'x')}"`);
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
});
