import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { initCommand } from '../../engine/cli/init.ts';
import { UsageError, type CliIo } from '../../engine/cli/io.ts';
import { scaffoldRepository } from '../../engine/init/scaffold.ts';
import { installedFor, relativeSchemaPath } from '../../engine/init/schema-path.ts';
import { extractInvocations } from '../examples/shell-invocations.ts';
import { runCli } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

interface InitRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function init(args: readonly string[], cwd: string): Promise<InitRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {}, cwd };
  const code = await initCommand(args, io);
  return { code, stdout, stderr };
}

async function gitInit(dir: string): Promise<void> {
  await run('git', ['init', '--quiet', dir]);
}

function read(dir: string, file: string): Promise<string> {
  return readFile(path.join(dir, file), 'utf8');
}

/** The example contract uncommented, as its comment tells a user to do, with a real-looking id. */
function uncommentExample(text: string): string {
  const lines = text.split('\n');
  const start = lines.indexOf('# contracts:');
  const block = lines
    .slice(start)
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^# ?/, ''));
  const kept = lines.slice(0, start).filter((line) => line !== 'contracts: {}');
  return [...kept, ...block].join('\n').replace('REPLACE-WITH-A-CONTRACT-ID', '4711');
}

describe('contract-sync init', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-init-'));
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes a repository that validate accepts without an error or a warning', async () => {
    await gitInit(dir);

    const written = await init([], dir);
    const validated = await runCli(['validate'], dir);

    expect(written).toMatchObject({ code: 0, stderr: '' });
    expect(written.stdout).toContain(
      'created  contract-sync.yaml\ncreated  contracts/example/example.yaml\ncreated  policy-tests/example.yaml\ncreated  .gitignore\n',
    );
    expect(written.stdout).toContain("\n  npx contract-sync policy test   # the example policy rule's cases\n");
    expect(validated.stderr).toBe('');
    expect(validated.stdout).toBe('0 errors, 0 warnings; 0 valid contracts in 1 file\n');
    expect(validated.code).toBe(0);
  });

  it('writes an example policy rule whose tests pass, and fail when the rule is changed', async () => {
    await gitInit(dir);
    await init([], dir);

    const passed = await runCli(['policy', 'test'], dir);
    const config = await read(dir, 'contract-sync.yaml');
    await writeFile(path.join(dir, 'contract-sync.yaml'), config.replace('    action: deny ', '    action: warn '));
    const failed = await runCli(['policy', 'test'], dir);

    expect(config).toContain('\npolicies:\n  - name: valid-to-not-before-valid-from\n');
    expect(passed.stdout).toContain('2 cases: 2 passed');
    expect(passed.code).toBe(0);
    expect(failed.stdout).toContain('1 failed');
    expect(failed.code).toBe(1);
  });

  it('writes a commented example contract that validates once uncommented', async () => {
    await gitInit(dir);
    await init([], dir);
    const file = path.join(dir, 'contracts/example/example.yaml');

    await writeFile(file, uncommentExample(await readFile(file, 'utf8')));
    const validated = await runCli(['validate'], dir);

    expect(validated.stdout).toBe('0 errors, 0 warnings; 1 valid contract in 1 file\n');
    expect(validated.code).toBe(0);
  });

  it('points the $schema lines at the specs/ of the contract-sync that runs, relative to each file, with --dir too', async () => {
    for (const [args, root] of [
      [['--tenant', 'acme'], dir],
      [['--tenant', 'acme', '--dir', 'sub/repo'], path.join(dir, 'sub/repo')],
    ] as const) {
      const written = await init(args, dir);
      const config = (await read(root, 'contract-sync.yaml')).split('\n')[0];
      const contracts = (await read(root, 'contracts/acme/example.yaml')).split('\n')[0];

      // Run from these sources: the specs/ of this repository; installed, node_modules/contract-sync/specs (test/package).
      for (const [file, line, schema] of [
        ['contract-sync.yaml', config, 'config'],
        ['contracts/acme/example.yaml', contracts, 'contracts'],
      ] as const) {
        expect(line).toMatch(/^# yaml-language-server: \$schema=\.\.\/\S+$/);
        const target = path.resolve(path.dirname(path.join(root, file)), (line ?? '').replace(/^.*\$schema=/, ''));
        expect(target).toBe(path.join(ROOT, `specs/${schema}.schema.json`));
        await expect(readFile(target, 'utf8')).resolves.toContain('"$schema"');
      }
      // Not installed for the repository: init says to install it, and where the $schema lines point.
      expect(written.stdout).toContain("npm install --save-dev <contract-sync's packed tarball or git URL>");
      expect(written.stdout).toContain(
        `The $schema lines point into ${path.relative(dir, path.join(ROOT, 'specs'))}, the specs/ of the contract-sync that ran init.`,
      );
    }
  });

  it('knows a copy installed for the repository (node_modules of its root or above) from one that is not', () => {
    const repo = path.join(dir, 'work/repo');

    expect(installedFor(repo, path.join(dir, 'work/repo/node_modules/contract-sync'))).toBe(true);
    expect(installedFor(repo, path.join(dir, 'work/node_modules/contract-sync'))).toBe(true);
    expect(installedFor(repo, path.join(dir, 'other/node_modules/contract-sync'))).toBe(false);
    expect(installedFor(repo, path.join(dir, 'work/repo/sub/node_modules/contract-sync'))).toBe(false);
    expect(installedFor(repo, ROOT)).toBe(false);
    expect(relativeSchemaPath(repo, path.join(dir, 'work/node_modules/contract-sync/specs'), 'config.schema.json')).toBe(
      '../node_modules/contract-sync/specs/config.schema.json',
    );
  });

  it('refers to every secret through an environment variable, one per tenant', async () => {
    await init(['--tenant', 'acme', '--tenant', 'globex-eu', '--tenant', 'globex.eu'], dir);

    const config = parse(await read(dir, 'contract-sync.yaml')) as { tenants: Record<string, { clientSecret: unknown }> };

    expect(Object.fromEntries(Object.entries(config.tenants).map(([tenant, value]) => [tenant, value.clientSecret]))).toEqual({
      acme: { env: 'ACME_CLIENT_SECRET' },
      'globex-eu': { env: 'GLOBEX_EU_CLIENT_SECRET' },
      'globex.eu': { env: 'GLOBEX_EU_CLIENT_SECRET_2' },
    });
  });

  it('writes one tenant block and one desired-state file per --tenant, and validate accepts them', async () => {
    await gitInit(dir);

    const written = await init(['--tenant', 'acme', '--tenant', 'globex', '--tenant', '2024'], dir);
    const config = parse(await read(dir, 'contract-sync.yaml')) as { tenants: Record<string, { paths: string[] }> };
    const validated = await runCli(['validate'], dir);

    expect(written.code).toBe(0);
    expect(Object.keys(config.tenants).sort()).toEqual(['2024', 'acme', 'globex']);
    expect(config.tenants.acme?.paths).toEqual(['contracts/acme/**']);
    for (const tenant of ['acme', 'globex', '2024']) {
      expect(parse(await read(dir, `contracts/${tenant}/example.yaml`))).toEqual({ tenant, contracts: {} });
    }
    expect(validated.stdout).toBe('0 errors, 0 warnings; 0 valid contracts in 3 files\n');
    expect(validated.code).toBe(0);
  });

  it.each([
    ['a slash', 'acme/eu'],
    ['a leading dot', '.acme'],
    ['a space', 'acme eu'],
    ['an empty name', ''],
    ['65 characters', 'a'.repeat(65)],
  ])('refuses a tenant name with %s, writing nothing', async (_case, tenant) => {
    const attempt = init(['--tenant', 'acme', '--tenant', tenant], dir);

    await expect(attempt).rejects.toThrow(UsageError);
    await expect(attempt).rejects.toThrow(`tenant "${tenant}" is not a valid tenant key`);
    await expect(readFile(path.join(dir, 'contract-sync.yaml'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a tenant given twice', async () => {
    await expect(init(['--tenant', 'acme', '--tenant', 'acme'], dir)).rejects.toThrow('--tenant acme is given more than once');
  });

  it('refuses an unknown --ci', async () => {
    await expect(init(['--ci', 'jenkins'], dir)).rejects.toThrow('--ci must be one of github, gitlab, none; got "jenkins"');
  });

  it('lists every file that exists, writes nothing, and exits 1', async () => {
    await mkdir(path.join(dir, 'contracts/acme'), { recursive: true });
    await writeFile(path.join(dir, 'contract-sync.yaml'), 'mine\n');
    await writeFile(path.join(dir, 'contracts/acme/example.yaml'), 'mine too\n');

    const refused = await init(['--tenant', 'acme', '--tenant', 'globex', '--ci', 'gitlab'], dir);

    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'contract-sync init: contract-sync.yaml exists\ncontract-sync init: contracts/acme/example.yaml exists\ncontract-sync init: nothing was written; --force overwrites these files\n',
    );
    await expect(read(dir, 'contract-sync.yaml')).resolves.toBe('mine\n');
    for (const file of ['contracts/globex/example.yaml', '.gitlab-ci.yml', '.gitignore']) {
      await expect(readFile(path.join(dir, file))).rejects.toThrow(/ENOENT/);
    }
  });

  it('refuses when only the CI file exists', async () => {
    await writeFile(path.join(dir, '.gitlab-ci.yml'), 'stages: [test]\n');

    const refused = await init(['--ci', 'gitlab'], dir);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('contract-sync init: .gitlab-ci.yml exists\ncontract-sync init: nothing was written; --force overwrites it\n');
    await expect(readFile(path.join(dir, 'contract-sync.yaml'))).rejects.toThrow(/ENOENT/);
  });

  it('overwrites existing files with --force and says which', async () => {
    await writeFile(path.join(dir, 'contract-sync.yaml'), 'mine\n');

    const forced = await init(['--force', '--ci', 'none'], dir);

    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('overwrote  contract-sync.yaml\ncreated  contracts/example/example.yaml\n');
    await expect(read(dir, 'contract-sync.yaml')).resolves.toMatch(/^# yaml-language-server/);
  });

  it('writes into --dir, relative to the working directory, creating it', async () => {
    const written = await init(['--dir', 'repo/sub'], dir);

    expect(written.code).toBe(0);
    expect(written.stdout).toContain('created  repo/sub/contract-sync.yaml\n');
    await expect(read(dir, 'repo/sub/contracts/example/example.yaml')).resolves.toContain('tenant: example\n');
  });

  it('appends only the missing .gitignore lines to an existing .gitignore', async () => {
    await writeFile(path.join(dir, '.gitignore'), 'dist/\n/node_modules\n');

    await init([], dir);
    const once = await read(dir, '.gitignore');
    await init(['--force'], dir);
    const twice = await read(dir, '.gitignore');

    expect(once).toBe('dist/\n/node_modules\n\n# contract-sync: the file state store, and the installed packages\n.contract-sync/\n');
    expect(twice).toBe(once);
  });

  it('ignores the state directory in git', async () => {
    await gitInit(dir);
    await init([], dir);
    await mkdir(path.join(dir, '.contract-sync/state/example'), { recursive: true });
    await writeFile(path.join(dir, '.contract-sync/state/example/4711.json'), '{}');

    const { stdout } = await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir });

    expect(stdout).not.toContain('.contract-sync');
    expect(stdout).toContain('contract-sync.yaml');
  });

  describe('the CI file', () => {
    it('is the GitHub workflow with --ci github, with every tenant secret mapped for apply', async () => {
      await init(['--ci', 'github', '--tenant', 'acme', '--tenant', 'globex'], dir);

      const workflow = parse(await read(dir, '.github/workflows/contract-sync.yml')) as {
        jobs: Record<string, { env?: Record<string, string>; steps: { uses?: string; with?: Record<string, unknown> }[] }>;
      };

      expect(workflow.jobs.apply?.env).toEqual({
        ACME_CLIENT_SECRET: '${{ secrets.ACME_CLIENT_SECRET }}',
        GLOBEX_CLIENT_SECRET: '${{ secrets.GLOBEX_CLIENT_SECRET }}',
      });
      const actionCommands = Object.values(workflow.jobs).flatMap((job) =>
        job.steps.filter((step) => step.uses === './node_modules/contract-sync').map((step) => step.with?.command),
      );
      expect(actionCommands).toEqual(['validate', 'plan', 'apply']);
      await expect(readFile(path.join(dir, '.gitlab-ci.yml'))).rejects.toThrow(/ENOENT/);
    });

    it('is .gitlab-ci.yml with --ci gitlab, running validate, plan, apply and drift', async () => {
      await init(['--ci', 'gitlab'], dir);

      const text = await read(dir, '.gitlab-ci.yml');
      const pipeline = parse(text, { merge: true }) as Record<string, { script?: string[] }>;

      expect(Object.keys(pipeline)).toEqual(expect.arrayContaining(['validate', 'plan:mr', 'apply', 'drift']));
      expect(text.match(/npx contract-sync (\w+)/g)).toEqual([
        'npx contract-sync validate',
        'npx contract-sync plan',
        'npx contract-sync apply',
        'npx contract-sync drift',
      ]);
      await expect(readFile(path.join(dir, '.github/workflows/contract-sync.yml'))).rejects.toThrow(/ENOENT/);
    });

    it.each([
      [
        'GitLab',
        (): string[][] => {
          const pipeline = parse(scaffoldRepository({ tenants: ['acme'], ci: 'gitlab' }).at(-1)?.content ?? '', { merge: true }) as Record<
            string,
            { script?: string[] }
          >;
          return Object.values(pipeline).flatMap((job) =>
            (job.script ?? []).flatMap((line) => extractInvocations(line).map((invocation) => [...invocation.argv])),
          );
        },
      ],
      [
        'GitHub',
        (): string[][] => {
          const workflow = parse(scaffoldRepository({ tenants: ['acme'], ci: 'github' }).at(-1)?.content ?? '') as {
            jobs: Record<string, { steps: { with?: { command?: string; args?: string } }[] }>;
          };
          return Object.values(workflow.jobs).flatMap((job) =>
            job.steps.flatMap((step) =>
              step.with?.command === undefined
                ? []
                : [
                    [
                      step.with.command,
                      ...(step.with.args ?? '')
                        .replace(/\$\{\{[^}]*\}\}/g, 'main')
                        .split(/\s+/)
                        .filter(Boolean),
                    ],
                  ],
            ),
          );
        },
      ],
    ])('%s: every command it runs is one the CLI takes', async (ci, commands) => {
      const found = commands();
      const errors: string[] = [];

      for (const argv of found) {
        const { stderr } = await runCli(argv, dir);
        if (/see contract-sync(?: [\w-]+)? --help/.test(stderr)) errors.push(`${argv.join(' ')}: ${stderr}`);
      }

      expect(found.map((argv) => argv[0]).sort()).toEqual(ci === 'GitLab' ? ['apply', 'drift', 'plan', 'validate'] : ['apply', 'plan', 'validate']);
      expect(errors).toEqual([]);
    });

    it('is left out with --ci none', async () => {
      await mkdir(path.join(dir, '.github'));

      const written = await init(['--ci', 'none'], dir);

      expect(written.stdout).not.toContain('.github');
      await expect(readFile(path.join(dir, '.github/workflows/contract-sync.yml'))).rejects.toThrow(/ENOENT/);
    });

    it.each([
      ['a .github directory', true, true],
      ['no .github directory', false, false],
    ])('defaults to GitHub with %s', async (_case, hasGithub, expectWorkflow) => {
      if (hasGithub) await mkdir(path.join(dir, '.github'));

      const written = await init([], dir);

      expect(written.stdout.includes('created  .github/workflows/contract-sync.yml')).toBe(expectWorkflow);
      expect(written.stdout.includes('.gitlab-ci.yml')).toBe(false);
    });
  });

  it('prints its help', async () => {
    const help = await init(['--help'], dir);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: contract-sync init \[--dir DIR\] \[--tenant T\]\.\.\. \[--ci github\|gitlab\|none\] \[--force\]/);
    expect(help.stdout).toContain('Exit codes:');
  });
});
