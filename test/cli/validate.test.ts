import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml, writeTree } from '../helpers/files.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEMO = path.join(ROOT, 'examples/demo-repo');

// Ten different mistakes, one per line, each with the position validate must report.
const MISTAKES = `tenant: acme
contracts:
  "7001":
    Name: 2027
    Nmae: Typo
    Area: 12a
    ValidFrom: 2027-01-01
    SupplierNoticePeriod: { Days: 30, Weeks: 2 }
    Company:
      - { RelationType: Client }
    Type:
      - { Lookup: ICT, IsDora: yes }
  "7002":
    ValidFrom: 2028-01-01T00:00:00Z
    ValidTo: 2027-01-01T00:00:00Z
  0815: { Name: leading zero }
  "4711": { Name: declared in facilities.yaml too }
`;

const EXPECTED = [
  'contracts/acme/mistakes.yaml:4:11  Name  expected a string, got 2027',
  'contracts/acme/mistakes.yaml:5:5  Nmae  unknown field "Nmae" (did you mean "Name"?)',
  'contracts/acme/mistakes.yaml:6:11  Area  expected an integer, got "12a"',
  'contracts/acme/mistakes.yaml:7:16  ValidFrom  expected an ISO 8601 date-time in UTC like 2027-01-01T00:00:00Z, got "2027-01-01" (a date without a time)',
  'contracts/acme/mistakes.yaml:8:39  SupplierNoticePeriod.Weeks  unknown field "Weeks"',
  'contracts/acme/mistakes.yaml:10:9  Company[0]  missing member field "Id": every Company member gives Id, RelationType (only nullable fields may be left out)',
  'contracts/acme/mistakes.yaml:12:32  Type[0].IsDora  expected true or false, got "yes"',
  'contracts/acme/mistakes.yaml:15:14  ValidTo  ValidTo 2027-01-01T00:00:00Z is before ValidFrom 2028-01-01T00:00:00Z',
  'contracts/acme/mistakes.yaml:16:3  contracts.815  ContractId 0815 is read by YAML as 815; quote it: "0815"',
  'contracts/acme/mistakes.yaml:17:3  contracts.4711  contract 4711 of tenant "acme" is already declared at contracts/acme/facilities.yaml:4:3',
  'contracts/globex/acme.yaml:1:9  tenant  this file may not declare tenant "acme": it is outside the tenant\'s paths (tenants.acme.paths in the config: contracts/acme/**)',
];

describe('contract-sync validate', () => {
  let broken: string;

  beforeAll(async () => {
    broken = await mkdtemp(path.join(tmpdir(), 'contract-sync-validate-'));
    await cp(DEMO, broken, { recursive: true });
    await writeFile(path.join(broken, 'contracts/acme/mistakes.yaml'), MISTAKES);
    await writeFile(path.join(broken, 'contracts/globex/acme.yaml'), 'tenant: acme\ncontracts: {}\n');
  });

  afterAll(() => rm(broken, { recursive: true, force: true }));

  it('passes the demo repository', async () => {
    const run = await runCli(['validate', '--repo', 'examples/demo-repo'], ROOT);

    expect(run).toEqual({ code: 0, stdout: '0 errors, 0 warnings; 4 valid contracts in 3 files\n', stderr: '' });
  });

  it('reports every mistake at once, each with its position', async () => {
    const run = await runCli(['validate', '--repo', broken], ROOT);

    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines.slice(0, -2)).toEqual(EXPECTED);
    expect(lines.at(-1)).toBe('11 errors, 0 warnings; 4 valid contracts in 5 files');
  });

  it('prints JSON', async () => {
    const run = await runCli(['validate', '--repo', broken, '--format', 'json'], ROOT);

    expect(run.code).toBe(1);
    const diagnostics = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(diagnostics).toHaveLength(11);
    expect(diagnostics.find((d) => d.field === 'Nmae')).toEqual({
      severity: 'error',
      code: 'schema',
      file: 'contracts/acme/mistakes.yaml',
      line: 5,
      column: 5,
      field: 'Nmae',
      message: 'unknown field "Nmae" (did you mean "Name"?)',
      tenant: 'acme',
      contractId: '7001',
    });
  });

  it('prints GitHub workflow annotations', async () => {
    const run = await runCli(['validate', '--repo', broken, '--format', 'github'], ROOT);

    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[4]).toBe('::error file=contracts/acme/mistakes.yaml,line=8,col=39,title=SupplierNoticePeriod.Weeks::unknown field "Weeks"');
    expect(lines[9]).toBe(
      '::error file=contracts/acme/mistakes.yaml,line=17,col=3,title=contracts.4711::contract 4711 of tenant "acme" is already declared at contracts/acme/facilities.yaml:4:3',
    );
  });

  it('reports config problems with the config file position', async () => {
    await writeFile(
      path.join(broken, 'bad-config.yaml'),
      'api: { baseUrl: http://cms.example.com }\nauth: { url: https://x.example, realm: r }\ntenants: {}\n',
    );

    const run = await runCli(['validate', '--repo', broken, '--config', path.join(broken, 'bad-config.yaml')], broken);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      [
        'bad-config.yaml:1:17  api.baseUrl  http:// is allowed only for loopback hosts; use https:// for cms.example.com',
        'bad-config.yaml:3:10  tenants  expected at least 1 key',
        '',
        '2 errors, 0 warnings in bad-config.yaml',
        '',
      ].join('\n'),
    );
  });

  it('counts the errors of a quoted ContractId of 20 digits, and not the contract as valid', async () => {
    const { dir, cleanup } = await writeTree({
      'contract-sync.yaml': configYaml(['acme']),
      'contracts/acme/long.yaml':
        'tenant: acme\ncontracts:\n  "12345678901234567890": { Name: 2 }\n  12345678901234567891: { Name: ok }\n  "4711": { Name: ok }\n',
    });

    const run = await runCli(['validate', '--repo', dir], ROOT).finally(cleanup);

    expect(run.code).toBe(1);
    expect(run.stdout.trim().split('\n')).toEqual([
      'contracts/acme/long.yaml:3:35  Name  expected a string, got 2',
      'contracts/acme/long.yaml:4:3  contracts.12345678901234567000  ContractId 12345678901234567891 is read by YAML as 12345678901234567000; quote it: "12345678901234567891"',
      '',
      '2 errors, 0 warnings; 1 valid contract in 1 file',
    ]);
  });

  it('says when the config is missing', async () => {
    const run = await runCli(['validate', '--repo', 'no-such-dir'], broken);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('no-such-dir/contract-sync.yaml:1:1  -  no such directory: no-such-dir');
  });

  it.each([
    [['validate', '--format', 'xml'], 'contract-sync validate: --format must be one of text, json, github; got "xml"; see contract-sync validate --help\n'],
    [['validate', '--nope'], 'contract-sync validate: unknown option --nope; see contract-sync validate --help\n'],
    [['validate', '--fromat', 'json'], 'contract-sync validate: unknown option --fromat (did you mean --format?); see contract-sync validate --help\n'],
    [['frobnicate'], 'contract-sync: unknown command "frobnicate"; see contract-sync --help\n'],
    [['valdiate'], 'contract-sync: unknown command "valdiate" (did you mean validate?); see contract-sync --help\n'],
  ])('refuses bad usage %j with exit 1', async (args, stderr) => {
    const run = await runCli(args, ROOT);

    expect(run).toEqual({ code: 1, stdout: '', stderr: typeof stderr === 'string' ? stderr : expect.stringMatching(stderr) });
  });
});

describe('contract-sync validate --ref', () => {
  let repo: TestRepo;
  let brokenCommit: string;

  beforeAll(async () => {
    repo = await createRepo();
    await cp(DEMO, repo.dir, { recursive: true });
    await repo.commit('demo');
    await repo.git('checkout', '-q', '-b', 'broken');
    brokenCommit = await repo.commit('mistakes', { 'contracts/acme/mistakes.yaml': MISTAKES, 'contracts/globex/acme.yaml': 'tenant: acme\ncontracts: {}\n' });
    await repo.git('checkout', '-q', 'main');
  });

  afterAll(() => repo.cleanup());

  it('reports the mistakes of a ref with their positions, while the working tree is valid', async () => {
    const atRef = await runCli(['validate', '--ref', 'broken'], repo.dir);
    const tree = await runCli(['validate'], repo.dir);

    expect(atRef.code).toBe(1);
    const lines = atRef.stdout.trim().split('\n');
    expect(lines.slice(0, -2)).toEqual(EXPECTED);
    expect(lines.at(-1)).toBe(`11 errors, 0 warnings; 4 valid contracts in 5 files at broken (${brokenCommit.slice(0, 7)})`);
    expect(tree).toEqual({ code: 0, stdout: '0 errors, 0 warnings; 4 valid contracts in 3 files\n', stderr: '' });
  });

  it('prints GitHub annotations at the positions of the files at the ref', async () => {
    const run = await runCli(['validate', '--ref', brokenCommit, '--format', 'github'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[4]).toBe('::error file=contracts/acme/mistakes.yaml,line=8,col=39,title=SupplierNoticePeriod.Weeks::unknown field "Weeks"');
  });

  it('a ref this clone does not have: exit 1, naming it', async () => {
    const run = await runCli(['validate', '--ref', 'origin/main'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^contract-sync validate: cannot resolve --ref "origin\/main": no such branch, tag or commit in this clone\. Fetch it first/);
  });
});

describe('the contract-sync binary', () => {
  const exec = promisify(execFile);
  const bin = path.join(ROOT, 'bin/contract-sync-dev.js');

  it('prints its version and help without a build step', async () => {
    const version = await exec(process.execPath, [bin, '--version']);
    const help = await exec(process.execPath, [bin, '--help']);

    expect(version.stdout).toBe(`${packageJson.version}\n`);
    expect(help.stdout).toContain('Usage: contract-sync <command> [options]');
    expect(help.stdout).toMatch(/validate +check the config and desired-state files/);
  });

  it('exits 1 on invalid desired state', async () => {
    const failure = await exec(process.execPath, [bin, 'validate', '--repo', DEMO, '--config', path.join(ROOT, 'package.json')]).catch(
      (error: { code: number; stdout: string }) => error,
    );

    expect('code' in failure && failure.code).toBe(1);
  });
});
