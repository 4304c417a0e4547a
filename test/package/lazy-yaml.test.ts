/**
 * Start-up cost of a pull-request plan: with a valid config and valid changed files, everything is
 * read on the fast path (engine/yaml/plain-yaml.ts) and the `yaml` package is never loaded; a file with
 * a problem loads it, for the exact position. The CLI runs in a child process (its sources,
 * through tsx) that reports the modules of `yaml` it loaded.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configYaml } from '../helpers/files.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const REPORTER = path.join(ROOT, 'test/package/report-yaml-loads.mjs');
const ENTRY = path.join(ROOT, 'test/package/cli-sources.ts');

const CONFIG = configYaml(['acme']);
const CONTRACTS = 'tenant: acme\ncontracts:\n  "4711":\n    Name: Facility cleaning\n    Company:\n      - { Id: 12, RelationType: Supplier }\n';
const CHANGED = CONTRACTS.replace('Facility cleaning', 'Office cleaning');

let repo: TestRepo;

beforeAll(async () => {
  repo = await createRepo({ '.gitignore': '.contract-sync/\n', 'contract-sync.yaml': CONFIG, 'contracts/acme/a.yaml': CONTRACTS });
  await repo.git('checkout', '-q', '-b', 'feature');
});

afterAll(async () => {
  await repo.cleanup();
});

/**
 * `contract-sync plan --ref HEAD --base main` after committing, on the branch, the valid config
 * and a valid change of a.yaml, or instead `files`: exit code, output, and the `yaml` modules loaded.
 */
async function planPullRequest(files: Readonly<Record<string, string>> = {}): Promise<{ code: number; stdout: string; stderr: string; yaml: string[] }> {
  await repo.commit('change', { 'contract-sync.yaml': CONFIG, 'contracts/acme/a.yaml': CHANGED, ...files });
  const out = path.join(repo.dir, '.git', 'yaml-loads.txt');
  // Run from the package, where `--import tsx` resolves; the repository is a temporary directory.
  const argv = ['--import', 'tsx', '--import', REPORTER, ENTRY, 'plan', '--repo', repo.dir, '--ref', 'HEAD', '--base', 'main'];
  const env = { ...process.env, REPORT_YAML_LOADS: out, CONTRACT_SYNC_LOG_LEVEL: 'warn' };
  const run = await exec(process.execPath, argv, { cwd: ROOT, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
  const yaml = (await readFile(out, 'utf8')).split('\n').filter((line) => line !== '');
  return { ...run, yaml };
}

describe('a pull-request plan loads the yaml package only for a file with a problem', () => {
  it('plans a valid config and a valid changed file without loading it', { timeout: 30_000 }, async () => {
    const { code, stdout, stderr, yaml } = await planPullRequest();

    expect(code).toBe(0);
    expect(stdout).toContain('Office cleaning');
    expect(stderr).not.toMatch(/error|warning/);
    expect(yaml).toEqual([]);
  });

  it('loads it for a config with a problem, which is reported at its exact position', { timeout: 30_000 }, async () => {
    const config = CONFIG.replace('https://cms.example.com', 'http://cms.example.com');

    const { code, stderr, yaml } = await planPullRequest({ 'contract-sync.yaml': config });

    expect(code).toBe(1);
    expect(stderr).toBe(
      `${path.relative(ROOT, path.join(repo.dir, 'contract-sync.yaml'))}:1:17  api.baseUrl  http:// is allowed only for loopback hosts; use https:// for cms.example.com\ninvalid config: no plan written\n`,
    );
    expect(yaml).not.toEqual([]);
  });

  it('loads it for a changed desired-state file with a problem, which is reported at its exact position', { timeout: 30_000 }, async () => {
    const { code, stderr, yaml } = await planPullRequest({ 'contracts/acme/a.yaml': CHANGED.replace('Id: 12', 'Id: twelve') });

    expect(code).toBe(1);
    expect(stderr).toContain('contracts/acme/a.yaml:6:15  Company[0].Id  expected an integer, got "twelve"\n1 error in the desired state: no plan written\n');
    expect(yaml).not.toEqual([]);
  });
});
