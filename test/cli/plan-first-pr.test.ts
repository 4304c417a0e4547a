/**
 * Issue 38, item 1: a pull request planned without known state (a first pull request, an empty
 * state store) shows what it changed in the desired YAML, base to head, on real git repositories.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../engine/index.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';
import { pullRequestRepo } from '../helpers/pull-request-repo.ts';
import type { TestRepo } from '../git/helpers.ts';

const AT_BASE = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
    AnnualExpensesAmount: 48000
    ValidFrom: 2027-01-01T00:00:00Z
    Company:
      - { Id: 12, RelationType: Supplier }
      - { Id: 13, RelationType: Customer }
  "4712":
    Name: Security services
    ValidFrom: 2027-01-01T00:00:00Z
`;

// 4711: renamed, a supplier dropped, the amount no longer managed; 4712 untouched; 4713 added.
const ON_BRANCH = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning 2028
    ValidFrom: 2027-01-01T00:00:00Z
    Company:
      - { Id: 13, RelationType: Customer }
  "4712":
    Name: Security services
    ValidFrom: 2027-01-01T00:00:00Z
  "4713":
    Name: Catering
`;

async function firstPullRequest(): Promise<TestRepo> {
  const { repo } = await pullRequestRepo({
    base: { '.gitignore': '.contract-sync/\nplan.json\n', 'contract-sync.yaml': configYaml(['acme']), 'contracts/acme.yaml': AT_BASE },
    branch: 'feature',
    message: 'renew 4711, add 4713',
    changes: { 'contracts/acme.yaml': ON_BRANCH },
  });
  return repo;
}

describe('plan --base with an empty state store (a first pull request)', () => {
  it("shows each changed contract's diff base -> head under a note that an apply sets every desired field; not the untouched contract", async () => {
    const repo = await firstPullRequest();

    const run = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown', '--out', 'plan.json'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      '> [!NOTE]\n> The known state of these contracts is unknown (nothing in the state store for them): their diffs are what this pull request ' +
        'changed in the desired YAML, base to head, field by field. An apply would set every desired field of them (4 ops), not only the ones changed here.\n',
    );
    expect(run.stdout).toContain(
      // In the field table's order.
      '**`4711`** · acme · contracts/acme.yaml:3 · known state unknown, 3 ops; this pull request changed:\n\n' +
        '```diff\n' +
        '- AnnualExpensesAmount: 48000  (no longer in the desired state: the service keeps it)\n' +
        '! Name: "Facility cleaning" -> "Facility cleaning 2028"\n' +
        '- Company (Id 12, RelationType "Supplier"): { Id: 12, RelationType: "Supplier" }\n' +
        '```\n',
    );
    expect(run.stdout).toContain(
      '**`4713`** · acme · contracts/acme.yaml:11 · known state unknown, 1 op; this pull request changed:\n\n```diff\n+ Name: "Catering"\n```\n',
    );
    // An unchanged field of a changed contract is not shown as a change; the untouched contract is counted first, then shown in the room left.
    const [changed, others] = run.stdout.split('#### Other contracts with changes (1)');
    expect(changed).not.toContain('ValidFrom');
    expect(changed).not.toContain('`4712`');
    expect(others).toMatch(/^\n\nNot changed by this pull request[^\n]*\n\n- \*\*acme\*\*: 1 contract, 2 ops, known state unknown for all\n\n<details>/);
  });

  it('the plan file keeps the diff (valid against its schema): show --format markdown prints the comment plan printed', async () => {
    const repo = await firstPullRequest();
    const planned = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown', '--out', 'plan.json'], repo.dir);

    const shown = await runCli(['show', 'plan.json', '--format', 'markdown'], repo.dir);

    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(planned.stdout);
    const plan = parsePlan(await readFile(path.join(repo.dir, 'plan.json'), 'utf8'));
    const contract = plan.tenants[0]!.contracts.find((entry) => entry.id === '4711')!;
    expect(contract.desiredChanges).toEqual([
      { field: 'AnnualExpensesAmount', before: 48000, after: null, unmanaged: true },
      { field: 'Name', before: 'Facility cleaning', after: 'Facility cleaning 2028' },
      { field: 'Company', before: { Id: 12, RelationType: 'Supplier' }, after: null },
    ]);
    // The untouched contract and contracts with known state carry none.
    expect(plan.tenants[0]!.contracts.find((entry) => entry.id === '4712')!.desiredChanges).toBeUndefined();
  });
});

describe('the streamed JSON plan (written tenant by tenant)', () => {
  it('carries the same desiredChanges as the plan file', async () => {
    const repo = await firstPullRequest();

    const streamed = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'json'], repo.dir);

    expect(streamed.code, streamed.stderr).toBe(0);
    const contract = parsePlan(streamed.stdout).tenants[0]!.contracts.find((entry) => entry.id === '4711')!;
    expect(contract.desiredChanges).toEqual([
      { field: 'AnnualExpensesAmount', before: 48000, after: null, unmanaged: true },
      { field: 'Name', before: 'Facility cleaning', after: 'Facility cleaning 2028' },
      { field: 'Company', before: { Id: 12, RelationType: 'Supplier' }, after: null },
    ]);
  });
});

describe('the text plan of a first pull request (written tenant by tenant)', () => {
  it("shows the pull request's own contracts, with what it changed, before the other contracts; show PLAN.json prints the same text", async () => {
    const repo = await firstPullRequest();

    const run = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--out', 'plan.json'], repo.dir);
    const shown = await runCli(['show', 'plan.json'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    const own = run.stdout.indexOf('\ncontracts this pull request changes (2):\n');
    const others = run.stdout.indexOf(
      '\nother contracts with changes (1): not changed by this pull request (drift, or not applied yet)\n  acme: 1 contract, 2 ops, known state unknown for all\n',
    );
    const detail = run.stdout.indexOf('\ntenant acme: 1 other contract with changes\n  ~ 4712  contracts/acme.yaml:8  (known state unknown, 2 ops)\n');
    expect([own > 0, others > own, detail > others]).toEqual([true, true, true]);
    expect(run.stdout.slice(own, others)).toContain(
      '  ~ 4711  tenant acme  contracts/acme.yaml:3  (known state unknown, 3 ops; this pull request changed)\n' +
        '      - AnnualExpensesAmount: 48000  (no longer in the desired state: the service keeps it)\n' +
        '      ~ Name: "Facility cleaning" -> "Facility cleaning 2028"\n' +
        '      - Company (Id 12, RelationType "Supplier"): { Id: 12, RelationType: "Supplier" }\n' +
        '  ~ 4713  tenant acme  contracts/acme.yaml:11  (known state unknown, 1 op; this pull request changed)\n' +
        '      + Name: "Catering"\n',
    );
    expect(run.stdout.slice(0, own)).not.toContain('4712');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(run.stdout);
  });

  it('the text written alone (no --out: contracts with nothing known rendered from their fields) is the same text', async () => {
    const repo = await firstPullRequest();
    const withOut = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--out', 'plan.json'], repo.dir);

    const alone = await runCli(['plan', '--ref', 'HEAD', '--base', 'main'], repo.dir);

    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toBe(withOut.stdout);
  });
});
