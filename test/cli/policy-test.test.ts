import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PACK = path.join(ROOT, 'examples/policies');

const FAILING = `cases:
  - name: expects a deny the rule does not give
    contract: { Name: x }
    expect:
      - { policy: dora-needs-responsible-owner, action: deny }
  - name: finds a deny it does not expect
    contract:
      ValidFrom: 2027-01-01T00:00:00Z
      ValidTo: 2026-01-01T00:00:00Z
    expect: []
`;

describe('contract-sync policy test', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-policy-test-'));
    await cp(PACK, dir, { recursive: true });
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('passes the DORA pack of examples/policies', async () => {
    const run = await runCli(['policy', 'test', '--chdir', 'examples/policies'], ROOT);

    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^PASS {2}policy-tests\/dora\.yaml:3 {2}a DORA contract with a Responsible owner and its EBA code passes$/m);
    expect(run.stdout.endsWith('\n12 cases: 12 passed, 0 failed\n')).toBe(true);
    expect(run.code).toBe(0);
  });

  it('exits 1 on a mismatch, showing what was expected and not found and what was found and not expected, and writes JUnit XML', async () => {
    await writeFile(path.join(dir, 'policy-tests/failing.yaml'), FAILING);

    const run = await runCli(['policy', 'test', '--junit', 'report.xml'], dir);
    const junit = await readFile(path.join(dir, 'report.xml'), 'utf8');

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      [
        'FAIL  policy-tests/failing.yaml:2  expects a deny the rule does not give',
        '        expected, not found  dora-needs-responsible-owner deny',
        'FAIL  policy-tests/failing.yaml:6  finds a deny it does not expect',
        '        found, not expected  valid-to-not-before-valid-from deny: ValidTo 2026-01-01T00:00:00Z is before ValidFrom 2027-01-01T00:00:00Z',
        '',
        '14 cases: 12 passed, 2 failed',
        '',
      ].join('\n'),
    );
    expect(junit).toContain('<testsuites name="contract-sync policy test" tests="14" failures="2" errors="0">');
    expect(junit).toContain('<testsuite name="policy-tests/failing.yaml" tests="2" failures="2" errors="0">');
    expect(junit).toContain(
      '<testcase name="expects a deny the rule does not give" classname="policy-tests/failing.yaml" file="policy-tests/failing.yaml" line="2">\n      <failure message="1 finding differ">expected, not found  dora-needs-responsible-owner deny</failure>',
    );
    expect(junit).toContain(
      '<testcase name="a DORA contract without a Responsible owner is denied" classname="policy-tests/dora.yaml" file="policy-tests/dora.yaml" line="14"/>',
    );
    await rm(path.join(dir, 'policy-tests/failing.yaml'));
  });

  it('reports a case file with a contract field the table does not have at its line, and runs none of its cases', async () => {
    await writeFile(path.join(dir, 'policy-tests/typo.yaml'), 'cases:\n  - name: typo\n    contract: { Nmae: x }\n    expect: []\n');

    const run = await runCli(['policy', 'test'], dir);

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe('policy-tests/typo.yaml:3:17  cases[0].contract.Nmae  unknown field "Nmae"');
    expect(run.stdout).toContain('12 cases: 12 passed, 0 failed; 1 problem in case files\n');
    await rm(path.join(dir, 'policy-tests/typo.yaml'));
  });

  it('refuses a config without rules, a missing directory and a subcommand it does not know', async () => {
    const noRules = await runCli(['policy', 'test', '--repo', 'examples/demo-repo', 'examples/policies/policy-tests'], ROOT);
    const noDir = await runCli(['policy', 'test', 'nowhere'], dir);
    const unknown = await runCli(['policy', 'tset'], dir);

    expect(noRules).toEqual({ code: 1, stdout: '', stderr: 'contract-sync policy test: examples/demo-repo/contract-sync.yaml has no policies: to test\n' });
    expect(noDir).toEqual({ code: 1, stdout: '', stderr: 'contract-sync policy test: nowhere: no such directory\n' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('contract-sync policy: unknown subcommand "tset" (policy has: test); see contract-sync policy --help\n');
  });
});
