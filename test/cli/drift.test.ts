/** `contract-sync drift` in-process against the emulator, over a real git repository and the file state store. */
import packageJson from '../../package.json' with { type: 'json' };
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { liveContract, requestLog } from '../helpers/fleet.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

const ENV = { SECRET_ACME: 'throwaway-secret-acme-0123456789', SECRET_GLOBEX: 'throwaway-secret-globex-0123456789' };

const SUPPLIER = { Id: 12, RelationType: 'Supplier' };

const ACME_YAML = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
    SupplierNoticePeriod: { Days: 30 }
    Company:
      - { Id: 12, RelationType: Supplier }
  "4712":
    Name: Catering
`;

const GLOBEX_YAML = `tenant: globex
contracts:
  "9001":
    Name: Office lease
`;

/** What the service holds before the first apply: every desired contract, with older values; 4713 is not managed yet. */
const LIVE: Readonly<Record<string, Record<string, ContractFields>>> = {
  acme: {
    '4711': { Name: 'Cleaning', Company: [SUPPLIER, { Id: 30, RelationType: 'Customer' }] },
    '4712': { Name: 'Catering (old)', Area: 3 },
    '4713': { Name: 'Security' },
  },
  globex: { '9001': { Name: 'Lease' } },
};

function seed(contracts: Readonly<Record<string, Record<string, ContractFields>>> = LIVE): Seed {
  return {
    realm: 'cms',
    tokenTtlSeconds: 3600,
    rateLimit: { requestsPerSecond: 10_000, burst: 10_000 },
    tenants: {
      acme: { clients: [{ clientId: 'cs-acme', secret: ENV.SECRET_ACME, scopes: ['core:read', 'core:write'] }], contracts: contracts.acme ?? {} },
      globex: { clients: [{ clientId: 'cs-globex', secret: ENV.SECRET_GLOBEX, scopes: ['core:read', 'core:write'] }], contracts: contracts.globex ?? {} },
    },
  };
}

function configYaml(service: Emulator, read: boolean): string {
  return [
    `api: { baseUrl: "${service.urls.baseUrl}"${read ? ', read: { path: "/contract/{id}" }' : ''} }`,
    `auth: { url: "${service.urls.authUrl}", realm: ${service.urls.realm} }`,
    'tenants:',
    '  acme: { clientId: cs-acme, clientSecret: { env: SECRET_ACME } }',
    '  globex: { clientId: cs-globex, clientSecret: { env: SECRET_GLOBEX } }',
    'rate: { requestsPerSecond: 2000, concurrency: 4, maxInFlight: 16 }',
    '',
  ].join('\n');
}

async function setup(
  options: { read?: boolean; live?: Readonly<Record<string, Record<string, ContractFields>>> } = {},
): Promise<{ repo: TestRepo; service: Emulator }> {
  const service = await startEmulator(seed(options.live));
  emulator = service;
  const repo = await createRepo({
    'contract-sync.yaml': configYaml(service, options.read ?? true),
    'contracts/acme.yaml': ACME_YAML,
    'contracts/globex.yaml': GLOBEX_YAML,
    '.gitignore': '.contract-sync/\n',
  });
  cleanups.push(repo.cleanup);
  return { repo, service };
}

async function putLive(service: Emulator, tenant: string, id: string, fields: ContractFields): Promise<void> {
  const response = await fetch(`${service.urls.adminUrl}/contracts/${tenant}/${id}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(fields),
  });
  expect(response.ok).toBe(true);
}

async function patchesSince(service: Emulator, from: number): Promise<string[]> {
  return (await requestLog(service))
    .slice(from)
    .filter((entry) => entry.kind === 'api' && entry.method === 'PATCH')
    .map((entry) => `${entry.tenant} ${entry.path}`);
}

/** The drifted lines of a text report: the indented field lines. */
function driftLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line.startsWith('      '));
}

describe('contract-sync drift', () => {
  it('reports a field changed out of band, exits 2 with --detailed-exitcode, and --fix corrects it with one PATCH', async () => {
    const { repo, service } = await setup();
    const applied = await runCli(['apply'], repo.dir, ENV);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    await putLive(service, 'acme', '4711', { ...(await liveContract(service, 'acme', '4711')), Name: 'Cleaning (edited by hand)' });
    const before = (await requestLog(service)).length;

    const found = await runCli(['drift'], repo.dir, ENV);
    const detailed = await runCli(['drift', '--detailed-exitcode'], repo.dir, ENV);
    const readsOnly = await patchesSince(service, before);
    const beforeFix = (await requestLog(service)).length;
    const fixed = await runCli(['drift', '--fix'], repo.dir, ENV);
    const fixPatches = await patchesSince(service, beforeFix);
    const after = await runCli(['drift', '--detailed-exitcode'], repo.dir, ENV);

    expect(found.code, found.stderr).toBe(0);
    expect(driftLines(found.stdout)).toEqual(['      Name: "Cleaning (edited by hand)" -> "Facility cleaning"  (changed outside git)']);
    expect(found.stdout).toContain('  ~ 4711  contracts/acme.yaml:3  (1 op to fix)\n');
    expect(found.stdout).toContain('1 contract drifted (1 difference): 1 changed outside git, 0 not yet applied.');
    expect(detailed.code).toBe(2);
    expect(readsOnly).toEqual([]);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain('[fixed]');
    expect(fixed.stdout).toContain('Apply: 1 contract changed, 1 op, ');
    expect(fixPatches).toEqual(['acme /contract/4711']);
    expect(await liveContract(service, 'acme', '4711')).toEqual({
      Name: 'Facility cleaning',
      SupplierNoticePeriod: expect.objectContaining({ Days: 30 }),
      Company: [SUPPLIER],
    });
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).toContain('No drift: all 3 contracts match the desired state.');
  });

  it('calls a desired edit not applied yet "not yet applied", and a contract never applied "never applied"', async () => {
    const { repo } = await setup();
    expect((await runCli(['apply'], repo.dir, ENV)).code).toBe(0);
    await repo.write({ 'contracts/acme.yaml': `${ACME_YAML.replace('Name: Catering', 'Name: Catering 2028')}  "4713":\n    Name: Security services\n` });

    const run = await runCli(['drift', '--detailed-exitcode'], repo.dir, ENV);

    expect(run.code, run.stderr).toBe(2);
    expect(driftLines(run.stdout)).toEqual([
      '      Name: "Catering" -> "Catering 2028"  (not yet applied)',
      '      Name: "Security" -> "Security services"  (never applied)',
    ]);
    expect(run.stdout).toContain('2 contracts drifted (2 differences): 0 changed outside git, 1 not yet applied, 1 never applied.');
  });

  it('reports a collection member added out of band (authoritative) and --fix removes it', async () => {
    const { repo, service } = await setup();
    expect((await runCli(['apply'], repo.dir, ENV)).code).toBe(0);
    const partner = { Id: 77, RelationType: 'Partner' };
    await putLive(service, 'acme', '4711', { ...(await liveContract(service, 'acme', '4711')), Company: [SUPPLIER, partner] });

    const found = await runCli(['drift'], repo.dir, ENV);
    const before = (await requestLog(service)).length;
    const fixed = await runCli(['drift', '--fix', '--detailed-exitcode'], repo.dir, ENV);

    expect(driftLines(found.stdout)).toEqual([
      '      Company (Id 77, RelationType "Partner"): { Id: 77, RelationType: "Partner" } -> (absent)  (changed outside git)',
    ]);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(await patchesSince(service, before)).toEqual(['acme /contract/4711']);
    expect((await liveContract(service, 'acme', '4711')).Company).toEqual([SUPPLIER]);
  });

  it('exits 1 without api.read, explaining that drift needs reads, and sends nothing', async () => {
    const { repo, service } = await setup({ read: false });

    const run = await runCli(['drift', '--fix'], repo.dir, ENV);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('drift detection reads each managed contract live');
    expect(run.stderr).toContain('configure api.read in the engine config (e.g. read: { path: "/contract/{id}" })');
    expect(run.stdout).toBe('');
    expect(await requestLog(service)).toEqual([]);
  });

  it('exits 1 naming the state file when a last applied record cannot be read, and reads nothing live', async () => {
    const { repo, service } = await setup();
    await mkdir(path.join(repo.dir, '.contract-sync/state/acme'), { recursive: true });
    await writeFile(path.join(repo.dir, '.contract-sync/state/acme/4711.json'), '{"version":1,');

    const run = await runCli(['drift'], repo.dir, ENV);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/contract-sync drift: cannot read the state store: .*4711\.json: not JSON/);
    expect(run.stderr).not.toContain('internal error');
    expect(await requestLog(service)).toEqual([]);
  });

  it('writes a versioned JSON report (stdout and --report) without any secret', async () => {
    const { repo, service } = await setup();
    expect((await runCli(['apply'], repo.dir, ENV)).code).toBe(0);
    await putLive(service, 'acme', '4711', { ...(await liveContract(service, 'acme', '4711')), Name: 'Edited' });
    const head = (await repo.git('rev-parse', 'HEAD')).trim();

    const run = await runCli(['drift', '--format', 'json', '--report', 'drift.json'], repo.dir, ENV);

    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({
      version: 1,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
      runId: expect.any(String),
      source: { repo: '.', ref: null, commit: head },
      fix: false,
      summary: { tenants: 2, contracts: 3, drifted: 1, changes: 1, changedOutsideGit: 1, notYetApplied: 0, neverApplied: 0, errors: 0 },
    });
    expect(report.tenants).toEqual([
      {
        tenant: 'acme',
        managed: 2,
        contracts: [
          {
            id: '4711',
            file: 'contracts/acme.yaml',
            line: 3,
            drift: [{ field: 'Name', live: 'Edited', desired: 'Facility cleaning', lastApplied: 'Facility cleaning', cause: 'changed-outside-git' }],
            ops: [{ op: 'Replace', path: '/Contract/Name', value: 'Facility cleaning' }],
          },
        ],
        errors: [],
      },
      { tenant: 'globex', managed: 1, contracts: [], errors: [] },
    ]);
    expect(await readFile(path.join(repo.dir, 'drift.json'), 'utf8')).toBe(run.stdout);
    for (const secret of Object.values(ENV)) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('with --fix and --format json, stays one JSON document that says what was fixed', async () => {
    const { repo, service } = await setup();
    expect((await runCli(['apply'], repo.dir, ENV)).code).toBe(0);
    await putLive(service, 'acme', '4712', { Name: 'Edited' });

    const run = await runCli(['drift', '--fix', '--format', 'json'], repo.dir, ENV);

    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ fix: true, summary: { drifted: 1, fixed: 1, fixFailed: 0 } });
    expect(report.tenants[0].contracts).toEqual([expect.objectContaining({ id: '4712', fix: { outcome: 'applied', status: null } })]);
    for (const secret of Object.values(ENV)) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('renders markdown for a scheduled job, with the fix outcome of each contract', async () => {
    const { repo, service } = await setup();
    expect((await runCli(['apply'], repo.dir, ENV)).code).toBe(0);
    await putLive(service, 'globex', '9001', { Name: 'Lease | by hand' });

    const found = await runCli(['drift', '--format', 'markdown'], repo.dir, ENV);
    const fixed = await runCli(['drift', '--fix', '--format', 'markdown'], repo.dir, ENV);

    expect(found.code).toBe(0);
    // Headed like the plan comment (commit, version, time), and ends with what to run next (issue 23, item 5).
    expect(found.stdout).toMatch(
      new RegExp(
        `^### contract-sync drift\\n\\n.*\`[0-9a-f]{7}\` · contract-sync ${packageJson.version.replaceAll('.', '\\.')} · checked \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\n\\n` +
          '\\*\\*1 contract drifted \\(1 difference\\): 1 changed outside git, 0 not yet applied\\.\\*\\*\\n',
      ),
    );
    expect(found.stdout).toContain('**Next:** To make the service match git again, run `contract-sync drift --fix`');
    expect(fixed.stdout).toContain('**Next:** Nothing to run: the service matches git.');
    expect(found.stdout).toContain('| Name | <code>&quot;Lease &#124; by hand&quot;</code> | <code>&quot;Office lease&quot;</code> | changed outside git |');
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain('**`9001`** · globex · contracts/globex.yaml:3 · 1 op to fix · fixed');
  });

  it('lists a contract that cannot be read (404) and exits 1, still reporting the others', async () => {
    const { repo } = await setup({ live: { acme: { '4711': LIVE.acme!['4711']! }, globex: LIVE.globex! } });

    const run = await runCli(['drift', '--detailed-exitcode'], repo.dir, ENV);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /Not checked:\n {2}acme 4712 \(contracts\/acme\.yaml:8\) not on the service: the service has no contract 4712 \(its read was answered 404\)/,
    );
    expect(run.stdout).toContain('tenant acme: 1 of 2 contracts drifted');
    expect(run.stdout).toContain('(never applied)');
  });

  it('exits 1 for a tenant whose secret is refused, without printing the secret, and checks the other', async () => {
    const { repo, service } = await setup();
    const env = { ...ENV, SECRET_GLOBEX: 'not-the-right-secret-42' };

    const run = await runCli(['drift', '--detailed-exitcode'], repo.dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/tenant globex: not checked\n[^]*Not checked:\n {2}globex: .*invalid_client/);
    expect(run.stdout).toContain('tenant acme: all 2 contracts drifted');
    expect((await requestLog(service)).filter((entry) => entry.kind === 'api' && entry.tenant === 'globex')).toEqual([]);
    for (const secret of [...Object.values(env), ENV.SECRET_GLOBEX]) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it.each([
    [['drift', '--format', 'yaml'], /--format must be one of text, markdown, json/],
    [['drift', '--lock-timeout', 'soon'], /--lock-timeout must be a number of seconds/],
    [['drift', 'extra'], /unexpected argument "extra"/],
    [['drift', '--tenant', 'nobody'], /--tenant "nobody" is not configured/],
  ])('refuses %j', async (args, message) => {
    const { repo, service } = await setup();

    const run = await runCli(args, repo.dir, ENV);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await requestLog(service)).toEqual([]);
  });

  it('prints its help', async () => {
    const run = await runCli(['drift', '--help'], process.cwd());

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: contract-sync drift /);
  });
});
