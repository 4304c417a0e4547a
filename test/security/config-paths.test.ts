/** Issue 21, item 3: nothing the config names is read from outside the repository. */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/parse.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';

const SHADOW = 'root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n';
const OUTSIDE_YAML = 'tenant: acme\ncontracts:\n  "9999":\n    Name: outside secret value\n';

let parent: string;
let repo: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'contract-sync-paths-'));
  repo = path.join(parent, 'repo');
  await mkdir(path.join(repo, 'contracts/acme'), { recursive: true });
  await mkdir(path.join(parent, 'outside-dir'));
  await writeFile(path.join(parent, 'shadow'), SHADOW);
  await writeFile(path.join(parent, 'outside.yaml'), OUTSIDE_YAML);
  await writeFile(path.join(parent, 'outside-dir/c.yaml'), OUTSIDE_YAML);
  await writeFile(path.join(repo, 'contracts/acme/a.yaml'), 'tenant: acme\ncontracts:\n  "1":\n    Name: inside\n');
  execFileSync('git', ['init', '-q', repo]);
});

afterAll(() => rm(parent, { recursive: true, force: true }));

async function validateWith(extra: string): Promise<{ code: number; output: string }> {
  await writeFile(path.join(repo, 'contract-sync.yaml'), configYaml(['acme'], extra));
  const run = await runCli(['validate'], repo, { ACME_SECRET: 'x' });
  return { code: run.code, output: run.stdout + run.stderr };
}

describe('desired-state globs that can leave the repository are config errors at the config line', () => {
  it.each([
    ['a ".." glob', 'desired: { paths: ["contracts/**/*.yaml", "../shadow"] }\n', 'contract-sync.yaml:7:43  desired.paths[1]'],
    ['a deeper ".." glob', 'desired: { paths: ["contracts/../../outside.yaml"] }\n', 'contract-sync.yaml:7:20  desired.paths[0]'],
    ['a ".." inside braces', 'desired: { paths: ["{..,contracts}/*.yaml"] }\n', 'contract-sync.yaml:7:20  desired.paths[0]'],
    ['an absolute glob', `desired: { paths: [${JSON.stringify(path.join('PARENT', 'shadow'))}] }\n`, 'contract-sync.yaml:7:20  desired.paths[0]'],
  ])('%s', async (_, extra, where) => {
    const { code, output } = await validateWith(extra.replace('PARENT', parent));
    expect(code).toBe(1);
    expect(output).toContain(where);
    expect(output).toMatch(/could leave the repository|is absolute/);
    expect(output).not.toContain('root:');
    expect(output).not.toContain('outside secret value');
    expect(output).not.toContain('9999');
  });

  it("a tenant's paths glob outside the repository", async () => {
    const { code, output } = await validateWith('');
    expect(code).toBe(0);
    await writeFile(
      path.join(repo, 'contract-sync.yaml'),
      configYaml(['acme']).replace('clientSecret: { env: ACME_SECRET }', 'clientSecret: { env: ACME_SECRET }\n    paths: ["/etc/**"]'),
    );
    const run = await runCli(['validate'], repo, { ACME_SECRET: 'x' });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('contract-sync.yaml:7:13  tenants.acme.paths[0]  the glob "/etc/**" is absolute');
    expect(output).not.toContain('root:');
  });

  it('secret files and the state path: ".." steps are errors, absolute paths are the operator\'s choice', () => {
    const text =
      configYaml(['acme', 'globex'])
        .replace('{ env: ACME_SECRET }', '{ file: ../../secrets/acme }')
        .replace('{ env: GLOBEX_SECRET }', '{ file: /run/secrets/globex }') + 'state: { backend: file, path: ../state }\n';
    const { diagnostics } = parseConfig('contract-sync.yaml', text);
    expect(diagnostics.map((d) => `${d.line}:${d.column} ${d.field} ${d.code}`)).toEqual([
      '6:27 tenants.acme.clientSecret.file config-path',
      '10:31 state.path config-path',
    ]);
    const fine = parseConfig('contract-sync.yaml', configYaml(['acme'], 'state: { backend: file, path: /var/lib/contract-sync }\n'));
    expect(fine.diagnostics).toEqual([]);
  });

  it('ordinary globs are fine, ".." inside a name too', () => {
    const { diagnostics } = parseConfig(
      'contract-sync.yaml',
      configYaml(['acme'], 'desired: { paths: ["contracts/**/*.yaml", "contracts/a..b.yaml", "!contracts/x/**"] }\n'),
    );
    expect(diagnostics).toEqual([]);
  });
});

describe('symbolic links keep being ignored, also where a pattern names them', () => {
  it('a link named by a pattern, and a linked directory, are not read', async () => {
    await symlink(path.join(parent, 'outside.yaml'), path.join(repo, 'contracts/link.yaml'));
    await symlink(path.join(parent, 'outside-dir'), path.join(repo, 'linked-dir'));
    try {
      const { code, output } = await validateWith(
        'desired: { paths: ["contracts/acme/*.yaml", "contracts/link.yaml", "linked-dir/*.yaml", "linked-dir/c.yaml"] }\n',
      );
      expect(output).not.toContain('9999');
      // Not read, and said (issue 41): a warning naming the link the pattern selects.
      expect(output).toContain(
        'contracts/link.yaml:1:1  -  warning: not read: a symbolic link, not a regular file (desired-state files are read only as regular files in the repository)',
      );
      expect(output).toContain('1 valid contract in 2 files');
      expect(code).toBe(0);
    } finally {
      await rm(path.join(repo, 'contracts/link.yaml'));
      await rm(path.join(repo, 'linked-dir'));
    }
  });

  it('a FIFO named by a pattern is not opened (it would block)', async () => {
    execFileSync('mkfifo', [path.join(repo, 'contracts/fifo.yaml')]);
    try {
      const { code, output } = await validateWith('desired: { paths: ["contracts/acme/*.yaml", "contracts/fifo.yaml"] }\n');
      expect(output).toContain('contracts/fifo.yaml:1:1  -  warning: not read: a FIFO (named pipe), not a regular file');
      expect(output).toContain('1 valid contract in 2 files');
      expect(code).toBe(0);
    } finally {
      await rm(path.join(repo, 'contracts/fifo.yaml'));
    }
  }, 5_000);
});

describe("a tenant's paths glob that matches nothing is said at the config's line (issue 21, item 11)", () => {
  it('a typo in tenants.acme.paths: a warning at the config line, beside the refused file', async () => {
    await writeFile(
      path.join(repo, 'contract-sync.yaml'),
      configYaml(['acme']).replace('clientSecret: { env: ACME_SECRET }', 'clientSecret: { env: ACME_SECRET }\n    paths: ["contracts/acmee/**"]'),
    );
    const run = await runCli(['validate'], repo, { ACME_SECRET: 'x' });
    expect(run.stdout).toContain(
      'contract-sync.yaml:7:13  tenants.acme.paths[0]  warning: the glob "contracts/acmee/**" of tenant acme\'s paths matches none of the 1 desired-state files (desired.paths: contracts/**/*.yaml)',
    );
    expect(run.stdout).toContain('contracts/acme/a.yaml:1:9  tenant  this file may not declare tenant "acme"');
    expect(run.code).toBe(1);
  });

  it('no warning when the glob selects a file', async () => {
    await writeFile(
      path.join(repo, 'contract-sync.yaml'),
      configYaml(['acme']).replace('clientSecret: { env: ACME_SECRET }', 'clientSecret: { env: ACME_SECRET }\n    paths: ["contracts/acme/**"]'),
    );
    const run = await runCli(['validate'], repo, { ACME_SECRET: 'x' });
    expect(run.stdout).not.toContain('tenant-paths');
    expect(run.stdout).toContain('0 errors, 0 warnings; 1 valid contract in 1 file');
    expect(run.code).toBe(0);
  });
});
