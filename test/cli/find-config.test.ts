/**
 * Finding the repository: contract-sync.yaml from the working directory upward to the git
 * repository's root, --chdir, CONTRACT_SYNC_CONFIG and the other variables for CI's flags, and a
 * "not found" message that says where contract-sync looked. Real git repositories.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsWithEnvironment, ENVIRONMENT_OPTIONS } from '../../engine/cli/environment-args.ts';
import { findConfig } from '../../engine/config/find.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';

const FILES = {
  'contract-sync.yaml': configYaml(['acme', 'globex'], 'desired: { paths: ["contracts/**/*.yaml"] }\n'),
  'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "4711": { Name: Alpha }\n',
  'contracts/globex/g.yaml': 'tenant: globex\ncontracts:\n  "9001": { Name: Gamma }\n',
};

function tenantsOf(planJson: string): string[] {
  return (JSON.parse(planJson) as { tenants: { tenant: string }[] }).tenants.map((entry) => entry.tenant);
}

describe('finding contract-sync.yaml', () => {
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createRepo(FILES);
    await mkdir(path.join(repo.dir, 'empty/deeper'), { recursive: true });
  });
  afterAll(() => repo.cleanup());

  it('finds the config of the repository root from a directory below it', async () => {
    const run = await runCli(['validate'], path.join(repo.dir, 'contracts/acme'));

    expect(run.stdout).toBe('0 errors, 0 warnings; 2 valid contracts in 2 files\n');
    expect(run.code).toBe(0);
  });

  it('plans from below the root as from the root; the plan names the repository as found (--repo ../..)', async () => {
    const below = await runCli(['plan', '--format', 'json', '--no-refresh'], path.join(repo.dir, 'contracts/acme'));
    const atRoot = await runCli(['plan', '--format', 'json', '--no-refresh'], repo.dir);

    expect(below.code).toBe(0);
    const plan = JSON.parse(below.stdout) as { source: { repo: string }; tenants: unknown };
    expect(plan.source.repo).toBe(path.join('..', '..'));
    expect(plan.tenants).toEqual((JSON.parse(atRoot.stdout) as { tenants: unknown }).tenants);
  });

  it('state list finds it too', async () => {
    const run = await runCli(['state', 'list'], path.join(repo.dir, 'contracts'));

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it("--chdir runs as if started there, for every command (before or after the command's own options)", async () => {
    const outside = path.dirname(repo.dir);
    const relative = path.relative(outside, path.join(repo.dir, 'contracts/acme'));
    const run = await runCli(['validate', '--chdir', relative], outside);
    const equals = await runCli(['validate', `--chdir=${relative}`, '--format', 'text'], outside);

    expect(run.stdout).toBe('0 errors, 0 warnings; 2 valid contracts in 2 files\n');
    expect(equals.stdout).toBe(run.stdout);
  });

  it('--chdir to a directory that is not there is a usage error', async () => {
    const run = await runCli(['plan', '--chdir', 'no-such-dir'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stderr).toBe('contract-sync plan: --chdir no-such-dir: no such directory; see contract-sync plan --help\n');
  });

  it('CONTRACT_SYNC_CHDIR is --chdir', async () => {
    const run = await runCli(['validate'], path.dirname(repo.dir), { CONTRACT_SYNC_CHDIR: path.join(repo.dir, 'contracts') });

    expect(run.stdout).toBe('0 errors, 0 warnings; 2 valid contracts in 2 files\n');
  });

  it('says where it looked when no directory up to the root holds the config, and suggests init', async () => {
    const other = await createRepo({ 'README.md': 'no config here\n' });
    try {
      await mkdir(path.join(other.dir, 'a/b'), { recursive: true });
      const run = await runCli(['validate'], path.join(other.dir, 'a/b'));
      const atRoot = await runCli(['plan'], other.dir);

      expect(run.code).toBe(1);
      expect(run.stdout).toBe(
        [
          "contract-sync.yaml:1:1  -  no contract-sync.yaml in . nor in any directory above it up to the git repository's root ../..; run contract-sync init to write one, or pass --config FILE (or set CONTRACT_SYNC_CONFIG)",
          '',
          '1 error, 0 warnings in contract-sync.yaml',
          '',
        ].join('\n'),
      );
      expect(atRoot.stderr).toContain("contract-sync.yaml:1:1  -  no contract-sync.yaml in . (the git repository's root); run contract-sync init to write one");
    } finally {
      await other.cleanup();
    }
  });

  it('outside a git repository, only the working directory is looked at', async () => {
    const { dir, cleanup } = await writeTree({ 'contract-sync.yaml': configYaml(), 'sub/.keep': '' });
    try {
      const run = await runCli(['validate'], path.join(dir, 'sub'));

      expect(run.stdout).toContain(
        'contract-sync.yaml:1:1  -  no contract-sync.yaml in ., which is not inside a git repository (no directory above it is searched); run contract-sync init',
      );
      expect((await findConfig(path.join(dir, 'sub'))).looked).toEqual([path.join(dir, 'sub')]);
    } finally {
      await cleanup();
    }
  });

  it('--repo is not searched upward; the message names the config above it', async () => {
    const run = await runCli(['validate', '--repo', 'empty/deeper'], repo.dir);

    expect(run.stdout).toContain(
      'empty/deeper/contract-sync.yaml:1:1  -  no contract-sync.yaml in empty/deeper; there is one in .: pass --repo ., or run contract-sync from there',
    );
  });

  it('CONTRACT_SYNC_CONFIG names the config; --config wins over it; a missing one says which flag or variable named it', async () => {
    const { dir, cleanup } = await writeTree({ 'elsewhere.yaml': FILES['contract-sync.yaml'] });
    try {
      const fromEnv = await runCli(['validate', '--repo', repo.dir], path.join(repo.dir, 'empty'), { CONTRACT_SYNC_CONFIG: path.join(dir, 'elsewhere.yaml') });
      const missing = await runCli(['validate'], repo.dir, { CONTRACT_SYNC_CONFIG: path.join(dir, 'nope.yaml') });
      const flagWins = await runCli(['validate', '--config', 'contract-sync.yaml'], repo.dir, { CONTRACT_SYNC_CONFIG: path.join(dir, 'nope.yaml') });

      expect(fromEnv.stdout).toBe('0 errors, 0 warnings; 2 valid contracts in 2 files\n');
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain('nope.yaml:1:1  -  config file not found (named by --config or CONTRACT_SYNC_CONFIG)');
      expect(flagWins.code).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('CONTRACT_SYNC_TENANT selects tenants (comma-separated) as --tenant does; CONTRACT_SYNC_REPO is --repo', async () => {
    const run = await runCli(['plan', '--format', 'json'], path.dirname(repo.dir), { CONTRACT_SYNC_TENANT: 'globex', CONTRACT_SYNC_REPO: repo.dir });
    const flag = await runCli(['plan', '--format', 'json', '--tenant', 'acme'], repo.dir, { CONTRACT_SYNC_TENANT: 'globex' });

    expect(run.code).toBe(0);
    expect(tenantsOf(run.stdout)).toEqual(['globex']);
    expect(tenantsOf(flag.stdout)).toEqual(['acme']);
  });

  it("adds the environment's flags only to the commands that take them, before `--`, never over a given flag", () => {
    const env = { CONTRACT_SYNC_TENANT: 'a, b', CONTRACT_SYNC_SHARD: '1/2', CONTRACT_SYNC_LOCK_TIMEOUT: '5', CONTRACT_SYNC_CONFIG: '' };

    expect(argsWithEnvironment('apply', ['--shard=2/2', '--', 'x'], env)).toEqual([
      '--shard=2/2',
      '--tenant',
      'a',
      '--tenant',
      'b',
      '--lock-timeout',
      '5',
      '--',
      'x',
    ]);
    expect(argsWithEnvironment('validate', [], env)).toEqual([]);
    expect(argsWithEnvironment('init', [], { CONTRACT_SYNC_CONFIG: 'c.yaml' })).toEqual([]);
  });

  it('the README lists every environment variable that stands for a flag', async () => {
    const readme = await readFile(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

    for (const option of ENVIRONMENT_OPTIONS) expect(readme).toMatch(new RegExp(`^\\| \`${option.env}\` \\| \`${option.flag}`, 'm'));
    expect(readme).toContain('| `CONTRACT_SYNC_CHDIR` | `--chdir DIR` |');
  });
});
