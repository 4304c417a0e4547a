/** Issue 23, item 5: the pull-request comment at scale (groups of the same ops, tenant sections, every contract named, the artifact link). */
import { describe, expect, it } from 'vitest';
import type { ContractSet } from '../../engine/desired/index.ts';
import type { ContractFields } from '../../engine/model/index.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { findTouchedContracts } from '../../engine/plan/touched-contracts.ts';
import { planArtifact, repositoryLinks } from '../../engine/plan/file-links.ts';
import { GROUP_LISTED, renderPlanMarkdown, TENANT_SECTION } from '../../engine/plan/render-markdown.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import type { KnownState } from '../../engine/state/index.ts';
import { BASE_SOURCE, CREATED_AT } from './fixtures.ts';
import { distinct300, identical300, MADE_WITH, mixed300 } from './scale-fixtures.ts';

const HEAD = BASE_SOURCE.commit;
const GITHUB = repositoryLinks({ GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts' })!;
const ARTIFACT = { url: 'https://github.com/acme/contracts/actions/runs/42', name: 'contract-sync-plan-1-abc' };

/** Tenant acme, contracts `C-1`.. in contracts/acme.yaml (4 lines each), each with its desired and known fields; all changed by the pull request. */
function pullRequest(contracts: readonly { desired: ContractFields; known: ContractFields }[], tenant = 'acme'): PlanDocument {
  const ids = contracts.map((_, index) => `C-${index + 1}`);
  const sets: ContractSet[] = [
    {
      tenant,
      file: `contracts/${tenant}.yaml`,
      contracts: contracts.map((contract, index) => ({ id: ids[index]!, line: 3 + index * 4, column: 3, fields: contract.desired })),
    },
  ];
  const known: KnownState = new Map([[tenant, new Map(contracts.map((contract, index) => [ids[index]!, { fields: contract.known, from: 'state' as const }]))]]);
  return createPlan(sets, known, {
    createdAt: CREATED_AT,
    source: BASE_SOURCE,
    touched: { contracts: new Map([[tenant, new Set(ids)]]), noLongerManaged: [] },
  });
}

const RENEWAL = { desired: { ValidTo: '2027-12-31T23:59:59Z' }, known: { ValidTo: '2026-12-31T23:59:59Z' } };

function renewals(count: number): { desired: ContractFields; known: ContractFields }[] {
  return Array.from({ length: count }, () => RENEWAL);
}

function diffBlocks(markdown: string): number {
  return markdown.match(/^`{3,}diff$/gm)?.length ?? 0;
}

/** Every contract id of the plan, as the comment names them (inline code). */
function unnamed(plan: PlanDocument, markdown: string): string[] {
  return plan.tenants.flatMap((tenant) => tenant.contracts.map((contract) => contract.id)).filter((id) => !markdown.includes(`\`${id}\``));
}

describe('contracts with the same ops', () => {
  it('are shown once: one diff block, a title with their count, each id with its file:line link', () => {
    const plan = pullRequest([...renewals(3), { desired: { Name: 'other' }, known: { Name: 'old' } }]);

    const markdown = renderPlanMarkdown(plan, { links: GITHUB });

    expect(diffBlocks(markdown)).toBe(2);
    expect(markdown).toContain('**3 contracts, the same op each** · acme · known from the state store\n\n');
    for (const [index, id] of ['C-1', 'C-2', 'C-3'].entries()) {
      expect(markdown).toContain(
        `- **\`${id}\`** · [contracts/acme.yaml:${3 + index * 4}](https://github.com/acme/contracts/blob/${HEAD}/contracts/acme.yaml#L${3 + index * 4})\n`,
      );
    }
    expect(markdown).toContain('```diff\n! ValidTo: "2026-12-31T23:59:59Z" -> "2027-12-31T23:59:59Z"\n```');
    expect(markdown).toContain('**`C-4`** · acme · ');
  });

  it('the same ops from different known values are not the same change: shown apart', () => {
    const plan = pullRequest([RENEWAL, { desired: RENEWAL.desired, known: { ValidTo: '2025-12-31T23:59:59Z' } }]);

    const markdown = renderPlanMarkdown(plan);

    expect(plan.tenants[0]!.contracts[0]!.ops).toEqual(plan.tenants[0]!.contracts[1]!.ops);
    expect(diffBlocks(markdown)).toBe(2);
    expect(markdown).not.toContain('the same op each');
  });

  it(`up to ${GROUP_LISTED} ids are listed before the change; past that they collapse into <details> after it, per file with their lines`, () => {
    const five = renderPlanMarkdown(pullRequest(renewals(GROUP_LISTED)));
    const six = renderPlanMarkdown(pullRequest(renewals(GROUP_LISTED + 1)));

    expect(five).not.toContain('<details>');
    expect(five).toContain('- **`C-5`** · contracts/acme.yaml:19\n');
    // The change first, then the ids, collapsed, per file with their lines.
    expect(six).toContain(
      '**6 contracts, the same op each** · acme · known from the state store\n\n```diff\n! ValidTo: "2026-12-31T23:59:59Z" -> "2027-12-31T23:59:59Z"\n```\n\n' +
        '<details><summary>6 contracts: ids and files</summary>\n\n' +
        '- contracts/acme.yaml: `C-1` (line 3), `C-2` (line 7), `C-3` (line 11), `C-4` (line 15), `C-5` (line 19), `C-6` (line 23)\n\n</details>\n\n',
    );
    expect(diffBlocks(six)).toBe(1);
  });

  it('group within a tenant only', () => {
    const acme = pullRequest(renewals(2), 'acme');
    const globex = pullRequest(renewals(2), 'globex');
    const plan: PlanDocument = {
      ...acme,
      tenants: [...acme.tenants, ...globex.tenants],
      summary: { ...acme.summary, tenants: 2, contracts: 4, changed: 4, ops: 4, touched: 4 },
    };

    const markdown = renderPlanMarkdown(plan);

    expect(markdown).toContain('**2 contracts, the same op each** · acme · ');
    expect(markdown).toContain('**2 contracts, the same op each** · globex · ');
    expect(diffBlocks(markdown)).toBe(2);
  });
});

describe('a tenant with many contracts', () => {
  it(`more than ${TENANT_SECTION} in a section: its own collapsed <details> with counts, titles inside without the tenant`, () => {
    const many = pullRequest([...renewals(TENANT_SECTION), { desired: { Name: 'x' }, known: { Name: 'y' } }]);
    const few = pullRequest([...renewals(TENANT_SECTION - 1), { desired: { Name: 'x' }, known: { Name: 'y' } }]);

    const manyMarkdown = renderPlanMarkdown(many);
    const fewMarkdown = renderPlanMarkdown(few);

    expect(manyMarkdown).toContain(
      '<details><summary><b>acme</b>: 21 contracts, 21 ops (2 different change lists)</summary>\n\n**20 contracts, the same op each** · known',
    );
    expect(manyMarkdown).toContain('**`C-21`** · contracts/acme.yaml:83 · known');
    expect(fewMarkdown).not.toContain('<summary><b>acme</b>');
    expect(fewMarkdown).toContain('**`C-20`** · acme · contracts/acme.yaml:79 · known');
  });
});

describe('at scale (the Show of issue 23, item 5)', () => {
  it('300 contracts with the same change: one diff block, under 20,000 characters, naming every contract', () => {
    const plan = identical300();

    const markdown = renderPlanMarkdown(plan, { links: GITHUB, artifact: ARTIFACT });

    expect(markdown.length).toBeLessThan(20_000);
    expect(unnamed(plan, markdown)).toEqual([]);
    expect(diffBlocks(markdown)).toBe(1);
    expect(markdown).not.toContain('Shortened');
  });

  it('a mixed 300: under 20,000 characters, naming every contract, every change shown', () => {
    const plan = mixed300();

    const markdown = renderPlanMarkdown(plan, { links: GITHUB, artifact: ARTIFACT });

    expect(markdown.length).toBeLessThan(20_000);
    expect(unnamed(plan, markdown)).toEqual([]);
    expect(markdown).not.toContain('Shortened');
    expect(markdown).not.toContain('changes not shown here');
    // The 600-character comments are cut, and the comment says where they are whole.
    expect(markdown).toContain('more characters; full value in the plan artifact)');
    expect(markdown).toContain(
      `Long values are cut above. The whole plan, as text and as JSON, is in the artifact \`${ARTIFACT.name}\` of [this workflow run](${ARTIFACT.url}).`,
    );
  });

  it('300 different changes in 20,000 characters: shortened, every contract still named, the artifact linked', () => {
    const plan = distinct300();

    const markdown = renderPlanMarkdown(plan, { links: GITHUB, artifact: ARTIFACT, maxLength: 20_000 });

    expect(markdown.length).toBeLessThanOrEqual(20_000);
    expect(unnamed(plan, markdown)).toEqual([]);
    expect(markdown).toMatch(/> Shortened to stay under 20,000 characters: \d+ contracts \(\d+ ops\)/);
    expect(markdown).toContain(`The whole plan, as text and as JSON, is in the artifact \`${ARTIFACT.name}\` of [this workflow run](${ARTIFACT.url}).`);
    expect(markdown).toMatch(/\n\*\*Not shown here\*\*, by id: acme: `\d+`, /);
    expect(markdown.match(/<details>/g)?.length ?? 0).toBe(markdown.match(/<\/details>/g)?.length ?? 0);
  });

  it('without the artifact: no link, the plan file named instead', () => {
    const markdown = renderPlanMarkdown(distinct300(), { maxLength: 20_000 });

    expect(markdown).not.toContain('/actions/runs/');
    expect(markdown).toContain('The full plan is in the job log and in the plan file (`--out PLAN.json`).');
  });

  it('when even the ids do not fit, the rest is counted and the note says where they are', () => {
    const plan = distinct300();

    const markdown = renderPlanMarkdown(plan, { artifact: ARTIFACT, maxLength: 3_000 });

    expect(markdown.length).toBeLessThanOrEqual(3_000);
    expect(markdown).toMatch(/; and \d+ more contracts, not named for want of room: the plan artifact lists every one\.\n$/);
  });
});

describe('planArtifact', () => {
  const RUN = { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts', GITHUB_RUN_ID: '42' };

  it('is the run page and the name the Action gave, only when the Action names one', () => {
    expect(planArtifact({ ...RUN, CONTRACT_SYNC_PLAN_ARTIFACT: 'contract-sync-plan-1-abc' })).toEqual(ARTIFACT);
    expect(planArtifact(RUN)).toBeUndefined();
    expect(planArtifact({ ...RUN, CONTRACT_SYNC_PLAN_ARTIFACT: '' })).toBeUndefined();
  });

  it('refuses a name or run id that could break the markdown, and a server URL with credentials', () => {
    expect(planArtifact({ ...RUN, CONTRACT_SYNC_PLAN_ARTIFACT: 'x`](javascript:alert(1))' })).toBeUndefined();
    expect(planArtifact({ ...RUN, GITHUB_RUN_ID: '42)', CONTRACT_SYNC_PLAN_ARTIFACT: 'a' })).toBeUndefined();
    expect(planArtifact({ ...RUN, GITHUB_SERVER_URL: 'https://user:token@github.com', CONTRACT_SYNC_PLAN_ARTIFACT: 'a' })).toBeUndefined();
  });
});

describe('a first pull request: no known state (issue 38, item 1)', () => {
  /** 600 contracts in 4 tenants, nothing in the state store; the pull request renews 5 of them. */
  function firstPullRequest600(): PlanDocument {
    const tenants = ['acme', 'beta', 'gamma', 'delta'];
    function fields(index: number, renewed: boolean): ContractFields {
      return {
        Name: `Contract ${index}${renewed ? ' (renewed)' : ''}`,
        ValidFrom: '2026-01-01T00:00:00Z',
        ValidTo: renewed ? '2028-12-31T23:59:59Z' : '2027-12-31T23:59:59Z',
        Comment: `Framework agreement number ${index}, reviewed yearly by procurement`,
        Company: Array.from({ length: 7 }, (_, member) => ({ Id: member + 1, RelationType: member === 0 ? 'Supplier' : 'Customer' })),
      };
    }
    const renewed = new Set(['acme/1003', 'acme/1010', 'acme/1100', 'beta/1004', 'delta/1149']);
    function sets(atHead: boolean): ContractSet[] {
      return tenants.map((tenant) => ({
        tenant,
        file: `contracts/${tenant}.yaml`,
        contracts: Array.from({ length: 150 }, (_, index) => ({
          id: String(1000 + index),
          line: 3 + index * 12,
          column: 3,
          fields: fields(index, atHead && renewed.has(`${tenant}/${1000 + index}`)),
        })),
      }));
    }
    const marks = findTouchedContracts(sets(true), sets(false), new Set(tenants.map((tenant) => `contracts/${tenant}.yaml`)));
    return { ...createPlan(sets(true), new Map(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: marks }), madeWith: MADE_WITH };
  }

  it("shows the 5 changed contracts' own diffs under the note, counts the 595 others per tenant and names none of them", () => {
    const plan = firstPullRequest600();

    const markdown = renderPlanMarkdown(plan, { links: GITHUB, artifact: ARTIFACT });

    expect(markdown.length).toBeLessThanOrEqual(60_000);
    expect(plan.summary.ops).toBe(600 * 11);
    expect(markdown).toContain('> The known state of these contracts is unknown (nothing in the state store for them)');
    expect(markdown).toContain('An apply would set every desired field of them (55 ops), not only the ones changed here.');
    // Each changed contract: its title, then exactly the two lines the pull request changed.
    for (const id of ['1003', '1010', '1100', '1004', '1149']) {
      expect(markdown).toMatch(
        new RegExp(
          `\\*\\*\`${id}\`\\*\\* · \\w+ · \\[contracts/\\w+\\.yaml:\\d+\\]\\([^)]+\\) · known state unknown, 11 ops; this pull request changed:\\n\\n` +
            '```diff\\n' +
            `! Name: "Contract ${Number(id) - 1000}" -> "Contract ${Number(id) - 1000} \\(renewed\\)"\\n` +
            '! ValidTo: "2027-12-31T23:59:59Z" -> "2028-12-31T23:59:59Z"\\n```\\n',
        ),
      );
    }
    expect(markdown).toContain('- **acme**: 147 contracts, 1617 ops, known state unknown for all\n- **beta**: 149 contracts');
    expect(markdown).not.toContain('changes not shown here');
    expect(markdown).not.toContain('Not shown here');
    // None of the 595 others is named one by one where its details do not fit.
    const shownIds = new Set([...markdown.matchAll(/`(\d{4})`/g)].map((match) => match[1]));
    expect(shownIds.size).toBeLessThan(200);
    expect(markdown).toMatch(/> Shortened to stay under 60,000 characters: the details of \d+ other contracts \(\d+ ops; counted above\) not shown\./);
  });
});

describe('removals are never cut (issue 38, item 2)', () => {
  /** 300 varied changes in 4 tenants: 148 suppliers removed, and long distinct comments that cannot all fit. */
  function variedWithRemovals(): PlanDocument {
    const tenants = ['acme', 'beta', 'gamma', 'delta'];
    const sets: ContractSet[] = [];
    const known = new Map<string, Map<string, { fields: ContractFields; from: 'state' }>>();
    for (const tenant of tenants) {
      const contracts = Array.from({ length: 75 }, (_, index) => {
        const removes = index < 37;
        return {
          id: String(2000 + index),
          desired: removes ? { Company: [{ Id: 1, RelationType: 'Customer' }] } : { Comment: `${tenant} ${index} ${'long note '.repeat(60)}` },
          known: removes
            ? {
                Company: [
                  { Id: 1, RelationType: 'Customer' },
                  { Id: 99, RelationType: 'Supplier' },
                ],
              }
            : { Comment: 'old' },
        };
      });
      sets.push({
        tenant,
        file: `contracts/${tenant}.yaml`,
        contracts: contracts.map((c, index) => ({ id: c.id, line: 3 + index * 5, column: 3, fields: c.desired })),
      });
      known.set(tenant, new Map(contracts.map((c) => [c.id, { fields: c.known, from: 'state' as const }])));
    }
    const touched = { contracts: new Map([['acme', new Set(['2040'])]]), noLongerManaged: [] };
    const state: KnownState = known;
    return { ...createPlan(sets, state, { createdAt: CREATED_AT, source: BASE_SOURCE, touched }), madeWith: MADE_WITH };
  }

  it('every removed member is named, whatever else is cut', () => {
    const plan = variedWithRemovals();

    const markdown = renderPlanMarkdown(plan, { artifact: ARTIFACT });

    expect(markdown.length).toBeLessThanOrEqual(60_000);
    expect(markdown).toContain('#### Members removed (148 in 4 tenants)');
    const removed = markdown.match(/^- \w+ · 20\d\d · Company \(Id 99, RelationType "Supplier"\)$/gm) ?? [];
    expect(removed).toHaveLength(148);
    expect(markdown).toContain('Shortened to stay under 60,000 characters');
    // In the comment's order (docs/architecture.md section 5): the pull request's own contract, the removals, then the others.
    const own = markdown.indexOf('**`2040`** · acme');
    expect(own).toBeGreaterThan(0);
    expect(markdown.indexOf('#### Members removed')).toBeGreaterThan(own);
    expect(markdown.indexOf('#### Other contracts with changes')).toBeGreaterThan(markdown.indexOf('#### Members removed'));
  });

  it('when the removals alone exceed the limit they are counted per tenant, and the note says where they are', () => {
    const markdown = renderPlanMarkdown(variedWithRemovals(), { artifact: ARTIFACT, maxLength: 4_000 });

    expect(markdown.length).toBeLessThanOrEqual(4_000);
    expect(markdown).toContain(
      `#### Members removed (148 in 4 tenants)\n\nToo many to name here (acme 37, beta 37, delta 37, gamma 37). The whole plan, as text and as JSON, is in the artifact \`${ARTIFACT.name}\``,
    );
  });
});
