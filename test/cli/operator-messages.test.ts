/**
 * Messages that say what to do (issue: the operator's day): a missing secret is one line per
 * tenant, an unreachable host says "connection refused", the tenant is named once, a config typo
 * gets "did you mean", and `help COMMAND` is `COMMAND --help`. Real git repositories; the
 * unreachable host is a port a test server just gave up.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';

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

/** A loopback port nothing listens on: a server's, closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

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
      'contract-sync plan: tenant acme: clientSecret cannot be resolved: environment variable ACME_SECRET is not set; 3 contracts not read',
      'contract-sync plan: tenant globex: clientSecret cannot be resolved: environment variable GLOBEX_SECRET is not set; 1 contract not read',
      '2 problems reading the known state live: no plan written',
    ]);
    expect(run.stdout).toBe('');
  });

  it('apply with two missing secrets: the reason once per tenant, one line per tenant under Failures', async () => {
    const run = await runCli(['apply', '--auto-approve', '--full'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      [
        'acme: 0 of 3 contracts changed, 3 ops, 0 requests, 0 retries, 3 failed',
        '  tenant acme: clientSecret cannot be resolved: environment variable ACME_SECRET is not set',
        'globex: 0 of 1 contract changed, 1 op, 0 requests, 0 retries, 1 failed',
        '  tenant globex: clientSecret cannot be resolved: environment variable GLOBEX_SECRET is not set',
        '',
        'Failures:',
        '  acme: 3 contracts not sent: the tenant could not start (see above)',
        '  globex: 1 contract not sent: the tenant could not start (see above)',
        '',
        'Apply: 0 of 4 contracts changed, 4 ops, 0 requests, 0 retries, 4 failed.',
      ].join('\n'),
    );
  });

  it('an unreachable host says "connection refused"', async () => {
    const run = await runCli(['plan', '--refresh', '--full', '--tenant', 'acme'], repo.dir, { ACME_SECRET: 's1', GLOBEX_SECRET: 's2' });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `contract-sync plan: tenant acme: OIDC discovery at ${origin}/realms/cms failed: no answer from ${origin}: connection refused (ECONNREFUSED)`,
    );
    expect(run.stderr).not.toContain('TypeError');
  });

  it('drift names the tenant once under "Not checked"', async () => {
    const run = await runCli(['drift'], repo.dir, { GLOBEX_SECRET: 's2' });

    expect(run.stdout).toContain('Not checked:\n  acme: clientSecret cannot be resolved: environment variable ACME_SECRET is not set\n');
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
