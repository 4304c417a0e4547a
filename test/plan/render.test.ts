import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPlan, MARKDOWN_MAX_LENGTH, renderPlanMarkdown, renderPlanText, type PlanDocument } from '../../engine/index.ts';
import type { ContractSet } from '../../engine/desired/index.ts';
import {
  addedLine,
  addedMemberLine,
  changeLine,
  changeText,
  formatCompletedMember,
  formatFieldValue,
  formatValue,
  viewChange,
} from '../../engine/plan/render-common.ts';
import { completeMember } from '../../engine/model/members.ts';
import { planContract } from '../../engine/plan/plan-contract.ts';
import { contractKey } from '../../engine/plan/touched-contracts.ts';
import type { DesiredChange } from '../../engine/plan/types.ts';
import { renderPlanTextContract, renderUnknownContractText } from '../../engine/plan/render-text.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { COLLECTION_FIELDS, FIELDS, getField, type FieldName, type FieldSpec } from '../../engine/model/fields.ts';
import { describeChanges, diffContract } from '../../engine/plan/index.ts';
import { contract, diffCase, members } from './arbitraries.ts';
import { BASE_SOURCE, CREATED_AT, desiredSets, knownState, SOURCE, TOUCHED } from './fixtures.ts';

const ESC = '\u001b';

function mixedPlan(): PlanDocument {
  return createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, source: SOURCE });
}

function pullRequestPlan(): PlanDocument {
  return createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: TOUCHED });
}

/** Like bigPlan, as a pull request that touches the first `touched` contracts of every tenant and drops `dropped`. */
function bigPullRequestPlan(tenants: number, contracts: number, touched: number, dropped: number, commentLength = 200): PlanDocument {
  const plan = bigPlan(tenants, contracts, commentLength);
  const sets: ContractSet[] = plan.tenants.map((tenant) => ({
    tenant: tenant.tenant,
    file: `contracts/${tenant.tenant}.yaml`,
    contracts: tenant.contracts.map((contract, i) => ({
      id: contract.id,
      line: contract.line,
      column: 3,
      fields: { Name: `Contract ${i}`, Comment: 'x'.repeat(commentLength), Company: [{ Id: i, RelationType: 'Supplier' }] },
    })),
  }));
  const marking = {
    contracts: new Map(plan.tenants.map((tenant) => [tenant.tenant, new Set(tenant.contracts.slice(0, touched).map((c) => c.id))])),
    noLongerManaged: Array.from({ length: dropped }, (_, i) => ({ tenant: 'tenant-0', id: `D-${i}`, file: 'contracts/dropped.yaml', line: 3 + i })),
  };
  return createPlan(sets, new Map(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: marking });
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

/** The closing list of a shortened comment: how many contracts it names by id, and how many it only counts. */
function leftOut(markdown: string): { listed: number; counted: number } {
  const list = /^\*\*Not shown here\*\*.*$/m.exec(markdown)?.[0] ?? '';
  return { listed: list.match(/`[^`]+`/g)?.length ?? 0, counted: Number(/(\d+) more contracts?, not named/.exec(list)?.[1] ?? 0) };
}

describe('renderPlanText', () => {
  it('a duration is shown as formatValue shows it without its null units', () => {
    const duration = getField('SupplierNoticePeriod') as FieldSpec;
    const unit = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer(), fc.double(), fc.string());
    const value = fc.oneof(
      fc.dictionary(fc.constantFrom('Days', 'Weeks', 'Months', 'Years', '__proto__', '1', '0'), unit),
      fc.array(unit),
      fc.constant(null),
      fc.integer(),
    );
    fc.assert(
      fc.property(value, (given) => {
        const expected =
          given === null || typeof given !== 'object'
            ? formatValue(given)
            : formatValue(Object.fromEntries(Object.entries(given).filter(([, item]) => item !== null)));
        expect(formatFieldValue(duration, given)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('changeLine (what the text plan writes per change) is changeText of viewChange, for every kind of change', () => {
    const kinds = new Set<string>();
    fc.assert(
      fc.property(diffCase, ({ known, desired, collections }) => {
        for (const change of describeChanges(known, diffContract(known, desired, { collections }))) {
          const view = viewChange(change);
          kinds.add(view.kind);
          expect(changeLine(change)).toEqual({ kind: view.kind, text: changeText(view) });
        }
      }),
      { numRuns: 500 },
    );
    expect([...kinds].sort()).toEqual(['add', 'member-change', 'remove', 'replace', 'set']);
  });

  it('a contract with nothing known: renderUnknownContractText is renderPlanTextContract of its plan (touched or not, coloured or not)', () => {
    let shown = 0;
    fc.assert(
      fc.property(
        fc.oneof(contract('utc'), fc.constant({})),
        fc.constantFrom(undefined, true, false),
        fc.boolean(),
        fc.string(),
        fc.nat(),
        (fields: ContractFields, touched, color, file, line) => {
          const desired = { id: 'C-1', file, line, column: 3, fields };
          const planned = planContract(desired, undefined, touched === undefined ? undefined : new Set(touched ? ['C-1'] : []), {});
          const text = renderUnknownContractText(desired, touched, { color });
          expect(text).toBe(renderPlanTextContract(planned, { color }));
          if (text !== '') shown += 1;
        },
      ),
      { numRuns: 1000 },
    );
    expect(shown).toBeGreaterThan(0);
  });

  it('addedLine is changeLine of a change with nothing before, for any field and value', () => {
    fc.assert(
      fc.property(fc.constantFrom(...(FIELDS as readonly FieldSpec[])), fc.anything(), (field, after) => {
        expect(addedLine(field, after)).toEqual(changeLine({ field: field.name as FieldName, before: null, after }));
      }),
      { numRuns: 1000 },
    );
  });

  it.each(COLLECTION_FIELDS.map((field) => [field.name, field] as const))(
    '%s: a member shown completed without the copy is formatValue of completeMember, and an added member line is addedLine of it',
    (_, field) => {
      let fast = 0;
      const member = fc.oneof(
        members(field).map((list) => list[0]),
        fc.anything(),
        fc.record(
          { Id: fc.anything(), OwnerType: fc.anything(), User: fc.anything(), Lookup: fc.anything(), RelationType: fc.anything() },
          { requiredKeys: [] },
        ),
      );
      fc.assert(
        fc.property(member, (given) => {
          const shown = formatCompletedMember(field, given);
          if (shown !== undefined) {
            fast += 1;
            expect(shown).toBe(formatValue(completeMember(field, given)));
          }
          expect(addedMemberLine(field, given)).toEqual(addedLine(field, completeMember(field, given)));
        }),
        { numRuns: 1000 },
      );
      // Every valid member goes the short way.
      fc.assert(
        fc.property(members(field), (list) => {
          for (const given of list) expect(formatCompletedMember(field, given)).toBeDefined();
        }),
        { numRuns: 200 },
      );
      expect(fast).toBeGreaterThan(0);
    },
  );

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

  it('with a base: says what the change touches, names the tenant of its contracts, shows those without ops, lists those no longer managed', () => {
    const text = renderPlanText(pullRequestPlan());

    expect(text).toContain('\nChanges since origin/main (merge base 3333333) touch 2 contracts; 1 contract is no longer managed.\n');
    expect(text).toContain('  ~ 4711  tenant acme  contracts/acme/facilities.yaml:3  (known from the state store, 5 ops)\n');
    expect(text).toContain('  = 4712  tenant acme  contracts/acme/facilities.yaml:13  (no ops: the known state already matches)\n');
    expect(text).toContain('  ~ 5001  contracts/acme/it.yaml:3  (known state unknown, 3 ops)\n');
    expect(text).toContain('  - 4799  tenant acme  (was contracts/acme/facilities.yaml:18)\n');
  });

  it("with a base, in the comment's order: findings, the pull request's own contracts, members removed, no longer managed, the others counted, then their details", () => {
    const plan: PlanDocument = {
      ...pullRequestPlan(),
      findings: [{ check: 'no-unknown', action: 'warn', tenant: 'acme', contractId: '5001', message: 'planned without known state' }],
    };

    const text = renderPlanText(plan);

    const order = [
      '2 of 4 contracts in 2 tenants to update, 8 ops.\n',
      '\n1 finding: 1 warning\n  warning        no-unknown  acme/5001: planned without known state\n',
      '\ncontracts this pull request changes (2):\n  ~ 4711  tenant acme ',
      '  = 4712  tenant acme ',
      '\nmembers removed (1 in 1 tenant; tenant · contract · member):\n  - acme · 4711 · Company (Id 19, RelationType "Client")\n',
      '\nno longer managed (',
      '\nother contracts with changes (1): not changed by this pull request (drift, or not applied yet)\n  acme: 1 contract, 3 ops, known state unknown for all\n',
      '\ntenant acme: 1 other contract with changes\n  ~ 5001  contracts/acme/it.yaml:3',
      '\n1 other contract matches the desired state: no ops.\n',
      '\nKnown state unknown for 1 contract',
    ];
    const at = order.map((piece) => text.indexOf(piece));
    expect(
      at.every((index) => index >= 0),
      JSON.stringify(at),
    ).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(renderPlanText(pullRequestPlan())).toMatchSnapshot();
  });

  it('with a base and nothing known: a contract of the pull request shows what it changed in the desired YAML, under the note the comment has', () => {
    const marking = { contracts: new Map([['acme', new Set(['4711'])]]), noLongerManaged: [] };
    const desiredChanges = new Map<string, readonly DesiredChange[]>([
      [
        contractKey('acme', '4711'),
        [
          { field: 'Name', before: 'Facility cleaning 2026', after: 'Facility cleaning 2027' },
          { field: 'Comment', before: 'old', after: null, unmanaged: true },
        ],
      ],
    ]);
    const plan = createPlan(desiredSets(), new Map(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: { ...marking, desiredChanges } });

    const text = renderPlanText(plan);

    expect(text).toContain(
      '\ncontracts this pull request changes (1):\nThe known state of this contract is unknown (nothing in the state store for it): its diff is what this pull request ' +
        'changed in the desired YAML, base to head, field by field. An apply would set every desired field of it (7 ops), not only the ones changed here.\n' +
        '  ~ 4711  tenant acme  contracts/acme/facilities.yaml:3  (known state unknown, 7 ops; this pull request changed)\n' +
        '      ~ Name: "Facility cleaning 2026" -> "Facility cleaning 2027"\n' +
        '      - Comment: "old"  (no longer in the desired state: the service keeps it)\n\n',
    );
  });

  it('without a base: the findings and the members removed before the tenants', () => {
    const plan: PlanDocument = { ...mixedPlan(), findings: [{ check: 'x', action: 'deny', tenant: 'globex', message: 'no' }] };

    const text = renderPlanText(plan);

    expect(text.indexOf('\n1 finding: 1 denied\n')).toBeGreaterThan(0);
    expect(text.indexOf('\n1 finding: 1 denied\n')).toBeLessThan(text.indexOf('\nmembers removed (1 in 1 tenant; tenant · contract · member):\n'));
    expect(text.indexOf('\nmembers removed')).toBeLessThan(text.indexOf('\ntenant acme: 2 to update, 1 unchanged, 8 ops\n'));
  });

  it('says when there is nothing to do', () => {
    const plan = createPlan([{ tenant: 'acme', file: 'a.yaml', contracts: [] }], new Map(), { createdAt: CREATED_AT, source: SOURCE });

    expect(renderPlanText(plan)).toBe('No changes: no contract to plan.\n\ntenant acme: no changes (0 contracts)\n');
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

  it('summarises instead of exceeding 60,000 characters, naming every contract it leaves out (or counting them when even ids do not fit)', () => {
    const plan = bigPlan(100, 200);

    const markdown = renderPlanMarkdown(plan);

    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_MAX_LENGTH);
    expect(markdown.length).toBeGreaterThan(MARKDOWN_MAX_LENGTH - 15_000);
    const lines = markdown.match(/^\*\*`\d+`\*\*/gm)!.length;
    const { listed, counted } = leftOut(markdown);
    expect(lines + listed + counted).toBe(plan.summary.changed);
    expect(markdown).toContain(`Shortened to stay under 60,000 characters: ${plan.summary.changed - lines} contracts (${plan.summary.ops - lines * 3} ops)`);
    expect(markdown.match(/<details>/g)!.length).toBe(markdown.match(/<\/details>/g)!.length);
  });

  it('stays under any cap for any plan size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1_600, max: 30_000 }),
        fc.nat(2_000),
        (tenants, contracts, maxLength, comment) => {
          const markdown = renderPlanMarkdown(bigPlan(tenants, contracts, comment), { maxLength });

          expect(markdown.length).toBeLessThanOrEqual(maxLength);
          expect(markdown.match(/<details>/g)?.length ?? 0).toBe(markdown.match(/<\/details>/g)?.length ?? 0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('renders a pull-request plan: summary, the contracts it changes, those no longer managed, then the others', () => {
    const markdown = renderPlanMarkdown(pullRequestPlan());

    expect(markdown).toMatchSnapshot();
    const order = [
      '| Tenant |',
      '#### Contracts this pull request changes (2)',
      '**`4711`** · acme',
      '**`4712`** · acme',
      '#### No longer managed (1)',
      '#### Other contracts with changes (1)',
      '**`5001`** · acme',
    ];
    const positions = order.map((text) => markdown.indexOf(text));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('a pull request that changes no contract says so', () => {
    const plan = createPlan(desiredSets(), knownState(), {
      createdAt: CREATED_AT,
      source: BASE_SOURCE,
      touched: { contracts: new Map(), noLongerManaged: [] },
    });

    const markdown = renderPlanMarkdown(plan);

    expect(markdown).toContain('#### Contracts this pull request changes (0)\n\nNone: this pull request changes no contract of the desired state.\n');
    expect(markdown).not.toContain('No longer managed');
  });

  it('a pull-request plan names every contract it changes first, counts the others per tenant without naming them, and stays under the cap', () => {
    const plan = bigPullRequestPlan(50, 100, 2, 30);

    const markdown = renderPlanMarkdown(plan);

    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_MAX_LENGTH);
    const lines = markdown.match(/^\*\*`\d+`\*\* · tenant-\d+/gm) ?? [];
    // The contracts this pull request changes come first: every line is one of them.
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^\*\*`100[01]`\*\*/);
    const { listed, counted } = leftOut(markdown);
    expect(counted).toBe(0);
    expect(lines.length + listed).toBe(plan.summary.touched);
    expect(markdown).toContain('#### No longer managed (30)');
    // The 4,900 others: counted per tenant (20 tenants, then the rest together), none named.
    expect(markdown).toContain('#### Other contracts with changes (4900)');
    expect(markdown).toContain('- **tenant-0**: 98 contracts, 294 ops, known state unknown for all\n');
    expect(markdown).toContain('- 30 more tenants: 2940 contracts, 8820 ops\n');
    expect(markdown).not.toContain('`1002`');
    expect(markdown).toMatch(
      /> Shortened to stay under 60,000 characters: (\d+ contracts \(\d+ ops\) and )?(the changes of \d+ contracts \(\d+ ops, the largest first\) and )?the details of 4900 other contracts \(14700 ops; counted above\) not shown\./,
    );
    expect(markdown.match(/<details>/g)?.length ?? 0).toBe(markdown.match(/<\/details>/g)?.length ?? 0);
  });

  it('a pull-request plan stays under any cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 40 }),
        fc.nat(10),
        fc.nat(50),
        fc.integer({ min: 1_600, max: 30_000 }),
        (tenants, contracts, touched, dropped, maxLength) => {
          const markdown = renderPlanMarkdown(bigPullRequestPlan(tenants, contracts, touched, dropped), { maxLength });

          expect(markdown.length).toBeLessThanOrEqual(maxLength);
          expect(markdown.match(/<details>/g)?.length ?? 0).toBe(markdown.match(/<\/details>/g)?.length ?? 0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('fences a value holding backticks with a longer fence', () => {
    const markdown = renderPlanMarkdown(mixedPlan());

    expect(markdown).toContain('````diff\n+ Comment: "two\\nlines"\n+ Name: "Laptops ```fenced```"');
  });
});
