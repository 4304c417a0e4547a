/**
 * Messages that say what to do (issue: the operator's day): a missing secret is one line per
 * tenant, an unreachable host says "connection refused", the tenant is named once, a config typo
 * gets "did you mean", and `help COMMAND` is `COMMAND --help`. Real git repositories; the
 * unreachable host is a port a test server just gave up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { closedPort } from '../helpers/closed-port.ts';

function config(origin: string): string {
  return `api:
  baseUrl: ${origin}
  read: { path: "/contract/{id}" }
auth: { url: ${origin}, realm: cms }
tenants:
  acme: { clientId: cs-acme, clientSecret: { env: ACME_SECRET }, paths: ["contracts/acme/**"] }
  globex: { clientId: cs-globex, clientSecret: { env: GLOBEX_SECRET }, paths: ["contracts/globex/**"] }
retry: { maxAttempts: 2 }
`;
}

const CONTRACTS = {
  'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "4711": { Name: Alpha }\n  "4712": { Name: Beta }\n  "4713": { Name: Gamma }\n',
  'contracts/globex/g.yaml': 'tenant: globex\ncontracts:\n  "9001": { Name: Delta }\n',
};

describe('messages that say what to do', () => {
  let repo: TestRepo;
  let origin: string;

  beforeAll(async () => {
    origin = `http://127.0.0.1:${await closedPort()}`;
    repo = await createRepo({ 'contract-sync.yaml': config(origin), ...CONTRACTS });
  });
  afterAll(() => repo.cleanup());

  it('two missing secrets: one line per tenant naming the variable, no line per contract, no JSON log line', async () => {
    const run = await runCli(['plan', '--refresh', '--full'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      'contract-sync plan: tenant acme not started: clientSecret cannot be resolved: environment variable ACME_SECRET is not set; set it, or point tenants.acme.clientSecret elsewhere; nothing of it read or sent',
      'contract-sync plan: tenant globex not started: clientSecret cannot be resolved: environment variable GLOBEX_SECRET is not set; set it, or point tenants.globex.clientSecret elsewhere; nothing of it read or sent',
      '2 tenants not started: no plan written',
    ]);
    expect(run.stdout).toBe('');
  });

  it('apply with two missing secrets: one line per tenant before anything, no plan printed, one line per tenant in the summary', async () => {
    const run = await runCli(['apply', '--auto-approve', '--full'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').slice(0, 2)).toEqual([
      'contract-sync apply: tenant acme not started: clientSecret cannot be resolved: environment variable ACME_SECRET is not set; set it, or point tenants.acme.clientSecret elsewhere; nothing of it read or sent',
      'contract-sync apply: tenant globex not started: clientSecret cannot be resolved: environment variable GLOBEX_SECRET is not set; set it, or point tenants.globex.clientSecret elsewhere; nothing of it read or sent',
    ]);
    expect(run.stdout).toBe(
      [
        '',
        'acme: not started, 3 contracts not sent: clientSecret cannot be resolved: environment variable ACME_SECRET is not set; set it, or point tenants.acme.clientSecret elsewhere',
        'globex: not started, 1 contract not sent: clientSecret cannot be resolved: environment variable GLOBEX_SECRET is not set; set it, or point tenants.globex.clientSecret elsewhere',
        '',
        'Apply: no contract changed, 0 ops, 0 requests, 0 retries, 4 failed.',
        '',
      ].join('\n'),
    );
  });

  it('an unreachable host says "connection refused"', async () => {
    const run = await runCli(['plan', '--refresh', '--full', '--tenant', 'acme'], repo.dir, { ACME_SECRET: 's1', GLOBEX_SECRET: 's2' });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `contract-sync plan: tenant acme not started: OIDC discovery at ${origin}/realms/cms failed: no answer from ${origin}: connection refused (ECONNREFUSED) (gave up after 3 attempts); check auth.url (${origin.slice('http://'.length)}) and auth.realm; nothing of it read or sent`,
    );
    expect(run.stderr).not.toContain('TypeError');
  });

  it('drift names the tenant once under "Not checked"', async () => {
    const run = await runCli(['drift'], repo.dir, { GLOBEX_SECRET: 's2' });

    expect(run.stdout).toContain(
      'Not checked:\n  acme: clientSecret cannot be resolved: environment variable ACME_SECRET is not set; set it, or point tenants.acme.clientSecret elsewhere\n',
    );
    expect(run.stdout).not.toContain('acme: tenant acme');
  });

  it('a config typo gets "did you mean", at every level of the config', async () => {
    const typos = await createRepo({
      'contract-sync.yaml': config(origin)
        .replace('  baseUrl:', '  baseURL:')
        .replace('clientId: cs-globex', 'clientID: cs-globex')
        .replace('retry:', 'retyr:'),
      ...CONTRACTS,
    });
    try {
      const run = await runCli(['validate'], typos.dir);

      expect(run.code).toBe(1);
      expect(run.stdout).toContain('contract-sync.yaml:2:3  api.baseURL  unknown field "baseURL" (did you mean "baseUrl"?)');
      expect(run.stdout).toContain('tenants.globex.clientID  unknown field "clientID" (did you mean "clientId"?)');
      expect(run.stdout).toContain('contract-sync.yaml:8:1  retyr  unknown field "retyr" (did you mean "retry"?)');
    } finally {
      await typos.cleanup();
    }
  });

  it('help COMMAND and COMMAND --help print the same text, for every command; help --help is help', async () => {
    const general = await runCli(['--help'], repo.dir);
    for (const command of ['validate', 'plan', 'apply', 'drift', 'import', 'show', 'emulator', 'state', 'init']) {
      const viaHelp = await runCli(['help', command], repo.dir);
      const viaFlag = await runCli([command, '--help'], repo.dir);
      const viaShort = await runCli([command, '-h'], repo.dir);

      expect(viaHelp.code).toBe(0);
      expect(viaFlag).toEqual(viaHelp);
      expect(viaShort).toEqual(viaHelp);
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: contract-sync ${command}`));
    }
    for (const args of [['help', '--help'], ['help', '-h'], ['help']]) expect(await runCli(args, repo.dir)).toEqual(general);
    expect(general.stdout).toContain('CONTRACT_SYNC_CONFIG');
  });
});
