import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPlan, MARKDOWN_MAX_LENGTH, renderPlanMarkdown, renderPlanText, type PlanDocument } from '../../engine/index.ts';
import type { ContractSet } from '../../engine/desired/index.ts';
import { CREATED_AT, desiredSets, knownState, SOURCE } from './fixtures.ts';

const ESC = '\u001b';

function mixedPlan(): PlanDocument {
  return createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, source: SOURCE });
}

/** `tenants` x `contracts` contracts, none known: every one changes, each with a long comment. */
function bigPlan(tenants: number, contracts: number, commentLength = 200): PlanDocument {
  const sets: ContractSet[] = [];
  for (let t = 0; t < tenants; t += 1) {
    sets.push({
      tenant: `tenant-${t}`,
      file: `contracts/tenant-${t}.yaml`,
      contracts: Array.from({ length: contracts }, (_, i) => ({
        id: String(1000 + i),
        line: 3 + i * 4,
        column: 3,
        fields: { Name: `Contract ${i}`, Comment: 'x'.repeat(commentLength), Company: [{ Id: i, RelationType: 'Supplier' }] },
      })),
    });
  }
  return createPlan(sets, new Map(), { createdAt: CREATED_AT, source: SOURCE });
}

describe('renderPlanText', () => {
  it('renders a mixed plan as a terminal diff', () => {
    expect(renderPlanText(mixedPlan())).toMatchSnapshot();
  });

  it('colours only when asked, and never inside values', () => {
    const plain = renderPlanText(mixedPlan(), { color: false });
    const coloured = renderPlanText(mixedPlan(), { color: true });

    expect(plain).not.toContain(ESC);
    expect(coloured).toContain(`${ESC}[32m+ Comment`);
    expect(coloured.replaceAll(new RegExp(`${ESC}\\[\\d+m`, 'g'), '')).toBe(plain);
  });

  it('says when there is nothing to do', () => {
    const plan = createPlan([{ tenant: 'acme', file: 'a.yaml', contracts: [] }], new Map(), { createdAt: CREATED_AT, source: SOURCE });

    expect(renderPlanText(plan)).toBe('No changes: 0 contracts in 1 tenant match the desired state.\n\ntenant acme: no changes (0 contracts)\n');
  });
});

describe('renderPlanMarkdown', () => {
  it('renders a mixed plan as a pull-request comment', () => {
    expect(renderPlanMarkdown(mixedPlan())).toMatchSnapshot();
  });

  it('has a summary table row and one collapsible section per tenant', () => {
    const markdown = renderPlanMarkdown(bigPlan(3, 2));

    expect(markdown.match(/^\| tenant-\d+ \|/gm)).toHaveLength(3);
    expect(markdown.match(/<details>/g)).toHaveLength(3);
    expect(markdown.match(/<\/details>/g)).toHaveLength(3);
    expect(markdown).not.toContain('Shortened');
  });

  it('summarises instead of exceeding 60,000 characters', () => {
    const plan = bigPlan(100, 200);

    const markdown = renderPlanMarkdown(plan);

    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_MAX_LENGTH);
    expect(markdown.length).toBeGreaterThan(MARKDOWN_MAX_LENGTH - 5_000);
    const shown = markdown.match(/^\*\*`\d+`\*\*/gm)!.length;
    expect(markdown).toContain(`${plan.summary.changed - shown} contracts to update (${plan.summary.ops - shown * 3} ops) not shown`);
    expect(markdown.match(/<details>/g)!.length).toBe(markdown.match(/<\/details>/g)!.length);
  });

  it('stays under any cap for any plan size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1_600, max: 30_000 }), fc.nat(2_000), (tenants, contracts, maxLength, comment) => {
        const markdown = renderPlanMarkdown(bigPlan(tenants, contracts, comment), { maxLength });

        expect(markdown.length).toBeLessThanOrEqual(maxLength);
        expect(markdown.match(/<details>/g)?.length ?? 0).toBe(markdown.match(/<\/details>/g)?.length ?? 0);
      }),
      { numRuns: 60 },
    );
  });

  it('fences a value holding backticks with a longer fence', () => {
    const markdown = renderPlanMarkdown(mixedPlan());

    expect(markdown).toContain('````diff\n+ Comment: "two\\nlines"\n+ Name: "Laptops ```fenced```"');
  });
});
