/** Issue 23, item 5: the pull-request comment at scale (groups of the same ops, tenant sections, every contract named, the artifact link). */
import { describe, expect, it } from 'vitest';
import type { ContractSet } from '../../engine/desired/index.ts';
import type { ContractFields } from '../../engine/model/index.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { planArtifact, repositoryLinks } from '../../engine/plan/file-links.ts';
import { GROUP_LISTED, renderPlanMarkdown, TENANT_SECTION } from '../../engine/plan/render-markdown.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import type { KnownState } from '../../engine/state/index.ts';
import { BASE_SOURCE, CREATED_AT } from './fixtures.ts';
import { distinct300, firstPullRequest600, identical300, mixed300, variedWithRemovals } from './scale-fixtures.ts';

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
    function renames(count: number): { desired: ContractFields; known: ContractFields }[] {
      return Array.from({ length: count }, (_, index) => ({ desired: { Name: `x${index}` }, known: { Name: 'y' } }));
    }
    const many = pullRequest(renames(TENANT_SECTION + 1));
    const few = pullRequest(renames(TENANT_SECTION));

    const manyMarkdown = renderPlanMarkdown(many);
    const fewMarkdown = renderPlanMarkdown(few);

    expect(manyMarkdown).toContain(
      '<details><summary><b>acme</b>: 21 contracts, 21 ops (21 different change lists)</summary>\n\n**`C-1`** · contracts/acme.yaml:3 · known',
    );
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

describe("the comment's order (issue 38, item 1): own contracts, removals and findings never cut, groups, then the others", () => {
  /** acme: C-1..C-100 the same renewal, C-101..C-110 renamed, C-111 a supplier removed; globex (not in the pull request): G-1 drifted, named by a finding. */
  function planWithEverything(): PlanDocument {
    const own = pullRequest([
      ...renewals(100),
      ...Array.from({ length: 10 }, (_, index) => ({ desired: { Name: `new ${index}` }, known: { Name: 'old' } })),
      { desired: { Company: [] }, known: { Company: [{ Id: 9, RelationType: 'Supplier' }] } },
    ]);
    const drift = createPlan(
      [{ tenant: 'globex', file: 'contracts/globex.yaml', contracts: [{ id: 'G-1', line: 3, column: 3, fields: { Comment: 'long '.repeat(200) } }] }],
      new Map([['globex', new Map([['G-1', { fields: { Comment: 'short' }, from: 'state' as const }]])]]),
      { createdAt: CREATED_AT, source: BASE_SOURCE, touched: { contracts: new Map(), noLongerManaged: [] } },
    );
    return {
      ...own,
      tenants: [...own.tenants, ...drift.tenants],
      summary: { ...own.summary, tenants: 2, contracts: 112, changed: 112, ops: own.summary.ops + drift.summary.ops },
      findings: [
        { check: 'no-long-comments', action: 'warn', tenant: 'globex', contractId: 'G-1', file: 'contracts/globex.yaml', line: 3, message: 'Comment is long' },
      ],
    };
  }

  it('sections in the order of docs/architecture.md section 5', () => {
    const markdown = renderPlanMarkdown(planWithEverything());

    const order = [
      '#### Contracts this pull request changes (111)',
      'Below: 100 contracts under "Identical changes".',
      '**`C-101`** · acme',
      '**`C-111`** · acme',
      '#### Members removed (1 in 1 tenant)',
      '#### Changes the findings name (1)',
      '**`G-1`** · globex',
      '#### Identical changes (1 group, 100 contracts)',
      '**100 contracts, the same op each**',
    ].map((text) => markdown.indexOf(text));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // G-1 is in no other section: named by the finding, shown once; the pull request changed nothing else.
    expect(markdown.match(/\*\*`G-1`\*\*/g)).toHaveLength(1);
    expect(markdown).not.toContain('#### Other contracts with changes');
  });

  it('shortening cuts from the bottom: the group goes before the own contracts; the finding and the removal never', () => {
    const plan = planWithEverything();
    const whole = renderPlanMarkdown(plan);

    const markdown = renderPlanMarkdown(plan, { maxLength: whole.length - 400, artifact: ARTIFACT });

    expect(markdown.length).toBeLessThanOrEqual(whole.length - 400);
    for (let index = 0; index < 10; index += 1) expect(markdown).toContain(`\`\`\`diff\n! Name: "old" -> "new ${index}"\n\`\`\``);
    expect(markdown).toContain('- acme · C-111 · Company (Id 9, RelationType "Supplier")');
    expect(markdown).toContain(`! Comment: "short" -> "${'long '.repeat(20)}`);
    // The group, last of the pull request's sections, is what is cut: counted in the note, the artifact named.
    expect(markdown).not.toContain('ValidTo: "2026-12-31T23:59:59Z" -> "2027-12-31T23:59:59Z"');
    expect(markdown).toMatch(
      /> Shortened to stay under [\d,]+ characters: 100 contracts \(100 ops\) not shown\. The whole plan, as text and as JSON, is in the artifact/,
    );
  });

  it("a group is never folded into its tenant's collapsed section: 300 identical changes show their diff unfolded, the ids folded", () => {
    const markdown = renderPlanMarkdown(identical300());

    expect(markdown).toContain('#### Identical changes (1 group, 300 contracts)');
    expect(markdown).not.toContain('<summary><b>acme</b>');
    expect(markdown.indexOf('```diff')).toBeGreaterThan(0);
    expect(markdown.indexOf('```diff')).toBeLessThan(markdown.indexOf('<details>'));
    expect(markdown).toContain('**300 contracts, the same 2 ops each** · acme · known from the state store');
  });

  it('changes the findings name that alone exceed the limit are counted per tenant, with where the whole plan is', () => {
    const plan = planWithEverything();
    const many: PlanDocument = { ...plan, findings: [...plan.findings!, { ...plan.findings![0]!, tenant: 'acme', contractId: 'C-101' }] };

    const markdown = renderPlanMarkdown(many, { maxLength: 2_400, artifact: ARTIFACT });

    expect(markdown.length).toBeLessThanOrEqual(2_400);
    expect(markdown).toContain(
      `#### Changes the findings name (2)\n\nToo many to show here (acme 1, globex 1). The whole plan, as text and as JSON, is in the artifact \`${ARTIFACT.name}\``,
    );
  });
});
