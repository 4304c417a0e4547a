import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEMO = path.join(ROOT, 'examples/demo-repo');
const PACK = path.join(ROOT, 'examples/policies/contract-sync.yaml');

// Two DORA contracts: 9001 breaks two rules; 9002 breaks one that an exception covers until 2999.
const DORA = `tenant: acme
contracts:
  "9001":
    Name: Core banking outsourcing
    Type:
      - { Lookup: ICT, EbaCode: null, IsDora: true }
  "9002":
    Name: Card processing
    Owner:
      - OwnerType: { Name: Responsible, Value: 1 }
        User: { Id: 7 }
    Type:
      - { Lookup: Payments, IsDora: true }
`;

async function withPack(dir: string, exceptionsExpire: string): Promise<void> {
  const demo = await readFile(path.join(DEMO, 'contract-sync.yaml'), 'utf8');
  const pack = await readFile(PACK, 'utf8');
  const rules = pack.slice(pack.indexOf('\npolicies:') + 1).replace('expires: 2999-01-01', `expires: ${exceptionsExpire}`);
  await writeFile(path.join(dir, 'contract-sync.yaml'), `${demo}${rules}`);
}

describe('contract-sync validate with policies', () => {
  let repo: string;

  beforeAll(async () => {
    repo = await mkdtemp(path.join(tmpdir(), 'contract-sync-validate-policies-'));
    await cp(DEMO, repo, { recursive: true });
    await writeFile(path.join(repo, 'contracts/acme/dora.yaml'), DORA);
  });

  afterAll(() => rm(repo, { recursive: true, force: true }));

  it('prints each finding at its contract with the rule name, exits 1 on a deny, and shows the excepted one', async () => {
    await withPack(repo, '2999-01-01');

    const run = await runCli(['validate', '--repo', repo], ROOT);

    expect(run.stdout.split('\n')).toEqual([
      'contracts/acme/dora.yaml:3:3  policy dora-needs-responsible-owner  denied: DORA contract 9001 has no Responsible owner',
      'contracts/acme/dora.yaml:3:3  policy dora-types-need-eba-code  denied: DORA types without an EbaCode: ICT',
      'contracts/acme/dora.yaml:7:3  policy dora-types-need-eba-code  warning: denied: DORA types without an EbaCode: Payments (excepted until 2999-01-01: the EBA code of this type is being assigned; jane@example.com, CMS-123)',
      '',
      '2 errors, 1 warning (policies: 2 denied, 1 excepted); 6 valid contracts in 4 files',
      '',
    ]);
    expect(run.code).toBe(1);
  });

  it('counts an expired exception: the finding fails the run again', async () => {
    await withPack(repo, '2020-01-01');

    const run = await runCli(['validate', '--repo', repo], ROOT);

    expect(run.stdout).toContain(
      'contracts/acme/dora.yaml:7:3  policy dora-types-need-eba-code  denied: DORA types without an EbaCode: Payments (exception expired on 2020-01-01, the finding counts: the EBA code of this type is being assigned; jane@example.com, CMS-123)\n',
    );
    expect(run.stdout).toContain('3 errors, 0 warnings (policies: 3 denied); 6 valid contracts in 4 files');
    expect(run.code).toBe(1);
  });

  it('annotates the contract in --format github and lists findings in --format json', async () => {
    await withPack(repo, '2999-01-01');

    const github = await runCli(['validate', '--repo', repo, '--format', 'github'], ROOT);
    const json = await runCli(['validate', '--repo', repo, '--format', 'json'], ROOT);

    expect(github.stdout.split('\n')[0]).toBe(
      '::error file=contracts/acme/dora.yaml,line=3,col=3,title=policy dora-needs-responsible-owner::denied: DORA contract 9001 has no Responsible owner',
    );
    expect(JSON.parse(json.stdout)[0]).toEqual({
      severity: 'error',
      code: 'policy-deny',
      file: 'contracts/acme/dora.yaml',
      line: 3,
      column: 3,
      field: 'policy dora-needs-responsible-owner',
      message: 'denied: DORA contract 9001 has no Responsible owner',
      tenant: 'acme',
      contractId: '9001',
    });
    expect(json.code).toBe(1);
  });

  it('shows a warn finding and exits 0', async () => {
    const demo = await readFile(path.join(DEMO, 'contract-sync.yaml'), 'utf8');
    await writeFile(
      path.join(repo, 'contract-sync.yaml'),
      `${demo}policies:
  - name: name-says-the-year
    on: contract
    validations:
      - expression: object.Name.matches("20[0-9][0-9]")
        message: a contract name says its year
    action: warn
`,
    );

    const run = await runCli(['validate', '--repo', repo], ROOT);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('contracts/acme/it.yaml:4:3  policy name-says-the-year  warning: a contract name says its year\n');
    expect(run.stdout).toContain('0 errors, 5 warnings (policies: 5 warned); 6 valid contracts in 4 files');
  });

  it('refuses a config whose rule does not compile, at the expression position, before reading any contract', async () => {
    const demo = await readFile(path.join(DEMO, 'contract-sync.yaml'), 'utf8');
    await writeFile(
      path.join(repo, 'contract-sync.yaml'),
      `${demo}policies:
  - name: typo
    on: contract
    validations:
      - expression: has(object.Nmae)
    action: deny
`,
    );

    const run = await runCli(['validate', '--repo', repo], ROOT);

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toMatch(
      /contract-sync\.yaml:27:32 {2}policies\[0\]\.validations\[0\]\.expression {2}policy "typo": the contract has no field "Nmae" \(did you mean "Name"\?\)$/,
    );
  });
});
