/**
 * Issue 41, item 1 (in part): a `--shard auto` worker whose PostgreSQL goes away mid-run stops with
 * one line saying what happened and what to do, exit 1, no stack trace; the diagnosis of a
 * terminated session does not call it a shutdown. A real PostgreSQL (halted with `pg_ctl stop -m
 * immediate`, then restarted), the emulator, and the CLI as a child process.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { describePostgresError } from '../../engine/state/postgres/errors.ts';
import { createRepo } from '../git/helpers.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { startCli } from '../helpers/cli-child.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, setFaults } from '../helpers/fleet.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';

let emulator: Emulator | undefined;
let server: PostgresServer | undefined;
const running = new Set<ChildProcess>();
const cleanups = cleanupsAfterEach(async () => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
  await emulator?.close();
  emulator = undefined;
});

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

const TARGET = { host: '127.0.0.1', port: '5432', database: 'cs', schema: 'contract_sync' };

describe('describePostgresError', () => {
  it.each([
    [
      '57P01',
      'cannot write to the PostgreSQL state store (127.0.0.1:5432, database "cs"): the server terminated this session (57P01: pg_terminate_backend, or a shutdown)',
    ],
    [
      '57P02',
      'cannot write to the PostgreSQL state store (127.0.0.1:5432, database "cs"): the server ended the session after another server process crashed (57P02)',
    ],
    ['57P03', 'cannot write to the PostgreSQL state store (127.0.0.1:5432, database "cs"): the server is shutting down or starting up (57P03)'],
  ])('%s', (code, message) => {
    expect(describePostgresError(Object.assign(new Error('driver text'), { code }), TARGET, 'write to').message).toBe(message);
  });
});

describe('a --shard auto worker whose PostgreSQL stops mid-run', () => {
  it('exits 1 with one line naming the store and what to do, no stack trace', { timeout: 120_000 }, async () => {
    const fleet = createFleet(3, 30);
    emulator = await startEmulator(fleetSeed(fleet));
    await setFaults(emulator, { api: { latencyMs: [40, 40] } });
    const files = fleetRepoFiles(fleet, emulator, { read: true, rate: '{ requestsPerSecond: 1000, concurrency: 2, maxInFlight: 4 }' });
    files['contract-sync.yaml'] += 'state: { backend: postgres, url: { env: STATE_DB_URL } }\n';
    const url = await server!.createDatabase();
    const repo = await createRepo(files);
    cleanups.push(() => repo.cleanup());
    const env: NodeJS.ProcessEnv = { ...process.env, ...fleet.env, STATE_DB_URL: url, CONTRACT_SYNC_LOG_LEVEL: 'silent', CONTRACT_SYNC_WORKER: 'w1' };
    for (const name of ['GITHUB_RUN_ID', 'GITHUB_RUN_ATTEMPT', 'GITHUB_ACTIONS', 'CI_PIPELINE_ID', 'GITLAB_CI', 'CONTRACT_SYNC_RUN']) delete env[name];

    const child = startCli(['apply', '--shard', 'auto', '--auto-approve', '--ref', 'HEAD', '--lock-timeout', '120'], { cwd: repo.dir, env, running });
    // Halted once the worker is sending: some PATCHes answered, most not.
    for (let tries = 0; tries < 600; tries++) {
      const sent = (await requestLog(emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').length;
      if (sent >= 5) break;
      await delay(50);
    }
    await server!.halt();
    let finished;
    try {
      finished = await child.finished;
    } finally {
      await server!.restart();
    }

    expect(finished.code).toBe(1);
    expect(finished.stderr).not.toContain('internal error');
    expect(finished.stderr).not.toMatch(/^\s+at /m);
    expect(finished.stderr).toMatch(
      /PostgreSQL state store \(127\.0\.0\.1:\d+, database "[^"]+"\).*; run the same command again once the state store is reachable\n$/,
    );
  });
});
