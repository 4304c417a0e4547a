import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  fileStateStore,
  LockTimeoutError,
  parseLockFile,
  serialiseLockFile,
  type FileStateStoreOptions,
  type LockFileContent,
  type TenantLock,
} from '../../engine/state/index.ts';
import { readLines, spawnFixture } from './fixtures/spawn-fixture.ts';

const T0 = Date.UTC(2027, 0, 1);
const HOST = hostname();

let dir: string;
let clock: number;
let sleeps: number[];
let onSleep: (count: number) => Promise<void> | void;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-lock-'));
  clock = T0;
  sleeps = [];
  onSleep = () => undefined;
});

afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

/** A store on `dir` whose clock only moves when a waiter sleeps (or a test moves it). */
function store(options: FileStateStoreOptions = {}): ReturnType<typeof fileStateStore> {
  return fileStateStore(dir, {
    now: () => clock,
    pollMs: 250,
    async sleep(ms) {
      sleeps.push(ms);
      clock += ms;
      await onSleep(sleeps.length);
    },
    ...options,
  });
}

function lockFile(): string {
  return path.join(dir, 'acme', '.lock');
}

async function lockContent(): Promise<LockFileContent | undefined> {
  return parseLockFile(await readFile(lockFile(), 'utf8'));
}

async function writeLock(content: Partial<LockFileContent> | string): Promise<void> {
  await mkdir(path.join(dir, 'acme'), { recursive: true });
  const full = {
    owner: 'crashed-run',
    pid: process.pid,
    hostname: HOST,
    acquiredAt: new Date(T0).toISOString(),
    heartbeatAt: new Date(T0).toISOString(),
    lockId: 'by-hand',
  };
  await writeFile(lockFile(), typeof content === 'string' ? content : serialiseLockFile({ ...full, ...content }));
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

describe('fileStateStore lock', () => {
  it('creates DIR/<tenant>/.lock saying who holds it, and removes it on release', async () => {
    const lock = await store().lock('acme', { timeoutMs: 0, owner: 'run-1' });

    const content = await lockContent();
    await lock.release();

    expect(lock.tenant).toBe('acme');
    expect(content).toMatchObject({
      owner: 'run-1',
      pid: process.pid,
      hostname: HOST,
      acquiredAt: new Date(T0).toISOString(),
      heartbeatAt: new Date(T0).toISOString(),
    });
    expect(await readdir(path.join(dir, 'acme'))).toEqual([]);
  });

  it('makes a second run wait while the first holds the lock, and gives it the lock after release', async () => {
    const first = await store().lock('acme', { timeoutMs: 0, owner: 'run-1' });
    onSleep = async (count) => {
      if (count === 3) await first.release();
    };

    const second = await store().lock('acme', { timeoutMs: 10_000, owner: 'run-2' });

    expect(sleeps).toEqual([250, 250, 250]);
    expect(await lockContent()).toMatchObject({ owner: 'run-2' });
    await second.release();
  });

  it('gives up after timeoutMs with a LockTimeoutError saying who holds the lock and what to do', async () => {
    const first = await store().lock('acme', { timeoutMs: 0, owner: 'run-1' });

    const error = await store()
      .lock('acme', { timeoutMs: 900, owner: 'run-2' })
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ code: 'lock-timeout', tenant: 'acme' });
    expect((error as Error).message).toBe(
      `tenant "acme" is locked by another run (owner "run-1", pid ${process.pid} on host ${HOST}, since 2027-01-01T00:00:00.000Z, ` +
        `last heartbeat 2027-01-01T00:00:00.000Z); gave up after waiting 900 ms. Wait for that run to finish and try again ` +
        `(or allow a longer lock timeout), or, if no run is active (it crashed and its lock was not recovered), remove ${lockFile()}.`,
    );
    expect(sleeps).toEqual([250, 250, 250, 150]);
    expect(await lockContent()).toMatchObject({ owner: 'run-1' });
    await first.release();
  });

  it('recovers at once a lock whose process on this host is gone, and removes what crashed writes left', async () => {
    await writeLock({ pid: await deadPid() });
    await writeFile(path.join(dir, 'acme', '.4711.json.0123abcd.tmp'), '{"version":1,');
    await writeFile(path.join(dir, 'acme', '4711.json'), '{}');

    const lock = await store().lock('acme', { timeoutMs: 0, owner: 'run-2' });

    expect(await lockContent()).toMatchObject({ owner: 'run-2', pid: process.pid });
    expect((await readdir(path.join(dir, 'acme'))).sort()).toEqual(['.lock', '4711.json']);
    await lock.release();
  });

  it.each<[string, Partial<LockFileContent>]>([
    ['a live process of this host', {}],
    ['a gone process of another host (its pid means nothing here)', { hostname: 'elsewhere' }],
  ])('does not take a lock with a fresh heartbeat held by %s', async (_name, holder) => {
    await writeLock({ ...holder, pid: holder.hostname === undefined ? process.pid : await deadPid() });

    await expect(store().lock('acme', { timeoutMs: 0, owner: 'run-2' })).rejects.toThrow(LockTimeoutError);
    expect(await lockContent()).toMatchObject({ owner: 'crashed-run' });
  });

  it('recovers a lock of another host once its heartbeat is older than staleLockMs', async () => {
    await writeLock({ hostname: 'elsewhere', pid: 1 });
    const options = { staleLockMs: 60_000, now: () => clock };

    clock = T0 + 60_000;
    const early = await store(options)
      .lock('acme', { timeoutMs: 0, owner: 'run-2' })
      .catch((caught: unknown) => caught);
    clock = T0 + 60_001;
    const lock = await store(options).lock('acme', { timeoutMs: 0, owner: 'run-2' });

    expect(early).toBeInstanceOf(LockTimeoutError);
    expect((early as Error).message).toContain('owner "crashed-run", pid 1 on host elsewhere, since 2027-01-01T00:00:00.000Z');
    expect(await lockContent()).toMatchObject({ owner: 'run-2' });
    expect(sleeps).toEqual([]);
    await lock.release();
  });

  it.each([
    ['recovers', T0 - 61_000, 'run-2'],
    ['waits for', T0 - 59_000, undefined],
  ])('%s an empty lock file (left by an older engine version, which created it before writing it) by its modification time', async (_name, modified, owner) => {
    await writeLock('');
    await utimes(lockFile(), modified / 1000, modified / 1000);

    const result = await store()
      .lock('acme', { timeoutMs: 0, owner: 'run-2' })
      .catch((caught: unknown) => caught);

    if (owner === undefined) {
      expect(result).toBeInstanceOf(LockTimeoutError);
      expect((result as Error).message).toContain(
        `a run that did not say who it is (its lock file is empty or unreadable, last modified ${new Date(modified).toISOString()})`,
      );
    } else {
      expect(await lockContent()).toMatchObject({ owner });
      await (result as TenantLock).release();
    }
  });

  it('lets exactly one of two waiters take a stale lock, and the other never removes it', async () => {
    const pid = await deadPid();
    for (let round = 0; round < 25; round++) {
      await writeLock({ pid, lockId: `stale-${round}` });

      const results = await Promise.allSettled([
        store().lock('acme', { timeoutMs: 0, owner: 'run-a' }),
        store().lock('acme', { timeoutMs: 0, owner: 'run-b' }),
      ]);

      const winners = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const losers = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0]).toBeInstanceOf(LockTimeoutError);
      const holder = await lockContent();
      expect(holder?.owner).toBe(results[0]!.status === 'fulfilled' ? 'run-a' : 'run-b');
      expect((losers[0] as Error).message).toContain(`owner "${holder?.owner}"`);
      expect((await readdir(path.join(dir, 'acme'))).sort()).toEqual(['.lock']);
      await winners[0]!.release();
    }
  });

  it('puts back a lock another run took between its judging the old one stale and moving it away', async () => {
    const pid = await deadPid();
    await writeLock({ pid, lockId: 'stale' });
    let judged = 0;
    // Runs in the waiter between reading the lock and moving it: another run recovers the stale
    // lock and takes its own (synchronously, so that it lands exactly there).
    function isProcessAlive(checked: number): boolean {
      judged += 1;
      if (judged > 1) return checked !== pid;
      rmSync(lockFile());
      writeFileSync(
        lockFile(),
        serialiseLockFile({ owner: 'run-a', pid: process.pid, hostname: HOST, acquiredAt: 'x', heartbeatAt: new Date(T0).toISOString(), lockId: 'fresh' }),
      );
      return false;
    }

    const error = await store({ isProcessAlive })
      .lock('acme', { timeoutMs: 0, owner: 'run-b' })
      .catch((caught: unknown) => caught);

    expect(judged).toBe(2);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(await lockContent()).toMatchObject({ owner: 'run-a', lockId: 'fresh' });
    expect(await readdir(path.join(dir, 'acme'))).toEqual(['.lock']);
  });

  it('refreshes its heartbeat while held, so that a long run is not taken for a crashed one', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const holder = await store({ staleLockMs: 4_000, heartbeatMs: 1_000 }).lock('acme', { timeoutMs: 0, owner: 'run-1' });

    for (let second = 1; second <= 10; second++) {
      clock = T0 + second * 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(async () => expect((await lockContent())?.heartbeatAt).toBe(new Date(clock).toISOString()));
    }
    const contender = await store({ staleLockMs: 4_000, hostname: 'elsewhere' })
      .lock('acme', { timeoutMs: 0, owner: 'run-2' })
      .catch((caught: unknown) => caught);
    await holder.release();
    await vi.advanceTimersByTimeAsync(5_000);

    expect(contender).toBeInstanceOf(LockTimeoutError);
    expect(vi.getTimerCount()).toBe(0);
    await expect(readFile(lockFile())).rejects.toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('does not overwrite, with its heartbeat, a lock that is no longer its own', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const lock = await store({ staleLockMs: 4_000, heartbeatMs: 1_000 }).lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await rm(lockFile());
    await writeLock({ owner: 'run-2', lockId: 'another' });

    clock = T0 + 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    // Waits for the heartbeat under way.
    await lock.release();

    expect(await lockContent()).toMatchObject({ owner: 'run-2', lockId: 'another' });
    expect(await readdir(path.join(dir, 'acme'))).toEqual(['.lock']);
  });

  it('fires its lost signal at the next heartbeat once its lock file was replaced or removed, and no heartbeat puts it back', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const replaced = await store({ staleLockMs: 4_000, heartbeatMs: 1_000 }).lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await rm(lockFile());
    await writeLock({ owner: 'run-2', lockId: 'another' });
    const before = replaced.lost.aborted;

    clock = T0 + 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.waitFor(() => expect(replaced.lost.aborted).toBe(true));
    await replaced.release();
    await rm(lockFile());
    const removed = await store({ staleLockMs: 4_000, heartbeatMs: 1_000 }).lock('acme', { timeoutMs: 0, owner: 'run-3' });
    await rm(lockFile());
    clock = T0 + 2_000;
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.waitFor(() => expect(removed.lost.aborted).toBe(true));
    await removed.release();

    expect(before).toBe(false);
    expect((replaced.lost.reason as Error).message).toBe(
      'lost the lock of tenant acme: its lock file was replaced by another run; nothing more is sent or recorded for it by this run',
    );
    expect((removed.lost.reason as Error).message).toMatch(/: its lock file is gone \(judged stale, or state unlock --force\);/);
    await expect(readFile(lockFile())).rejects.toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('fires its lost signal once its heartbeat could not be written for staleLockMs, when another run may take it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let failing = false;
    let ids = 0;
    const lock = await store({
      staleLockMs: 4_000,
      heartbeatMs: 1_000,
      randomId() {
        if (failing) throw new Error('no more temporary files');
        return `id-${++ids}`;
      },
    }).lock('acme', { timeoutMs: 0, owner: 'run-1' });
    failing = true;
    const aborted: boolean[] = [];

    for (let second = 1; second <= 4; second++) {
      clock = T0 + second * 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
      aborted.push(lock.lost.aborted);
    }
    failing = false;

    expect(aborted).toEqual([false, false, false, true]);
    expect((lock.lost.reason as Error).message).toMatch(/its heartbeat could not be written for 4000 ms, so another run may take it/);
    await lock.release();
  });

  it('releases idempotently', async () => {
    const lock = await store().lock('acme', { timeoutMs: 0, owner: 'run-1' });

    await Promise.all([lock.release(), lock.release()]);
    await lock.release();
    const next = await store().lock('acme', { timeoutMs: 0, owner: 'run-2' });
    await lock.release();

    expect(await lockContent()).toMatchObject({ owner: 'run-2' });
    await next.release();
  });

  it('does not remove, on release, a lock that is no longer its own', async () => {
    const lock = await store().lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await rm(lockFile());
    await writeLock({ owner: 'run-2', lockId: 'another' });

    await lock.release();

    expect(await lockContent()).toMatchObject({ owner: 'run-2', lockId: 'another' });
    expect((await readdir(path.join(dir, 'acme'))).sort()).toEqual(['.lock']);
  });
});

describe('fileStateStore lock across processes', () => {
  async function childHolding(): Promise<{ child: ReturnType<typeof spawnFixture>; output: ReturnType<typeof readLines> }> {
    const child = spawnFixture('hold-lock.ts', [dir, 'acme']);
    let output!: ReturnType<typeof readLines>;
    const isLocked = new Promise<void>((resolve) => {
      output = readLines(child, (line) => {
        if (line === 'locked') resolve();
      });
    });
    await Promise.race([isLocked, output.then(({ stderr }) => Promise.reject(new Error(`child ended: ${stderr}`)))]);
    return { child, output };
  }

  /** A waiter on the real clock, polling every 10 ms. */
  function waiter(): ReturnType<typeof fileStateStore> {
    return fileStateStore(dir, {
      pollMs: 10,
      async sleep(ms) {
        sleeps.push(ms);
        await onSleep(sleeps.length);
        await delay(ms);
      },
    });
  }

  it('waits while another process holds the lock, and takes it once that process releases it', async () => {
    const { child, output } = await childHolding();
    let releaseAsked = false;
    onSleep = (count) => {
      if (count !== 3) return;
      releaseAsked = true;
      child.stdin.write('release\n');
    };

    const lock = await waiter().lock('acme', { timeoutMs: 15_000, owner: 'run-2' });
    const takenAfterRelease = releaseAsked;
    child.stdin.end();
    const { lines } = await output;

    expect(takenAfterRelease).toBe(true);
    expect(lines).toEqual(['locked', 'released']);
    expect(await lockContent()).toMatchObject({ owner: 'run-2', pid: process.pid });
    await lock.release();
  });

  it('takes the lock of a process that was killed while holding it', async () => {
    const { child, output } = await childHolding();
    const childPid = child.pid;
    expect(await lockContent()).toMatchObject({ owner: 'child-run', pid: childPid });
    let killed = false;
    onSleep = async (count) => {
      if (count !== 3) return;
      child.kill('SIGKILL');
      await output;
      killed = true;
    };

    const lock = await waiter().lock('acme', { timeoutMs: 15_000, owner: 'run-2' });

    expect(killed).toBe(true);
    expect(await lockContent()).toMatchObject({ owner: 'run-2', pid: process.pid });
    await lock.release();
  });
});

describe('fileStateStore lock file, as other runs see it', () => {
  it('is never seen empty or half-written while runs take it, refresh its heartbeat and release it', async () => {
    const holder = fileStateStore(dir, { heartbeatMs: 1, staleLockMs: 60_000 });
    const seen = { none: 0, whole: 0, broken: [] as string[] };
    let cycling = true;
    async function watch(): Promise<void> {
      while (cycling) {
        const text = await readFile(lockFile(), 'utf8').catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw error;
        });
        if (text === undefined) seen.none += 1;
        else if (parseLockFile(text) === undefined) seen.broken.push(text);
        else seen.whole += 1;
      }
    }
    const watching = [watch(), watch()];

    for (let cycle = 0; cycle < 300; cycle++) {
      const lock = await holder.lock('acme', { timeoutMs: 0, owner: `run-${cycle}` });
      // Held a little longer now and then: heartbeats rewrite it meanwhile.
      if (cycle % 20 === 0) await delay(5);
      await lock.release();
    }
    cycling = false;
    await Promise.all(watching);

    expect(seen.broken).toEqual([]);
    expect(seen.whole).toBeGreaterThan(0);
    expect(seen.none).toBeGreaterThan(0);
  });

  it.each([1, 20, 150])('is left whole or not at all by a holder killed after %i lock cycles, and taken by the next run at once', async (cycles) => {
    const child = spawnFixture('lock-cycle.ts', [dir, 'acme']);
    const { stderr } = await readLines(child, (line) => {
      if (Number(line) + 1 === cycles) child.kill('SIGKILL');
    });
    const left = await readFile(lockFile(), 'utf8').catch(() => undefined);

    // The real clock and the default staleLockMs (60 s): only the dead pid lets it be taken now.
    const lock = await fileStateStore(dir).lock('acme', { timeoutMs: 0, owner: 'next-run' });

    expect(child.signalCode, stderr).toBe('SIGKILL');
    if (left !== undefined) expect(parseLockFile(left)).toMatchObject({ owner: 'cycling-run', pid: child.pid, hostname: HOST });
    expect(await lockContent()).toMatchObject({ owner: 'next-run', pid: process.pid });
    expect((await readdir(path.join(dir, 'acme'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    await lock.release();
  });
});
