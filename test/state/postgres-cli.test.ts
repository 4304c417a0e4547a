/**
 * The commands on the PostgreSQL state store, against the emulator and a real server: state shared
 * by two working copies, every way the store can be out of reach failing in one line before
 * anything is sent, and an apply killed with SIGKILL finished by the next one without resending.
 */
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type RequestLogEntry } from '../../emulator/index.ts';
import { openStateStore } from '../../engine/run/open-store.ts';
import { parseConfig } from '../../engine/config/parse.ts';
import { Redactor } from '../../engine/log/logger.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { openPostgresStateStore } from '../../engine/state/postgres/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { closedPort } from '../helpers/closed-port.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));
const PASSWORD = 'db-pass-31f0a9c2';

let server: PostgresServer;
let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

beforeAll(async () => {
  server = await startPostgres();
  await server.query(`CREATE ROLE app_user LOGIN PASSWORD '${PASSWORD}'`);
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

/** A working copy of `fleet`'s desired-state repository whose config keeps its state in PostgreSQL (URL in STATE_DB_URL). */
async function workingCopy(fleet: Fleet, rate?: string): Promise<string> {
  const files = fleetRepoFiles(fleet, emulator!, { read: true, ...(rate === undefined ? {} : { rate }) });
  files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: STATE_DB_URL } }\n';
  const { dir, cleanup } = await writeTree(files);
  cleanups.push(cleanup);
  return dir;
}

/** [id, knownFrom, action] of the contracts `ids` in a JSON plan. */
function planned(json: string, ids: readonly string[]): [string, string, string][] {
  const plan = JSON.parse(json) as { tenants: { contracts: { id: string; knownFrom: string; action: string }[] }[] };
  const byId = new Map(plan.tenants.flatMap((tenant) => tenant.contracts).map((contract) => [contract.id, contract]));
  return ids.map((id) => [id, byId.get(id)?.knownFrom ?? 'absent', byId.get(id)?.action ?? 'absent']);
}

function patches(log: readonly RequestLogEntry[]): RequestLogEntry[] {
  return log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH' && entry.status === 204);
}

describe('commands on the PostgreSQL state store', () => {
  it('shares the state between two working copies: after an apply in the first, a plan in the second knows what it applied', { timeout: 60_000 }, async () => {
    const fleet = createFleet(2, 6);
    emulator = await startEmulator(fleetSeed(fleet));
    const env = { ...fleet.env, STATE_DB_URL: await server.createDatabase() };
    const first = await workingCopy(fleet);
    const second = await workingCopy(fleet);

    const before = await runCli(['plan', '--no-refresh', '--format', 'json'], second, env);
    const applied = await runCli(['apply'], first, env);
    const after = await runCli(['plan', '--no-refresh', '--format', 'json'], second, env);

    expect(applied.code, applied.stderr).toBe(0);
    const changed = [...fleet.changed.values()].flatMap((ids) => [...ids]);
    expect(planned(before.stdout, changed)).toEqual(changed.map((id) => [id, 'unknown', 'update']));
    expect(planned(after.stdout, changed)).toEqual(changed.map((id) => [id, 'state', 'noop']));
  });

  it.each([
    ['an unreachable server', async () => `postgresql://app_user:${PASSWORD}@127.0.0.1:${await closedPort()}/postgres`, /connection refused/],
    ['a wrong password', async () => `postgresql://app_user:${PASSWORD}-wrong@127.0.0.1:${server.port}/postgres`, /authentication failed/],
    [
      'a user without CREATE on the database',
      async () => (await server.createDatabase()).replace('postgres@', `app_user:${PASSWORD}@`),
      /permission denied for schema "contract_sync"/,
    ],
    ['a URL without a database', async () => `postgresql://app_user:${PASSWORD}@127.0.0.1:${server.port}`, /names no database/],
    ['an unset variable', async () => undefined, /^contract-sync apply: state\.url cannot be resolved: environment variable STATE_DB_URL is not set$/m],
  ])('apply with %s fails in one line, exit 1, nothing sent', { timeout: 30_000 }, async (_, urlOf, expected) => {
    const fleet = createFleet(1, 3);
    emulator = await startEmulator(fleetSeed(fleet));
    const dir = await workingCopy(fleet);
    const url = await urlOf();

    const run = await runCli(['apply'], dir, { ...fleet.env, ...(url === undefined ? {} : { STATE_DB_URL: url }) });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(expected);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toContain(PASSWORD);
    expect(run.stdout).toBe('');
    // Not even a token was asked for.
    expect(await requestLog(emulator)).toEqual([]);
  });
});

describe('openStateStore', () => {
  it("teaches the run's redactor the URL and its password", async () => {
    const url = (await server.createDatabase()).replace('postgres@', `app_user:${PASSWORD}@`);
    await server.query(`GRANT CREATE ON DATABASE ${new URL(url).pathname.slice(1)} TO app_user`);
    const { config } = parseConfig(
      'contract-sync.yaml',
      'api: { baseUrl: "http://127.0.0.1:1" }\nauth: { url: "http://127.0.0.1:1", realm: r }\ntenants: { acme: { clientId: c, clientSecret: { env: S } } }\nstate: { backend: postgres, url: { env: STATE_DB_URL } }\n',
    );
    const redactor = new Redactor();

    const store = await openStateStore(config!, '.', { env: { STATE_DB_URL: url }, cwd: '.' }, redactor);

    expect(typeof store).toBe('object');
    await (store as { close(): Promise<void> }).close();
    expect(redactor.redact(`failed: ${url}`)).toBe('failed: [REDACTED]');
    expect(redactor.redact(`password=${PASSWORD}`)).toBe('password=[REDACTED]');
  });
});

describe('apply on the PostgreSQL state store killed mid-run', () => {
  it('is finished by the next run after SIGKILL at 30 patches, without resending', { timeout: 60_000 }, async () => {
    const killAt = 30;
    const fleet = createFleet(2, 60, killAt);
    emulator = await startEmulator(fleetSeed(fleet));
    // 40 requests/s per tenant: the run takes ~2 s, long enough to be killed in the middle.
    const dir = await workingCopy(fleet, '{ requestsPerSecond: 40, concurrency: 2, maxInFlight: 4 }');
    const url = await server.createDatabase();
    const env = { ...fleet.env, STATE_DB_URL: url };
    const changed = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);

    const child = spawn(process.execPath, [BIN, 'apply'], { cwd: dir, env: { ...process.env, ...env }, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for (;;) {
      if (child.exitCode !== null) throw new Error(`apply finished before ${killAt} patches; slow it down`);
      if (patches(await requestLog(emulator)).length >= killAt) break;
      await delay(5);
    }
    child.kill('SIGKILL');
    await exited;
    const store = await openPostgresStateStore({ url });
    const recorded = (await Promise.all(fleet.tenants.map((tenant) => store.readTenant(tenant)))).reduce((sum, known) => sum + known.size, 0);
    await store.close();
    const next = await runCli(['apply', '--lock-timeout', '10'], dir, env);

    expect(recorded).toBeGreaterThanOrEqual(killAt - 8);
    expect(recorded).toBeLessThan(changed);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    const log = await requestLog(emulator);
    const byPath = new Map<string, number>();
    for (const entry of patches(log)) byPath.set(entry.path, (byPath.get(entry.path) ?? 0) + 1);
    expect([...byPath.values()].filter((count) => count > 1)).toEqual([]);
    expect(byPath.size).toBe(changed);
    expect(log.filter((entry) => entry.status === 409)).toEqual([]);
    for (const set of fleet.desired) {
      for (const contract of set.contracts) expect(diffContract(await liveContract(emulator, set.tenant, contract.id), contract.fields)).toEqual([]);
    }
  });
});
