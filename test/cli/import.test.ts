/** `contract-sync import` in-process against the emulator over real HTTP, in real temporary git repositories. */
import { execFileSync } from 'node:child_process';
import { lstat, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ContractFields } from '../../engine/model/types.ts';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { requestLog } from '../helpers/fleet.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

const SECRETS = { ACME_SECRET: 'throwaway-secret-acme-0123456789', GLOBEX_SECRET: 'throwaway-secret-globex-0123456789' };

/** Every field kind, YAML-special text, nulls where the model allows them. */
const EVERY_KIND: ContractFields = {
  AnnualExpensesAmount: 48000.5,
  AnnualExpensesCurrencyId: 978,
  Area: 2,
  Category: 4,
  Comment: 'yes',
  Description: 'null',
  DescriptionSLAConditions: 'Incidents before 14:00 are handled the same day.\nPenalty: 2 % per # missed incident.\n',
  Evaluation: '#',
  Signature: ': ',
  Name: 'Facility cleaning 2027',
  ShortSLAConditions: 'on',
  ValidFrom: '2027-01-01T00:00:00Z',
  ValidTo: '2027-12-31T23:59:59.5Z',
  OrderingPartyNoticePeriod: { Days: 90, Hours: null, Minutes: null },
  SupplierNoticePeriod: { Days: null, Hours: 12, Milliseconds: 250 },
  Company: [
    { Id: 12, RelationType: 'Supplier' },
    { Id: 1, RelationType: 'Client' },
  ],
  OrganizationalUnit: [{ Id: 3, Name: 'Facility Management' }, { Id: 4 }],
  Owner: [
    {
      OwnerType: { Name: 'Responsible', Value: 1 },
      User: { Id: 501, Name: 'Dana Berg', Email: 'dana.berg@acme.example', OrganizationalUnit: { Id: 3, Name: 'Facility Management' } },
    },
    { OwnerType: { Value: 2 }, User: { Id: 502 } },
  ],
  Type: [
    { Lookup: 'Service', EbaCode: null, IsDora: false },
    { Lookup: 'ICT', EbaCode: 'S05', IsDora: true },
  ],
};

const MANAGED: ContractFields = { Name: 'Cloud hosting', Area: 2 };

const SEED: Seed = {
  realm: 'cms',
  tokenTtlSeconds: 3600,
  rateLimit: { requestsPerSecond: 10_000, burst: 10_000 },
  tenants: {
    acme: {
      clients: [{ clientId: 'cs-acme', secret: SECRETS.ACME_SECRET, scopes: ['core:read', 'core:write'] }],
      contracts: {
        '4711': EVERY_KIND,
        '0815': { Name: 'no', Company: [], SupplierNoticePeriod: { Days: null } },
        'G-100': { Name: 'Office lease', ValidFrom: '2026-01-01T00:00:00Z' },
        '5001': MANAGED,
        // The service holds what a desired-state file may not say.
        'BAD-1': { Name: 'Backwards', ValidFrom: '2027-01-01T00:00:00Z', ValidTo: '2026-01-01T00:00:00Z' },
      },
    },
    // A client that may only read: import asks for core:read alone.
    globex: {
      clients: [{ clientId: 'cs-globex', secret: SECRETS.GLOBEX_SECRET, scopes: ['core:read'] }],
      contracts: { '9': { Name: 'Lease' } },
    },
  },
};

function configYaml(emulator: Emulator, read = true): string {
  return [
    `api: { baseUrl: "${emulator.urls.baseUrl}"${read ? ', read: { path: "/contract/{id}" }' : ''} }`,
    `auth: { url: "${emulator.urls.authUrl}", realm: ${emulator.urls.realm} }`,
    'tenants:',
    '  acme: { clientId: cs-acme, clientSecret: { env: ACME_SECRET }, paths: ["contracts/acme/**"] }',
    '  globex: { clientId: cs-globex, clientSecret: { env: GLOBEX_SECRET } }',
    'rate: { requestsPerSecond: 2000, concurrency: 4, maxInFlight: 8 }',
    '',
  ].join('\n');
}

const MANAGED_FILE = 'tenant: acme\ncontracts:\n  # brought under management by hand\n  "5001": { Name: Cloud hosting, Area: 2 }\n';

let emulator: Emulator | undefined;
const repos: TestRepo[] = [];

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  for (const repo of repos.splice(0)) await repo.cleanup();
});

async function setup(options: { read?: boolean } = {}): Promise<TestRepo> {
  emulator = await startEmulator(SEED);
  const repo = await createRepo({ 'contract-sync.yaml': configYaml(emulator, options.read ?? true), 'contracts/acme/managed.yaml': MANAGED_FILE });
  repos.push(repo);
  return repo;
}

async function apiRequests(): Promise<{ method: string; path: string }[]> {
  return (await requestLog(emulator!)).filter((entry) => entry.kind === 'api');
}

function expectNoSecret(...outputs: string[]): void {
  for (const output of outputs) for (const secret of Object.values(SECRETS)) expect(output).not.toContain(secret);
}

async function exists(file: string): Promise<boolean> {
  return readFile(file).then(
    () => true,
    () => false,
  );
}

describe('contract-sync import', () => {
  it('records what it read in the state store, so that the next plan from the state store has no op for the imported contracts', async () => {
    const repo = await setup();
    const env = { ...SECRETS, PATH: process.env.PATH ?? '' };
    const before = await runCli(['plan', '--no-refresh', '--format', 'json', '--tenant', 'acme'], repo.dir, env);

    const imported = await runCli(['import', '--tenant', 'acme', '--id', '4711', '--id', '0815', '--out', 'contracts/acme/imported.yaml'], repo.dir, env);
    await repo.commit('import');
    const record = await runCli(['state', 'show', 'acme', '4711', '--format', 'json'], repo.dir, env);

    expect(before.code, before.stderr).toBe(0);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).not.toContain('not recorded');
    const planned = await runCli(['plan', '--no-refresh', '--format', 'json', '--tenant', 'acme'], repo.dir, env);
    const contracts = (JSON.parse(planned.stdout) as { tenants: { contracts: { id: string; action: string; knownFrom: string }[] }[] }).tenants.flatMap(
      (tenant) => tenant.contracts,
    );
    expect(contracts.filter((contract) => ['4711', '0815'].includes(contract.id)).map(({ id, action, knownFrom }) => [id, action, knownFrom])).toEqual([
      ['4711', 'noop', 'state'],
      ['0815', 'noop', 'state'],
    ]);
    expect(record.code, record.stderr).toBe(0);
    expect(JSON.parse(record.stdout)).toMatchObject({ tenant: 'acme', contractId: '4711', commit: null });
  });

  it('writes a file that validates, plans to no op and makes apply send no PATCH', async () => {
    const repo = await setup();
    const env = { ...SECRETS, PATH: process.env.PATH ?? '' };

    const imported = await runCli(
      ['import', '--tenant', 'acme', '--id', '4711', '--id', '0815', '--id', 'G-100', '--out', 'contracts/acme/imported.yaml'],
      repo.dir,
      env,
    );
    await repo.commit('import');
    const validate = await runCli(['validate'], repo.dir, env);
    const dryRun = await runCli(['apply', '--dry-run', '--report', 'dry-run.json'], repo.dir, env);
    const apply = await runCli(['apply', '--ref', 'HEAD'], repo.dir, env);

    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe('Imported 3 contracts of tenant acme into contracts/acme/imported.yaml.\n');
    const text = await readFile(path.join(repo.dir, 'contracts/acme/imported.yaml'), 'utf8');
    const [schemaLine, ...rest] = text.split('\n');
    expect(rest.slice(0, 3)).toEqual(['tenant: acme', 'contracts:', '  "4711":']);
    // A relative path from the file to the specs/ of the contract-sync that ran (here: these sources), as init writes it.
    expect(schemaLine).toMatch(/^# yaml-language-server: \$schema=\.\.\/\S+\/specs\/contracts\.schema\.json$/);
    expect(path.resolve(repo.dir, 'contracts/acme', schemaLine!.replace(/^.*\$schema=/, ''))).toBe(path.join(ROOT, 'specs/contracts.schema.json'));
    expect(Object.keys(parse(text).contracts)).toEqual(['4711', '0815', 'G-100']);
    // The service holds a unit without Name and an owner type without Name: a desired member must
    // give both, so these collections are left unmanaged (and said so) rather than written incomplete.
    expect(Object.keys(parse(text).contracts['4711'])).not.toContain('OrganizationalUnit');
    expect(Object.keys(parse(text).contracts['4711'])).not.toContain('Owner');
    expect(imported.stderr).toContain(
      'contract-sync import: note: contract 4711: OrganizationalUnit has members without OrganizationalUnit[1].Name in the service; left unmanaged',
    );
    expect(imported.stderr).toContain(
      'contract-sync import: note: contract 4711: Owner has members without Owner[1].OwnerType.Name in the service; left unmanaged',
    );
    expect(validate.code, validate.stdout).toBe(0);
    expect(validate.stdout).toContain('0 errors, 0 warnings; 4 valid contracts in 2 files');
    expect(dryRun.code, dryRun.stderr).toBe(0);
    const report = JSON.parse(await readFile(path.join(repo.dir, 'dry-run.json'), 'utf8'));
    // Four live reads (the three imported contracts and 5001), no op.
    expect(report.summary).toMatchObject({ changed: 0, ops: 0, failed: 0, requests: 4 });
    expect(dryRun.stdout).toContain('Dry run: nothing to do; every contract planned already matches its desired state');
    expect(apply.code, apply.stderr).toBe(0);
    expect((await apiRequests()).filter((entry) => entry.method === 'PATCH')).toEqual([]);
    expectNoSecret(imported.stdout, imported.stderr, dryRun.stdout, dryRun.stderr, text);
  });

  it('prints the file on stdout without --out, asking only for core:read', async () => {
    const repo = await setup();

    const run = await runCli(['import', '--tenant', 'globex', '--id', '9'], repo.dir, SECRETS);

    expect(run.code, run.stderr).toBe(0);
    expect(parse(run.stdout)).toEqual({ tenant: 'globex', contracts: { '9': { Name: 'Lease' } } });
    expect(await repo.git('status', '--porcelain')).toBe('');
    expect(await apiRequests()).toEqual([expect.objectContaining({ method: 'GET', path: '/contract/9', status: 200 })]);
  });

  it('writes nothing and names the id and status when a contract cannot be read', async () => {
    const repo = await setup();

    const run = await runCli(['import', '--tenant', 'acme', '--id', '4711', '--id', 'nope-404', '--out', 'contracts/acme/imported.yaml'], repo.dir, SECRETS);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /could not read 1 of 2 contracts of tenant "acme" \(1 contract not on the service\):\n {2}nope-404: not on the service \(its read was answered 404\)/,
    );
    expect(run.stderr).toContain('nothing written');
    // The reads' progress, on stderr (stdout may carry the file): without a terminal, plain lines at the quarters.
    expect(run.stderr).toMatch(/^contract-sync import: reading 1\/2 contracts \(50%\), [\d.]+\/s, about \d+s left, \d failed$/m);
    expect(run.stderr).toMatch(/^contract-sync import: reading 2\/2 contracts \(100%\), [\d.]+\/s, done in \d+s, 1 failed$/m);
    expect(await exists(path.join(repo.dir, 'contracts/acme/imported.yaml'))).toBe(false);
    expect(run.stdout).toBe('');
    expectNoSecret(run.stdout, run.stderr);
  });

  it('writes nothing when the contracts as read would not validate', async () => {
    const repo = await setup();

    const run = await runCli(['import', '--tenant', 'acme', '--id', 'G-100', '--id', 'BAD-1', '--out', 'contracts/acme/imported.yaml'], repo.dir, SECRETS);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/contracts\/acme\/imported\.yaml:\d+:\d+.*ValidTo 2026-01-01T00:00:00Z is before ValidFrom/);
    expect(run.stderr).toContain('do not make a desired-state file that validates and plans to no op; nothing written');
    expect(await exists(path.join(repo.dir, 'contracts/acme/imported.yaml'))).toBe(false);
  });

  it('refuses to overwrite an existing file unless --force, before any request', async () => {
    const repo = await setup();
    const file = path.join(repo.dir, 'contracts/acme/imported.yaml');
    await writeFile(file, 'tenant: acme\ncontracts: {}\n');

    const refused = await runCli(['import', '--tenant', 'acme', '--id', 'G-100', '--out', 'contracts/acme/imported.yaml'], repo.dir, SECRETS);
    const requestsAfterRefusal = await apiRequests();
    const forced = await runCli(['import', '--tenant', 'acme', '--id', 'G-100', '--out', 'contracts/acme/imported.yaml', '--force'], repo.dir, SECRETS);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('contracts/acme/imported.yaml exists; pass --force to overwrite it');
    expect(requestsAfterRefusal).toEqual([]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(parse(await readFile(file, 'utf8')).contracts).toEqual({ 'G-100': { Name: 'Office lease', ValidFrom: '2026-01-01T00:00:00Z' } });
  });

  it('refuses a FIFO or a symbolic link as --out even with --force, before any request (issue 21, item 4)', async () => {
    const repo = await setup();
    execFileSync('mkfifo', [path.join(repo.dir, 'contracts/acme/fifo.yaml')]);
    await symlink('/dev/null', path.join(repo.dir, 'contracts/acme/null.yaml'));

    for (const name of ['fifo.yaml', 'null.yaml']) {
      const refused = await runCli(['import', '--tenant', 'acme', '--id', 'G-100', '--out', `contracts/acme/${name}`, '--force'], repo.dir, SECRETS);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`contracts/acme/${name} is not a regular file (a symbolic link, a device or a FIFO); --out writes regular files only`);
    }
    expect(await apiRequests()).toEqual([]);
    expect((await lstat(path.join(repo.dir, 'contracts/acme/fifo.yaml'))).isFIFO()).toBe(true);
  }, 20_000);

  it('refuses a contract the repository already declares, naming where; re-importing that file with --force replaces it', async () => {
    const repo = await setup();

    const refused = await runCli(['import', '--tenant', 'acme', '--id', '5001', '--out', 'contracts/acme/imported.yaml', '--force'], repo.dir, SECRETS);
    const reimported = await runCli(['import', '--tenant', 'acme', '--id', '5001', '--out', 'contracts/acme/managed.yaml', '--force'], repo.dir, SECRETS);
    const validate = await runCli(['validate'], repo.dir, SECRETS);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'contract 5001 of tenant "acme" is already declared at contracts/acme/managed.yaml:4; importing it into contracts/acme/imported.yaml would declare it twice; edit it there, or re-import that file with --out contracts/acme/managed.yaml --force',
    );
    expect(await exists(path.join(repo.dir, 'contracts/acme/imported.yaml'))).toBe(false);
    expect(reimported.code, reimported.stderr).toBe(0);
    expect(validate.code, validate.stdout).toBe(0);
  });

  it('warns when desired.paths would not pick the file up, and writes it', async () => {
    const repo = await setup();

    const run = await runCli(['import', '--tenant', 'acme', '--id', 'G-100', '--out', 'drafts/acme.yml'], repo.dir, SECRETS);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('warning: drafts/acme.yml is not matched by desired.paths (contracts/**/*.yaml): validate, plan and apply will not read it');
    expect(parse(await readFile(path.join(repo.dir, 'drafts/acme.yml'), 'utf8')).tenant).toBe('acme');
  });

  it("refuses a file outside the tenant's paths, which validate would refuse", async () => {
    const repo = await setup();

    const run = await runCli(['import', '--tenant', 'acme', '--id', 'G-100', '--out', 'contracts/globex/acme.yaml'], repo.dir, SECRETS);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('contracts/globex/acme.yaml may not declare tenant "acme": it is outside the tenant\'s paths (contracts/acme/**)');
    expect(await apiRequests()).toEqual([]);
  });

  it('stops before any read when the secret is refused, without printing it', async () => {
    const repo = await setup();
    const wrong = 'not-the-right-secret-42';

    const run = await runCli(['import', '--tenant', 'acme', '--id', '4711'], repo.dir, { ...SECRETS, ACME_SECRET: wrong });

    expect(run.code).toBe(1);
    // The tenant is named once (the auth error names it already), not `tenant "acme": tenant acme: ...`.
    expect(run.stderr).toMatch(/^contract-sync import: tenant acme: the token endpoint rejected client cs-acme \(invalid_client\).*; nothing imported$/m);
    expect(run.stderr).not.toMatch(/tenant "?acme"?: tenant acme/);
    expect(await apiRequests()).toEqual([]);
    expectNoSecret(run.stdout, run.stderr);
    expect(run.stdout + run.stderr).not.toContain(wrong);
  });

  it('exits 1 explaining that import needs api.read, before any request', async () => {
    const repo = await setup({ read: false });

    const run = await runCli(['import', '--tenant', 'acme', '--id', '4711'], repo.dir, SECRETS);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/import reads contracts live and needs reads: configure api\.read in contract-sync\.yaml/);
    expect(await requestLog(emulator!)).toEqual([]);
  });

  it.each([
    [['import', '--tenant', 'acme'], /give at least one --id: the service publishes no way to list contracts/],
    [['import', '--id', '4711'], /--tenant is required/],
    [['import', '--tenant', 'acme', '--tenant', 'globex', '--id', '4711'], /give --tenant once; got acme, globex/],
    [['import', '--tenant', 'nobody', '--id', '4711'], /--tenant "nobody" is not configured \(known: acme, globex\)/],
    [
      ['import', '--tenant', 'acme', '--id', ' 4711'],
      /--id " 4711" is not a ContractId \(a ContractId is non-empty, at most 256 characters, without control, invisible or bidirectional characters or leading or trailing white space\)/,
    ],
    [['import', '--tenant', 'acme', '--id', '4711', 'extra'], /unexpected argument "extra"/],
  ])('refuses %j', async (args, message) => {
    const repo = await setup();

    const run = await runCli(args, repo.dir, SECRETS);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await requestLog(emulator!)).toEqual([]);
  });
});
