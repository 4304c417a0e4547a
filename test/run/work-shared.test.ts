/**
 * A worker's lanes in a shared run (engine/run/shared-run.ts workShared), against the real
 * PostgreSQL store's shared runs: a lane whose tenant is ending takes the next tenant on a session
 * of its own while the ending one is answered, never more than once per tenant; a tenant that never
 * says so keeps its lane; a failure stops every lane from taking more.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { sendEnding, workShared, type SharedWork } from '../../engine/run/shared-run.ts';
import { openPostgresStateStore, type PostgresStateStore } from '../../engine/state/postgres/index.ts';
import type { SharedRuns } from '../../engine/state/shared-run.ts';
import { postgresDatabaseForFile } from '../helpers/postgres-server.ts';

const database = postgresDatabaseForFile();
const opened: PostgresStateStore[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const KEY = 'work-shared-key';

async function joinedRun(tenants: Record<string, number>): Promise<{ runs: SharedRuns; work: Omit<SharedWork<string>, 'runTenant' | 'lanes'> }> {
  const store = await openPostgresStateStore({ url: database.url, schema: database.newSchema('work_shared') });
  opened.push(store);
  const runs = store.sharedRuns!;
  const joined = await runs.join({
    key: KEY,
    command: 'apply',
    commit: 'c'.repeat(40),
    runId: 'run-1',
    startedAt: '2027-01-01T00:00:00.000Z',
    startedBy: {},
    tenants: Object.entries(tenants).map(([tenant, size]) => ({ tenant, size })),
  });
  return {
    runs,
    work: {
      runs,
      key: KEY,
      joined,
      validated: 'here',
      worker: 'w1',
      clock: { sleep: (ms) => delay(ms) },
      resultOf: () => ({ changed: 1, applied: 1, failed: 0 }),
    },
  };
}

/** Resolves once `when()` holds (checked every few ms), else rejects after `ms`. */
async function until(when: () => boolean, ms = 5_000): Promise<void> {
  for (const started = Date.now(); !when(); await delay(5)) if (Date.now() - started > ms) throw new Error('timed out');
}

describe('a shared run worker’s lanes', () => {
  it('a lane whose tenant is ending takes the next tenant while the ending one is answered, once, and within 2 x lanes', async () => {
    const { work } = await joinedRun({ a: 30, b: 20, c: 10 });
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const worked = await workShared({
      ...work,
      lanes: 1,
      async runTenant(tenant, _files, ending) {
        log.push(`start ${tenant}`);
        most = Math.max(most, ++running);
        if (tenant === 'a') {
          ending();
          ending();
          await until(() => log.includes('start b'));
        }
        if (tenant === 'b') {
          // a and b run: with one lane, two is the most; c waits until a's lane has stopped.
          ending();
          await until(() => log.includes('end a'));
          await delay(100);
          ending();
          await until(() => log.includes('start c'));
        }
        // c ends after b, whatever the machine's load: the order below is the lanes', not a race of timers.
        if (tenant === 'c') await until(() => log.includes('end b'));
        log.push(`end ${tenant}`);
        running -= 1;
        return tenant;
      },
    });

    expect(log).toEqual(['start a', 'start b', 'end a', 'start c', 'end b', 'end c']);
    expect(most).toBe(2);
    // Each once; in the order their claims were ended, which the database's answers decide.
    expect([...worked.outcomes].sort()).toEqual(['a', 'b', 'c']);
  });

  it('a tenant that never says it is ending keeps its lane: one lane runs its tenants one after another', async () => {
    const { runs, work } = await joinedRun({ a: 3, b: 2, c: 1 });
    let running = 0;
    let most = 0;
    const worked = await workShared({
      ...work,
      lanes: 1,
      async runTenant(tenant) {
        most = Math.max(most, ++running);
        await delay(10);
        running -= 1;
        return tenant;
      },
    });

    expect(most).toBe(1);
    expect(worked.outcomes).toEqual(['a', 'b', 'c']);
    expect(await runs.next(KEY, 'w2')).toEqual({ kind: 'finished' });
  });

  it('a failure after a hand-over stops every lane from taking more; the tenants held end first, then the error is thrown', async () => {
    const { runs, work } = await joinedRun({ a: 40, b: 30, c: 20, d: 10 });
    const started: string[] = [];
    const ended: string[] = [];
    const failing = workShared({
      ...work,
      lanes: 1,
      async runTenant(tenant, _files, ending) {
        started.push(tenant);
        if (tenant === 'a') {
          ending();
          await until(() => started.includes('b'));
          throw new Error('tenant a broke');
        }
        // b is still running when a fails, and ends after it; it says it is ending only then.
        await delay(50);
        ending();
        ended.push(tenant);
        return tenant;
      },
    });

    await expect(failing).rejects.toThrow('tenant a broke');
    expect(started).toEqual(['a', 'b']);
    expect(ended).toEqual(['b']);
    // a was abandoned (left to the next worker), b done; c and d never taken.
    const next = await runs.next(KEY, 'w2');
    expect(next.kind === 'claimed' ? next.claim.tenant : next.kind).toBe('a');
  });

  it('a send is ending with at most two rounds of its requests left', () => {
    expect(sendEnding({ done: 45, total: 50 }, 2)).toBe(false);
    expect(sendEnding({ done: 46, total: 50 }, 2)).toBe(true);
    expect(sendEnding({ done: 1, total: 3 }, 2)).toBe(true);
    expect(sendEnding({ done: 10, total: 50 }, 20)).toBe(true);
  });
});
