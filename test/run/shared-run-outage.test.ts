/**
 * Issue 41, item 1 (in part): a `--shard auto` worker whose PostgreSQL goes away mid-run stops with
 * one line saying what happened and what to do, exit 1, no stack trace; the diagnosis of a
 * terminated session does not call it a shutdown. A real PostgreSQL (halted with `pg_ctl stop -m
 * immediate`, then restarted), the emulator, and the CLI as a child process.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { describePostgresError } from '../../engine/state/postgres/errors.ts';
import { requestLog } from '../helpers/fleet.ts';
import { sharedRunWorkers } from '../helpers/shared-run-workers.ts';

const { server, setup, start } = sharedRunWorkers();

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
    const s = await setup(3, 30, 40);

    const child = start(s, ['apply', '--shard', 'auto', '--auto-approve', '--ref', 'HEAD', '--lock-timeout', '120'], {
      CONTRACT_SYNC_LOG_LEVEL: 'silent',
      CONTRACT_SYNC_WORKER: 'w1',
    });
    // Halted once the worker is sending: some PATCHes answered, most not.
    for (let tries = 0; tries < 600; tries++) {
      const sent = (await requestLog(s.emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').length;
      if (sent >= 5) break;
      await delay(50);
    }
    await server().halt();
    let finished;
    try {
      finished = await child.finished;
    } finally {
      await server().restart();
    }

    expect(finished.code).toBe(1);
    expect(finished.stderr).not.toContain('internal error');
    expect(finished.stderr).not.toMatch(/^\s+at /m);
    expect(finished.stderr).toMatch(
      /PostgreSQL state store \(127\.0\.0\.1:\d+, database "[^"]+"\).*; run the same command again once the state store is reachable\n$/,
    );
  });
});
