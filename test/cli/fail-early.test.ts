/**
 * Fail early (issue 38, item 4): in apply, drift and plan --refresh every tenant's token is had
 * before anything is read; a tenant without one is one line naming what to fix, and nothing of it
 * is read or sent. A service that cannot be reached stops each tenant after a few connection
 * failures in a row (in import too), on one line naming api.baseUrl's host. Against the emulator.
 */
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { closedPort } from '../helpers/closed-port.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** Two tenants of 6 contracts each, reads configured; `apiAt`: another api.baseUrl (the token endpoint stays the emulator's). */
async function setup(options: { apiAt?: string } = {}) {
  const fleet = createFleet(2, 6);
  emulator = await startEmulator(fleetSeed(fleet));
  const files = fleetRepoFiles(fleet, emulator, { read: true });
  if (options.apiAt !== undefined) files['contract-sync.yaml'] = files['contract-sync.yaml']!.replace(emulator.urls.baseUrl, options.apiAt);
  const { dir, cleanup } = await writeTree(files);
  cleanups.push(cleanup);
  return { dir, env: fleet.env };
}

/** The requests tenant-a's contracts or client caused: the token request names the client in its body, so only API paths are matched. */
async function requestsOf(tenant: string): Promise<string[]> {
  return (await requestLog(emulator!))
    .filter((entry) => entry.kind === 'api' && entry.path.includes(`/${tenant}-`))
    .map((entry) => `${entry.method} ${entry.path}`);
}

const UNSET =
  'tenant tenant-a not started: clientSecret cannot be resolved: environment variable SECRET_TENANT_A is not set; set it, or point tenants.tenant-a.clientSecret elsewhere; nothing of it read or sent';
const REFUSED =
  'tenant tenant-a not started: the token endpoint rejected client cs-tenant-a (invalid_client): client authentication failed; check the secret in environment variable SECRET_TENANT_A (tenants.tenant-a.clientSecret) and tenants.tenant-a.clientId; nothing of it read or sent';

describe('a tenant without a token', () => {
  it('apply, its variable unset: one line first on stderr, none of its plan printed, nothing of it read or sent; the other tenant applied', async () => {
    const { dir, env } = await setup();
    const { SECRET_TENANT_A: _unset, ...rest } = env;

    const run = await runCli(['apply', '--auto-approve'], dir, rest);

    expect(run.code).toBe(1);
    expect(run.stderr.split('\n')[0]).toBe(`contract-sync apply: ${UNSET}`);
    expect(run.stdout).not.toContain('tenant-a-00');
    expect(run.stdout).toContain('tenant tenant-b: 4 to update');
    expect(run.stdout).toContain(
      'tenant-a: not started, 6 contracts not sent: clientSecret cannot be resolved: environment variable SECRET_TENANT_A is not set; set it, or point tenants.tenant-a.clientSecret elsewhere\n',
    );
    expect(run.stdout).not.toContain('Failures:');
    expect(await requestsOf('tenant-a')).toEqual([]);
    expect((await requestsOf('tenant-b')).filter((request) => request.startsWith('PATCH'))).toHaveLength(4);
  });

  it('apply, its secret refused: the line names the variable and the setting; only the token was asked for', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['apply', '--auto-approve'], dir, { ...env, SECRET_TENANT_A: 'not-the-right-secret-0123456789' });

    expect(run.code).toBe(1);
    expect(run.stderr.split('\n')[0]).toBe(`contract-sync apply: ${REFUSED}`);
    expect(run.stdout).not.toContain('tenant-a-00');
    expect(await requestsOf('tenant-a')).toEqual([]);
    expect(run.stdout + run.stderr).not.toContain('not-the-right-secret');
  });

  it('drift, its variable unset: "Not checked" names it once, exit 1, nothing of it read', async () => {
    const { dir, env } = await setup();
    const { SECRET_TENANT_A: _unset, ...rest } = env;

    const run = await runCli(['drift'], dir, rest);

    expect(run.code).toBe(1);
    expect(run.stderr.split('\n')[0]).toBe(`contract-sync drift: ${UNSET}`);
    expect(run.stdout).toContain(
      'Not checked:\n  tenant-a: clientSecret cannot be resolved: environment variable SECRET_TENANT_A is not set; set it, or point tenants.tenant-a.clientSecret elsewhere\n',
    );
    expect(await requestsOf('tenant-a')).toEqual([]);
  });

  it('plan --refresh, its secret refused: nothing read of any tenant, no plan', async () => {
    const { dir, env } = await setup();

    const run = await runCli(['plan', '--refresh'], dir, { ...env, SECRET_TENANT_A: 'not-the-right-secret-0123456789' });

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`contract-sync plan: ${REFUSED}\n1 tenant not started: no plan written\n`);
    expect(run.stdout).toBe('');
    expect((await requestLog(emulator!)).filter((entry) => entry.kind === 'api')).toEqual([]);
  });
});

describe('a service that cannot be reached (api.baseUrl on a closed port)', () => {
  it('apply --refresh: each tenant stops after 3 refused connections, one line naming the host and the cause; no plan printed', async () => {
    const port = await closedPort();
    const { dir, env } = await setup({ apiAt: `http://127.0.0.1:${port}` });

    const run = await runCli(['apply', '--auto-approve', '--refresh'], dir, env);

    expect(run.code).toBe(1);
    const line = `the service at 127.0.0.1:${port} (api.baseUrl) cannot be reached: connection refused (ECONNREFUSED), 3 times in a row; nothing more sent for this tenant`;
    expect(run.stdout).toContain(`\n  ${line}\n`);
    expect(run.stdout.split('\n').filter((each) => each.includes('cannot be reached'))).toHaveLength(2);
    expect(run.stdout).not.toContain('known state unknown');
    expect(run.stdout).not.toContain('GET /contract');
    // Not every contract's 5 attempts (60 requests): the lane stops after the first failures in a row.
    const requests = [...run.stdout.matchAll(/^tenant-[ab]: .*, (\d+) requests?,/gm)].map((match) => Number(match[1]));
    expect(requests).toHaveLength(2);
    for (const count of requests) expect(count).toBeLessThan(12);
  });

  it('apply from the state store (no reads): the contracts not sent are one line per tenant under Failures', async () => {
    const port = await closedPort();
    const { dir, env } = await setup({ apiAt: `http://127.0.0.1:${port}` });

    const run = await runCli(['apply', '--auto-approve', '--no-refresh'], dir, env);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `Failures:\n  tenant-a: 6 contracts failed: the service at 127.0.0.1:${port} (api.baseUrl) cannot be reached: connection refused (ECONNREFUSED), 3 times in a row; nothing more sent for this tenant\n  tenant-b: 6 contracts failed: `,
    );
  });

  it('drift and plan --refresh: one line per tenant naming the host', async () => {
    const port = await closedPort();
    const { dir, env } = await setup({ apiAt: `http://127.0.0.1:${port}` });

    const drift = await runCli(['drift'], dir, env);
    const plan = await runCli(['plan', '--refresh'], dir, env);

    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(
      `Not checked:\n  tenant-a: the service at 127.0.0.1:${port} (api.baseUrl) cannot be reached: connection refused (ECONNREFUSED)`,
    );
    expect(drift.stdout.split('\n').filter((each) => each.includes('cannot be reached'))).toHaveLength(2);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(
      `contract-sync plan: tenant tenant-a: the service at 127.0.0.1:${port} (api.baseUrl) cannot be reached: connection refused (ECONNREFUSED)`,
    );
    expect(plan.stderr.split('\n').filter((each) => each.includes('cannot be reached'))).toHaveLength(2);
  });

  it('import: the tenant stops after 3 refused connections, on one line naming the host and the cause; nothing printed', async () => {
    const port = await closedPort();
    const { dir, env } = await setup({ apiAt: `http://127.0.0.1:${port}` });
    const ids = ['new-1', 'new-2', 'new-3', 'new-4', 'new-5', 'new-6'];

    const run = await runCli(['import', '--tenant', 'tenant-a', ...ids.flatMap((id) => ['--id', id])], dir, { ...env, CONTRACT_SYNC_LOG_LEVEL: 'debug' });

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    // Besides the JSON log lines and the reads' progress, one line: not one per contract.
    const said = run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{') && !line.startsWith('contract-sync import: reading '));
    expect(said).toEqual([
      `contract-sync import: tenant tenant-a: the service at 127.0.0.1:${port} (api.baseUrl) cannot be reached: connection refused (ECONNREFUSED), 3 times in a row; nothing more sent for this tenant; nothing imported`,
    ]);
    // Not each contract's retries (4 each): the lane stops after the first failures in a row.
    expect(run.stderr.split('\n').filter((line) => line.includes('request failed; retrying')).length).toBeLessThan(ids.length);
  });
});
