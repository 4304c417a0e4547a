/** `contract-sync plan --ref/--base` on real git repositories: reading at a ref, pull-request dry runs, shallow clones. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePlan, serialiseStateRecord, type ContractFields, type PlanDocument } from '../../engine/index.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';
import { createRepo, resetGitClock, shallowClone, type TestRepo } from '../git/helpers.ts';

const repos: TestRepo[] = [];

afterEach(async () => {
  await Promise.all(repos.splice(0).map((repo) => repo.cleanup()));
});

async function track(repo: Promise<TestRepo>): Promise<TestRepo> {
  const created = await repo;
  repos.push(created);
  return created;
}

const CONFIG = configYaml(['acme', 'globex']);

/** The markdown plan without what differs from run to run: the contract-sync version and the time it was made. */
function stable(markdown: string): string {
  return markdown.replace(/ · contract-sync \S+ · planned \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n/g, ' · contract-sync <version> · planned <time>\n');
}

const THREE_AT_BASE = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
    AnnualExpensesAmount: 48000
    ValidFrom: 2027-01-01T00:00:00Z
  "4712":
    Name: Security services
  "4713":
    Name: Catering
`;

// 4712 renamed; 4711 written differently but equal as desired state (48000.0, same instant).
const THREE_ON_BRANCH = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
    AnnualExpensesAmount: 48000.0
    ValidFrom: 2027-01-01T00:00:00.000Z
  "4712":
    Name: Security services 2028
  "4713":
    Name: Catering
`;

const MOVE_FROM_AT_BASE = `tenant: acme
contracts:
  "5001":
    Name: Moved without a change
    Company:
      - { Id: 12, RelationType: Supplier }
  "5002":
    Name: Dropped on the branch
`;

const MOVE_TO_ON_BRANCH = `tenant: acme
contracts:
  "5001":
    Company:
      - { Id: 12, RelationType: Supplier }
    Name: Moved without a change
`;

const NEW_ON_BRANCH = `tenant: acme
contracts:
  "7001":
    Name: Brand new
  "7002":
    Name: Also new
`;

const GLOBEX = `tenant: globex
contracts:
  "G-1":
    Name: Office lease
`;

/** Records `fields` as applied, in the file state backend (the working tree's .contract-sync/state). */
async function recordState(dir: string, tenant: string, contractId: string, fields: ContractFields): Promise<void> {
  const directory = path.join(dir, '.contract-sync/state', tenant);
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, `${contractId}.json`), serialiseStateRecord({ version: 1, tenant, contractId, fields }));
}

/**
 * main: the base desired state, everything applied (the state store agrees with it) except G-1,
 * which drifted. Branch `feature`: renames 4712, rewrites 4711 equivalently, adds 7001 and 7002,
 * moves 5001 to another file unchanged and drops 5002.
 */
async function pullRequestRepo(): Promise<TestRepo> {
  const repo = await track(
    createRepo({
      '.gitignore': '.contract-sync/\n',
      'contract-sync.yaml': CONFIG,
      'contracts/acme/three.yaml': THREE_AT_BASE,
      'contracts/acme/move-from.yaml': MOVE_FROM_AT_BASE,
      'contracts/globex/leases.yaml': GLOBEX,
    }),
  );
  await repo.git('checkout', '-q', '-b', 'feature');
  await repo.commit('change contracts', {
    'contracts/acme/three.yaml': THREE_ON_BRANCH,
    'contracts/acme/move-from.yaml': 'tenant: acme\ncontracts: {}\n',
    'contracts/acme/move-to.yaml': MOVE_TO_ON_BRANCH,
    'contracts/acme/new.yaml': NEW_ON_BRANCH,
  });
  await recordState(repo.dir, 'acme', '4711', { Name: 'Facility cleaning', AnnualExpensesAmount: 48000, ValidFrom: '2027-01-01T00:00:00Z' });
  await recordState(repo.dir, 'acme', '4712', { Name: 'Security services' });
  await recordState(repo.dir, 'acme', '4713', { Name: 'Catering' });
  await recordState(repo.dir, 'acme', '5001', { Name: 'Moved without a change', Company: [{ Id: 12, RelationType: 'Supplier' }] });
  await recordState(repo.dir, 'acme', '5002', { Name: 'Dropped on the branch' });
  await recordState(repo.dir, 'globex', 'G-1', { Name: 'Office lease (changed by hand)' });
  return repo;
}

async function planJson(dir: string, args: readonly string[]): Promise<PlanDocument> {
  const run = await runCli(['plan', '--format', 'json', ...args], dir);
  expect(run.code, run.stderr).toBe(0);
  return parsePlan(run.stdout);
}

function names(plan: PlanDocument): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  for (const tenant of plan.tenants) {
    for (const contract of tenant.contracts) {
      found[`${tenant.tenant}/${contract.id}`] = contract.changes.find((change) => change.field === 'Name')?.after;
    }
  }
  return found;
}

function touched(plan: PlanDocument): string[] {
  return plan.tenants.flatMap((tenant) => tenant.contracts.filter((contract) => contract.touched).map((contract) => `${tenant.tenant}/${contract.id}`));
}

describe('plan --ref', () => {
  it('reads the commit, not the working tree: an uncommitted edit is planned only without --ref', async () => {
    const repo = await track(createRepo({ 'contract-sync.yaml': CONFIG, 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1": { Name: Committed }\n' }));
    await repo.write({ 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1": { Name: Edited }\n' });
    const head = (await repo.git('rev-parse', 'HEAD')).trim();

    const atHead = await planJson(repo.dir, ['--ref', 'HEAD']);
    const tree = await planJson(repo.dir, []);

    expect(names(atHead)).toEqual({ 'acme/1': 'Committed' });
    expect(atHead.source).toEqual({ repo: '.', ref: 'HEAD', commit: head });
    expect(names(tree)).toEqual({ 'acme/1': 'Edited' });
    expect(tree.source).toEqual({ repo: '.', ref: null, commit: head });
  });

  it('plans an older commit as it was', async () => {
    const repo = await track(createRepo({ 'contract-sync.yaml': CONFIG, 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1": { Name: First }\n' }));
    const first = (await repo.git('rev-parse', 'HEAD')).trim();
    await repo.commit('second', { 'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1": { Name: Second }\n', 'contracts/globex/g.yaml': GLOBEX });

    const old = await planJson(repo.dir, ['--ref', first.slice(0, 10)]);

    expect(names(old)).toEqual({ 'acme/1': 'First' });
    expect(old.source).toEqual({ repo: '.', ref: first.slice(0, 10), commit: first });
  });

  it('reads the config at the ref too, unless --config names a working-tree file', async () => {
    const repo = await track(createRepo({ 'contract-sync.yaml': CONFIG, 'contracts/globex/g.yaml': GLOBEX }));
    await repo.write({ 'contract-sync.yaml': configYaml(['acme']) });

    const atRef = await runCli(['plan', '--ref', 'HEAD'], repo.dir);
    const withConfig = await runCli(['plan', '--ref', 'HEAD', '--config', 'contract-sync.yaml'], repo.dir);

    expect(atRef.code, atRef.stderr).toBe(0);
    expect(withConfig.code).toBe(1);
    expect(withConfig.stderr).toContain('tenant "globex" is not configured in contract-sync.yaml');
  });

  it('a ref without a config file: says so, exit 1', async () => {
    const repo = await track(createRepo({ 'contracts/globex/g.yaml': GLOBEX }));
    await repo.write({ 'contract-sync.yaml': CONFIG });

    const run = await runCli(['plan', '--ref', 'HEAD'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('contract-sync.yaml:1:1  -  config file not found at HEAD (commit it there, or pass --config FILE)');
  });

  it.each([
    [['--ref', 'no-such-branch'], 'contract-sync plan: cannot resolve --ref "no-such-branch": no such branch, tag or commit in this clone.'],
    [['--ref=--output=x'], 'contract-sync plan: --ref "--output=x" is not a git ref'],
  ])('refuses %j with exit 1', async (args, message) => {
    const repo = await track(createRepo({ 'contract-sync.yaml': CONFIG }));

    const run = await runCli(['plan', ...args], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(message);
  });

  it.each([['--ref'], ['--base']])('%s outside a git repository: exit 1', async (flag) => {
    const repo = await track(createRepo({ 'contract-sync.yaml': CONFIG }));
    await repo.git('init', '-q', '--bare', 'bare.git');

    const run = await runCli(['plan', '--repo', 'bare.git', flag, 'HEAD'], repo.dir);

    expect(run).toMatchObject({ code: 1, stderr: `contract-sync plan: ${flag} needs a git repository: bare.git is not inside a git work tree\n` });
  });
});

describe('plan --base (a pull-request dry run)', () => {
  it('marks exactly the contracts the branch adds or edits, and lists the one it drops', async () => {
    const repo = await pullRequestRepo();

    const plan = await planJson(repo.dir, ['--ref', 'HEAD', '--base', 'main']);

    expect(touched(plan)).toEqual(['acme/7001', 'acme/7002', 'acme/4712']);
    expect(plan.noLongerManaged).toEqual([{ tenant: 'acme', id: '5002', file: 'contracts/acme/move-from.yaml', line: 7 }]);
    expect(plan.summary).toEqual({ tenants: 2, contracts: 7, changed: 4, ops: 4, touched: 3, noLongerManaged: 1 });
    expect(plan.source).toEqual({
      repo: '.',
      ref: 'HEAD',
      commit: (await repo.git('rev-parse', 'HEAD')).trim(),
      base: { ref: 'main', commit: (await repo.git('rev-parse', 'main')).trim(), mergeBase: (await repo.git('rev-parse', 'main')).trim() },
    });
  });

  it('without --ref compares the base with the working tree, uncommitted edits included', async () => {
    const repo = await pullRequestRepo();
    await repo.write({ 'contracts/globex/leases.yaml': GLOBEX.replace('Office lease', 'Office lease 2029') });

    const plan = await planJson(repo.dir, ['--base', 'main']);

    expect(touched(plan)).toEqual(['acme/7001', 'acme/7002', 'acme/4712', 'globex/G-1']);
  });

  it('--tenant keeps the marking of the selected tenants only', async () => {
    const repo = await pullRequestRepo();

    const plan = await planJson(repo.dir, ['--ref', 'HEAD', '--base', 'main', '--tenant', 'globex']);

    expect(touched(plan)).toEqual([]);
    expect(plan.noLongerManaged).toEqual([]);
    expect(plan.summary.touched).toBe(0);
  });

  it('renders a markdown pull-request comment', async () => {
    resetGitClock();
    const repo = await pullRequestRepo();

    const run = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    expect(stable(run.stdout)).toMatchSnapshot();
  });

  it('a shallow clone without the base: exit 1, naming the ref and how to fetch it', async () => {
    const origin = await pullRequestRepo();
    const clone = await track(shallowClone(origin.dir, ['--depth', '1', '--branch', 'feature', '--single-branch']));

    const run = await runCli(['plan', '--ref', 'HEAD', '--base', 'origin/main', '--format', 'markdown'], clone.dir);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'contract-sync plan: cannot resolve --base "origin/main": this clone is shallow and does not have it. ' +
        'Fetch it first (git fetch --no-tags --deepen=50 origin +refs/heads/main:refs/remotes/origin/main), ' +
        'or in GitHub Actions, check out with `fetch-depth: 0` (actions/checkout); in GitLab CI, set `GIT_DEPTH: 0`.\n',
    );
  });

  it('--format github: annotations and the text plan on stdout, the markdown appended to GITHUB_STEP_SUMMARY', async () => {
    const repo = await pullRequestRepo();
    const summaryFile = path.join(repo.dir, 'step-summary.md');
    await writeFile(summaryFile, '## An earlier step\n\n');

    const run = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'github'], repo.dir, { GITHUB_STEP_SUMMARY: summaryFile });
    const markdown = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    const annotations = run.stdout.split('\n').filter((line) => line.startsWith('::'));
    expect(annotations).toEqual([
      '::notice file=contracts/acme/new.yaml,line=3,title=contract 7001 (acme)::changed in this pull request; 1 op to apply (known state unknown): Name',
      '::notice file=contracts/acme/new.yaml,line=5,title=contract 7002 (acme)::changed in this pull request; 1 op to apply (known state unknown): Name',
      '::notice file=contracts/acme/three.yaml,line=7,title=contract 4712 (acme)::changed in this pull request; 1 op to apply (known from the state store): Name',
      '::warning title=contract 5002 (acme) no longer managed::removed from the desired state (it was at contracts/acme/move-from.yaml:7); contract-sync never deletes, so it is left unchanged on the service',
    ]);
    expect(run.stdout).toContain('\n4 of 7 contracts in 2 tenants to update, 4 ops.\n');
    expect(stable(await readFile(summaryFile, 'utf8'))).toBe(`## An earlier step\n\n${stable(markdown.stdout)}\n`);
  });

  it('--format github without a base: a notice per contract with ops', async () => {
    const repo = await pullRequestRepo();

    const run = await runCli(['plan', '--format', 'github'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('::'))).toEqual([
      '::notice file=contracts/acme/new.yaml,line=3,title=contract 7001 (acme)::1 op to apply (known state unknown): Name',
      '::notice file=contracts/acme/new.yaml,line=5,title=contract 7002 (acme)::1 op to apply (known state unknown): Name',
      '::notice file=contracts/acme/three.yaml,line=7,title=contract 4712 (acme)::1 op to apply (known from the state store): Name',
      '::notice file=contracts/globex/leases.yaml,line=3,title=contract G-1 (globex)::1 op to apply (known from the state store): Name',
    ]);
  });
});
