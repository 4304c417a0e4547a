/** The markdown plan as a reviewer reads it: where it comes from, changes, escaping, links, the unknown-state warning. */
import { describe, expect, it } from 'vitest';
import { createPlan, MARKDOWN_MAX_LENGTH, parsePlan, renderPlanMarkdown, type PlanDocument } from '../../engine/index.ts';
import type { ContractSet } from '../../engine/desired/index.ts';
import type { ContractFields } from '../../engine/model/index.ts';
import { repositoryLinks } from '../../engine/plan/file-links.ts';
import type { PlanMadeWith, PlanSource } from '../../engine/plan/types.ts';
import type { KnownState } from '../../engine/state/index.ts';
import { BASE_SOURCE, CREATED_AT, desiredSets, knownState, SOURCE, TOUCHED } from './fixtures.ts';

const HEAD = '1111111111111111111111111111111111111111';
const AT_HEAD: PlanSource = { repo: '.', ref: 'HEAD', commit: HEAD };
const GITHUB = repositoryLinks({ GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts' })!;
const GITLAB = repositoryLinks({ CI_PROJECT_URL: 'https://gitlab.example.com/legal/contracts' })!;
const MADE_WITH: PlanMadeWith = {
  version: '1.2.3',
  reads: true,
  collections: { Company: 'authoritative', OrganizationalUnit: 'additive', Owner: 'authoritative', Type: 'additive' },
};

function pullRequestPlan(): PlanDocument {
  return createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: TOUCHED });
}

/** One contract of tenant acme at contracts/acme/a.yaml:3, planned against `known` (undefined: known state unknown). */
function onePlan(desired: ContractFields, known: ContractFields | undefined, source: PlanSource = AT_HEAD): PlanDocument {
  const sets: ContractSet[] = [{ tenant: 'acme', file: 'contracts/acme/a.yaml', contracts: [{ id: '4711', line: 3, column: 3, fields: desired }] }];
  const state: KnownState = new Map(known === undefined ? [] : [['acme', new Map([['4711', { fields: known, from: 'state' as const }]])]]);
  return createPlan(sets, state, { createdAt: CREATED_AT, source });
}

/** The lines of the first diff block of a contract (the list of members removed has one of its own, before the tenants' sections). */
function diffLines(markdown: string): string[] {
  const match = /^\*\*`[^\n]*\n\n(`{3,})diff\n([\s\S]*?)\n\1$/m.exec(markdown);
  if (!match) throw new Error(`no diff block in:\n${markdown}`);
  return match[2]!.split('\n');
}

describe('renderPlanMarkdown: where the plan comes from', () => {
  it('names the head, the base with its merge base, the contract-sync version and the time in UTC', () => {
    const plan = { ...pullRequestPlan(), createdAt: '2026-11-22T11:30:05+01:00', madeWith: MADE_WITH };

    const markdown = renderPlanMarkdown(plan);

    expect(markdown).toContain(
      '### contract-sync plan\n\nHead `1111111` · base `origin/main` at `2222222`, merge base `3333333` · contract-sync 1.2.3 · planned 2026-11-22 10:30:05 UTC\n\n',
    );
  });

  it('leaves out the merge base when it is the base commit, and names a head ref other than HEAD', () => {
    const base = { ref: 'origin/main', commit: '2'.repeat(40), mergeBase: '2'.repeat(40) };
    const plan = createPlan(desiredSets(), knownState(), {
      createdAt: CREATED_AT,
      source: { repo: '.', ref: 'feature/renewal', commit: HEAD, base },
      touched: TOUCHED,
    });

    const markdown = renderPlanMarkdown(plan);

    expect(markdown).toContain('\nHead `1111111` (`feature/renewal`) · base `origin/main` at `2222222` · planned 2026-11-22 10:00:00 UTC\n');
  });

  it('says when the plan is of the working tree', () => {
    const withHead = onePlan({ Name: 'x' }, undefined, { repo: '.', ref: null, commit: HEAD });

    expect(renderPlanMarkdown(withHead)).toContain('\nWorking tree (uncommitted edits included) at `1111111` · planned 2026-11-22 10:00:00 UTC\n');
    expect(renderPlanMarkdown(onePlan({ Name: 'x' }, undefined, SOURCE))).toContain('\nWorking tree · planned 2026-11-22 10:00:00 UTC\n');
  });
});

describe('renderPlanMarkdown: changes', () => {
  it('a changed scalar is one ! line, old -> new (GitHub colours it as a change); a set scalar and an added member are +, a removed member -', () => {
    const plan = onePlan(
      { Name: 'Cleaning 2027', Comment: 'new', Company: [{ Id: 12, RelationType: 'Supplier' }] },
      { Name: 'Cleaning 2026', Company: [{ Id: 19, RelationType: 'Client' }] },
    );

    const lines = diffLines(renderPlanMarkdown(plan));

    expect(lines).toEqual([
      '+ Comment: "new"',
      '! Name: "Cleaning 2026" -> "Cleaning 2027"',
      '- Company (Id 19, RelationType "Client"): { Id: 19, RelationType: "Client" }',
      '+ Company (Id 12, RelationType "Supplier"): { Id: 12, RelationType: "Supplier" }',
    ]);
  });

  it('a member removed and added again because a field it writes changed is one change, not a - and + pair', () => {
    const plan = onePlan({ OrganizationalUnit: [{ Id: 3, Name: 'Facility Management' }] }, { OrganizationalUnit: [{ Id: 3, Name: 'FM' }] });

    const markdown = renderPlanMarkdown(plan);

    expect(plan.tenants[0]!.contracts[0]!.ops).toHaveLength(2);
    expect(diffLines(markdown)).toEqual([
      '! OrganizationalUnit (Id 3): { Id: 3, Name: "FM" } -> { Id: 3, Name: "Facility Management" }  (removed and added again)',
    ]);
    expect(markdown).toContain('known from the state store, 2 ops');
  });
});

describe('renderPlanMarkdown: hostile values', () => {
  const HOSTILE = 'a | b `c` ```` <img src=x onerror=alert(1)>\n## not a heading\r\n</details>\u202egnp.exe';

  it('a scalar with pipes, backticks, HTML and newlines stays on its line inside a fence it cannot close', () => {
    const plan = onePlan({ Name: HOSTILE }, { Name: 'old' });

    const markdown = renderPlanMarkdown(plan);

    const lines = diffLines(markdown);
    expect(lines).toEqual([`! Name: "old" -> "a | b \`c\` \`\`\`\` <img src=x onerror=alert(1)>\\n## not a heading\\r\\n</details>\\u202egnp.exe"`]);
    // The fence is longer than the value's longest backtick run, so the value cannot end the block.
    expect(markdown).toContain('`````diff\n');
    expect(markdown).not.toContain('\u202e');
    // Outside the block, where markdown and HTML are read: nothing of the value.
    const outside = markdown.replace(/^(`{3,})diff\n[\s\S]*?\n\1$/m, '');
    expect(outside).not.toContain('onerror');
    expect(outside).not.toContain('not a heading');
    expect(outside.match(/<\/details>/g)?.length ?? 0).toBe(outside.match(/<details>/g)?.length ?? 0);
  });

  it('escapes file paths, refs and the recorded version outside code', () => {
    const sets: ContractSet[] = [
      { tenant: 'acme', file: 'contracts/<b>|x|</b>_[a](b).yaml', contracts: [{ id: '4711', line: 3, column: 3, fields: { Name: 'x' } }] },
    ];
    const base = { ref: 'main`<i>', commit: '2'.repeat(40), mergeBase: '2'.repeat(40) };
    const touched = { contracts: new Map([['acme', new Set(['4711'])]]), noLongerManaged: [] };
    const plan = {
      ...createPlan(sets, new Map(), { createdAt: CREATED_AT, source: { repo: '.', ref: 'HEAD', commit: HEAD, base }, touched }),
      madeWith: { ...MADE_WITH, version: '1.0 <script>|*' },
    };

    const markdown = renderPlanMarkdown(plan);

    expect(markdown).toContain('contracts/&lt;b&gt;\\|x\\|&lt;/b&gt;\\_\\[a\\](b).yaml:3');
    expect(markdown).toContain('base `main&lt;i&gt;` at');
    expect(markdown).toContain('contract-sync 1.0 &lt;script&gt;\\|\\*');
    expect(markdown).not.toMatch(/<(b|i|script)>/);
  });
});

describe('renderPlanMarkdown: links to the files', () => {
  it('GitHub: each file and commit links to the head commit; a contract no longer managed to the merge base', () => {
    const markdown = renderPlanMarkdown(pullRequestPlan(), { links: GITHUB });

    expect(markdown).toContain(`Head [\`1111111\`](https://github.com/acme/contracts/commit/${HEAD})`);
    expect(markdown).toContain(`merge base [\`3333333\`](https://github.com/acme/contracts/commit/${'3'.repeat(40)})`);
    expect(markdown).toContain(
      `**\`4711\`** · acme · [contracts/acme/facilities.yaml:3](https://github.com/acme/contracts/blob/${HEAD}/contracts/acme/facilities.yaml#L3) · known from`,
    );
    expect(markdown).toContain(
      `was at [contracts/acme/facilities.yaml:18](https://github.com/acme/contracts/blob/${'3'.repeat(40)}/contracts/acme/facilities.yaml#L18)`,
    );
  });

  it('GitLab: -/blob/ links, without a base too', () => {
    const markdown = renderPlanMarkdown(onePlan({ Name: 'x' }, undefined), { links: GITLAB });

    expect(markdown).toContain(`[contracts/acme/a.yaml:3](https://gitlab.example.com/legal/contracts/-/blob/${HEAD}/contracts/acme/a.yaml#L3)`);
  });

  it('no links without CI variables, nor for a plan of the working tree (its files may differ from HEAD)', () => {
    const withoutLinks = renderPlanMarkdown(pullRequestPlan());
    const workingTree = renderPlanMarkdown(onePlan({ Name: 'x' }, undefined, { repo: '.', ref: null, commit: HEAD }), { links: GITHUB });

    expect(withoutLinks).not.toContain('](');
    expect(withoutLinks).toContain('**`4711`** · acme · contracts/acme/facilities.yaml:3 · known from');
    expect(workingTree).not.toContain('](');
    expect(workingTree).toContain('**`4711`** · contracts/acme/a.yaml:3 · known state unknown');
  });

  it('with links, still within the length limit and with every <details> closed', () => {
    const sets: ContractSet[] = Array.from({ length: 20 }, (_, t) => ({
      tenant: `tenant-${t}`,
      file: `contracts/tenant-${t}.yaml`,
      contracts: Array.from({ length: 60 }, (_, i) => ({
        id: String(1000 + i),
        line: 3 + i * 4,
        column: 3,
        fields: { Name: `Contract ${i}`, Comment: 'x'.repeat(200) },
      })),
    }));
    const plan = createPlan(sets, new Map(), { createdAt: CREATED_AT, source: AT_HEAD });

    const markdown = renderPlanMarkdown(plan, { links: GITHUB });

    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_MAX_LENGTH);
    expect(markdown).toContain('Shortened to stay under 60,000 characters');
    expect(markdown.match(/<details>/g)!.length).toBe(markdown.match(/<\/details>/g)!.length);
  });
});

describe('renderPlanMarkdown: contracts whose known state is unknown', () => {
  function unknown(madeWith?: PlanMadeWith): PlanDocument {
    return { ...onePlan({ Name: 'x', Company: [{ Id: 1, RelationType: 'Supplier' }] }, undefined), ...(madeWith ? { madeWith } : {}) };
  }

  it('with reads and authoritative collections: a warning that apply reads live first and may remove members, naming the collections', () => {
    const markdown = renderPlanMarkdown(unknown(MADE_WITH));

    expect(markdown).toContain(
      '> [!WARNING]\n' +
        '> Known state unknown for 1 contract (nothing in the state store, not read live): every desired field is set and every desired member added; nothing is removed.\n' +
        '>\n' +
        '> Reads are configured (api.read): `contract-sync apply` reads it live first and plans it again. ' +
        'It may then remove members the desired state does not list from Company and Owner (the collections in authoritative mode). ' +
        '`apply PLAN.json` of a saved plan sends only the ops shown.\n',
    );
  });

  it('with reads and every collection additive: a note that no member is removed', () => {
    const markdown = renderPlanMarkdown(
      unknown({ ...MADE_WITH, collections: { Company: 'additive', OrganizationalUnit: 'additive', Owner: 'additive', Type: 'additive' } }),
    );

    expect(markdown).toContain('> [!NOTE]\n');
    expect(markdown).toContain(
      '> Reads are configured (api.read): `contract-sync apply` reads it live first and plans it again. Every collection is additive: it removes no member.\n',
    );
    expect(markdown).not.toContain('[!WARNING]');
  });

  it('without reads: a note that apply sends the ops shown', () => {
    const markdown = renderPlanMarkdown(unknown({ ...MADE_WITH, reads: false }));

    expect(markdown).toContain('> [!NOTE]\n');
    expect(markdown).toContain('> No reads are configured (api.read): `contract-sync apply` sends these ops as shown and removes no member.\n');
  });

  it('a plan that does not record its config (a library call, an older plan): the warning, with the default mode', () => {
    const markdown = renderPlanMarkdown(unknown());

    expect(markdown).toContain('> [!WARNING]\n');
    expect(markdown).toContain('in collections in authoritative mode (the default), it may then remove members the desired state does not list.');
  });

  it('nothing when every known state is known', () => {
    const markdown = renderPlanMarkdown({ ...onePlan({ Name: 'x' }, { Name: 'y' }), madeWith: MADE_WITH });

    expect(markdown).not.toContain('[!WARNING]');
    expect(markdown).not.toContain('[!NOTE]');
  });
});

describe('the plan document with madeWith', () => {
  it('is read back with and without it (plans saved before it was recorded)', () => {
    const plan = onePlan({ Name: 'x' }, undefined);
    const recorded = { ...plan, madeWith: MADE_WITH };

    expect(parsePlan(JSON.stringify(plan))).toEqual(plan);
    expect(parsePlan(JSON.stringify(recorded))).toEqual(recorded);
    expect(() => parsePlan(JSON.stringify({ ...plan, madeWith: { ...MADE_WITH, collections: { Name: 'additive' } } }))).toThrow(/invalid plan/);
  });
});
