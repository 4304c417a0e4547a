/**
 * Incremental pull-request plans with real git repositories and the file state store: `plan`
 * plans only the contracts changed since each tenant's last applied commit (written here through
 * the StateStore API, as a finished apply leaves it), says so, and falls back to a full plan when
 * the record cannot be trusted.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { planningFingerprint } from '../../engine/apply/incremental.ts';
import { parseConfig } from '../../engine/config/parse.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { parsePlan } from '../../engine/plan/read-plan.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';

const CONFIG = configYaml(['acme', 'globex']);
const ENV = { PATH: process.env.PATH ?? '' };

type Files = Record<string, Record<string, ContractFields>>;

function initialFiles(): Files {
  return {
    'contracts/acme/a.yaml': { 'A-1': { Name: 'One' }, 'A-2': { Name: 'Two' }, 'A-3': { Name: 'Three' } },
    'contracts/acme/b.yaml': { 'B-1': { Name: 'Bee' } },
    'contracts/globex/g.yaml': { 'G-1': { Name: 'Gee' }, 'G-2': { Name: 'Gee two' } },
  };
}

function yamlOf(files: Files): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([file, contracts]) => [file, stringify({ tenant: file.split('/')[1], contracts })]));
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup(): Promise<{ repo: TestRepo; files: Files; applied: string }> {
  const files = initialFiles();
  const repo = await createRepo({ 'contract-sync.yaml': CONFIG, '.gitignore': '.contract-sync/\n', ...yamlOf(files) });
  cleanups.push(() => repo.cleanup());
  const applied = (await repo.git('rev-parse', 'HEAD')).trim();
  return { repo, files, applied };
}

/** The state store as a finished apply of `commit` leaves it, for `tenants` (default: both). */
async function recordApplied(repo: TestRepo, files: Files, commit: string, tenants = ['acme', 'globex']): Promise<void> {
  const config = parseConfig('contract-sync.yaml', CONFIG).config!;
  const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
  for (const [file, contracts] of Object.entries(files)) {
    const tenant = file.split('/')[1]!;
    if (!tenants.includes(tenant)) continue;
    for (const [contractId, fields] of Object.entries(contracts)) {
      await store.writeContract(tenant, { contractId, fields, fingerprint: fingerprint(fields), appliedAt: '2026-11-01T00:00:00.000Z', commit });
    }
  }
  for (const tenant of tenants) {
    await store.writeRun(tenant, {
      lastAppliedCommit: commit,
      planningFingerprint: planningFingerprint(config, tenant),
      pending: [],
      updatedAt: '2026-11-01T00:00:00.000Z',
    });
  }
}

async function planJson(repo: TestRepo, args: readonly string[]): Promise<{ plan: PlanDocument; stderr: string }> {
  const run = await runCli(['plan', '--format', 'json', ...args], repo.dir, ENV);
  expect(run.code, run.stderr).toBe(0);
  return { plan: parsePlan(run.stdout), stderr: run.stderr };
}

function opsOf(plan: PlanDocument): Record<string, unknown> {
  const ops: Record<string, unknown> = {};
  for (const tenant of plan.tenants)
    for (const contract of tenant.contracts) if (contract.action === 'update') ops[`${tenant.tenant}/${contract.id}`] = contract.ops;
  return ops;
}

function idsOf(plan: PlanDocument): string[] {
  return plan.tenants.flatMap((tenant) => tenant.contracts.map((contract) => `${tenant.tenant}/${contract.id}`));
}

describe('plan on a pull request, with a last applied commit', () => {
  it('plans only the changed contract, says so in every format, and plans everything with --full', async () => {
    const { repo, files, applied } = await setup();
    await recordApplied(repo, files, applied);
    await repo.git('checkout', '-q', '-b', 'pr');
    files['contracts/acme/a.yaml']!['A-2'] = { Name: 'Two, edited' };
    delete files['contracts/acme/b.yaml']!['B-1'];
    await repo.commit('edit one contract, drop another', yamlOf(files));

    const { plan } = await planJson(repo, ['--ref', 'HEAD', '--base', 'main']);
    const text = await runCli(['plan', '--ref', 'HEAD', '--base', 'main'], repo.dir, ENV);
    const markdown = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown'], repo.dir, ENV);
    const full = await planJson(repo, ['--ref', 'HEAD', '--base', 'main', '--full']);

    expect(idsOf(plan)).toEqual(['acme/A-2']);
    expect(plan.tenants[0]!.contracts[0]).toMatchObject({
      touched: true,
      knownFrom: 'state',
      ops: [{ op: 'Replace', path: '/Contract/Name', value: 'Two, edited' }],
    });
    expect(plan.noLongerManaged).toEqual([{ tenant: 'acme', id: 'B-1', file: 'contracts/acme/b.yaml', line: 3 }]);
    expect(plan.source.incremental).toEqual({
      tenants: [
        { tenant: 'acme', since: applied, pending: 0 },
        { tenant: 'globex', since: applied, pending: 0 },
      ],
      full: [],
    });
    const note = `Only the contracts whose YAML changed since the last apply (commit ${applied.slice(0, 7)}, for acme and globex) are planned here.`;
    expect(text.stdout).toContain(`${note} The others are assumed to be as that apply left them; to plan every contract, run contract-sync plan --full.`);
    expect(markdown.stdout).toContain(
      `${note} The others are assumed to be as that apply left them; to plan every contract, run \`contract-sync plan --full\`.`,
    );
    expect(full.plan.source.incremental).toBeUndefined();
    expect(idsOf(full.plan)).toHaveLength(5);
    expect(opsOf(full.plan)).toEqual(opsOf(plan));
    expect(full.plan.noLongerManaged).toEqual(plan.noLongerManaged);
    expect(full.plan.summary.touched).toBe(plan.summary.touched);
  });

  it('plans from a last applied commit that the pull request branched off before, as a full plan would', async () => {
    const { repo, files, applied } = await setup();
    const main = structuredClone(files);
    main['contracts/globex/g.yaml']!['G-2'] = { Name: 'Changed on main after the branch-off' };
    await repo.git('checkout', '-q', '-b', 'pr');
    files['contracts/acme/a.yaml']!['A-1'] = { Name: 'One, edited in the pull request' };
    await repo.commit('pull request', yamlOf(files));
    await repo.git('checkout', '-q', 'main');
    const later = await repo.commit('main moves on', yamlOf(main));
    await recordApplied(repo, main, later);
    await repo.git('checkout', '-q', 'pr');

    const { plan } = await planJson(repo, ['--ref', 'HEAD', '--base', 'main']);
    const full = await planJson(repo, ['--ref', 'HEAD', '--base', 'main', '--full']);

    expect(applied).not.toBe(later);
    expect(plan.source.incremental?.tenants.map((entry) => entry.since)).toEqual([later, later]);
    expect(idsOf(plan).sort()).toEqual(['acme/A-1', 'globex/G-2']);
    expect(opsOf(plan)).toEqual(opsOf(full.plan));
  });

  it.each<[string, (repo: TestRepo, files: Files, applied: string) => Promise<void>, RegExp]>([
    ['has no last applied commit', async () => {}, /no earlier run recorded a commit/],
    [
      'was last applied at a commit this clone lacks',
      (repo, files) => recordApplied(repo, files, 'f'.repeat(40)),
      /the last applied commit ffffffffffff is not in this clone/,
    ],
  ])('plans every contract, and says why on stderr, when each tenant %s', async (_, arrange, reason) => {
    const { repo, files, applied } = await setup();
    await arrange(repo, files, applied);

    const { plan, stderr } = await planJson(repo, ['--ref', 'HEAD']);

    expect(plan.source.incremental).toBeUndefined();
    expect(idsOf(plan)).toHaveLength(6);
    expect(stderr).toMatch(new RegExp(`contract-sync plan: acme: every contract planned \\(${reason.source}`));
  });

  it('names in the plan a tenant planned in full next to one planned incrementally', async () => {
    const { repo, files, applied } = await setup();
    await recordApplied(repo, files, applied, ['acme']);

    const { plan, stderr } = await planJson(repo, ['--ref', 'HEAD']);
    const text = await runCli(['plan', '--ref', 'HEAD'], repo.dir, ENV);

    expect(stderr).toBe('');
    expect(idsOf(plan)).toEqual(['globex/G-1', 'globex/G-2']);
    expect(plan.source.incremental).toEqual({
      tenants: [{ tenant: 'acme', since: applied, pending: 0 }],
      full: [{ tenant: 'globex', reason: 'no earlier run recorded a commit' }],
    });
    expect(text.stdout).toContain('run contract-sync plan --full. Every contract of globex is planned: no earlier run recorded a commit.');
  });
});

describe('the git processes of a pull-request plan', () => {
  it('are four: the repository, one cat-file process for every ref and file, one diff and the merge base', async () => {
    const { repo, files, applied } = await setup();
    await recordApplied(repo, files, applied);
    await repo.git('checkout', '-q', '-b', 'pr');
    files['contracts/acme/a.yaml']!['A-2'] = { Name: 'Two, edited' };
    await repo.commit('edit one contract', yamlOf(files));
    const { dir, cleanup } = await writeTree({});
    cleanups.push(cleanup);
    const trace = path.join(dir, 'trace.txt');

    // Git processes inherit the environment of the test's process, not the CLI's `env`.
    process.env.GIT_TRACE = trace;
    let planned;
    try {
      planned = await planJson(repo, ['--ref', 'HEAD', '--base', 'main']);
    } finally {
      delete process.env.GIT_TRACE;
    }
    const commands = (await readFile(trace, 'utf8')).split('\n').flatMap((line) => /trace: built-in: git (\S+)/.exec(line)?.[1] ?? []);

    expect(idsOf(planned.plan)).toEqual(['acme/A-2']);
    expect(commands).toEqual(['rev-parse', 'cat-file', 'diff', 'merge-base']);
  });
});
