/**
 * Two runs on the same state at once, as two real processes of bin/contract-sync-dev.js (the sources)
 * against the emulator: both must finish without waiting out a lock timeout, and no contract may
 * be patched twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diffContract } from '../../engine/plan/diff.ts';
import { parseLockFile } from '../../engine/state/file-format.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog, type Fleet } from '../helpers/fleet.ts';

const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));
const REPORT_LOCK_LOOKS = fileURLToPath(new URL('fixtures/report-lock-looks.mjs', import.meta.url));
// Short, so that a deadlock shows as a failed run within seconds instead of after the default minute.
const LOCK_TIMEOUT_SECONDS = '10';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

interface ChildRun {
  readonly args: readonly string[];
  readonly code: number | null;
  readonly output: string;
}

interface Started {
  readonly child: ChildProcess;
  readonly finished: Promise<ChildRun>;
  /** Resolves once the run has looked at `tenant`'s lock (only with `reportLockLooks`). */
  lookedAtLock(tenant: string): Promise<void>;
}

function start(args: readonly string[], cwd: string, env: Record<string, string>, reportLockLooks = false): Started {
  const preload = reportLockLooks ? ['--import', pathToFileURL(REPORT_LOCK_LOOKS).href] : [];
  // process.execPath itself, not a wrapper: the child's pid is the pid its locks record.
  const child = spawn(process.execPath, [...preload, BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, CONTRACT_SYNC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const looks = new Map<string, () => void>();
  const looked = new Set<string>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    for (const [, tenant] of chunk.matchAll(/^looked at the lock of (\S+)$/gm)) {
      looked.add(tenant!);
      looks.get(tenant!)?.();
    }
  });
  const finished = new Promise<ChildRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ args, code, output }));
  });
  return {
    child,
    finished,
    lookedAtLock: (tenant) => (looked.has(tenant) ? Promise.resolve() : new Promise((resolve) => looks.set(tenant, resolve))),
  };
}

function run(args: readonly string[], cwd: string, env: Record<string, string>): Promise<ChildRun> {
  return start(args, cwd, env).finished;
}

async function setup(): Promise<{ fleet: Fleet; dir: string; changed: number }> {
  const fleet = createFleet(3, 30);
  emulator = await startEmulator(fleetSeed(fleet));
  // 50 requests/s per tenant: sending takes long enough for the two runs to overlap.
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true, rate: '{ requestsPerSecond: 50, concurrency: 2, maxInFlight: 4 }' }));
  cleanups.push(cleanup);
  return { fleet, dir, changed: [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0) };
}

/** Both runs ended well, every changed contract was patched exactly once, and the service holds the desired state. */
async function expectBothFinished(runs: readonly ChildRun[], fleet: Fleet, changed: number): Promise<void> {
  for (const { args, code, output } of runs) expect(code, `${args.join(' ')}:\n${output}`).toBe(0);
  const patched = new Map<string, number>();
  const log = await requestLog(emulator!);
  for (const entry of log) {
    if (entry.kind === 'api' && entry.method === 'PATCH' && entry.status === 204) patched.set(entry.path, (patched.get(entry.path) ?? 0) + 1);
  }
  expect([...patched].filter(([, count]) => count > 1)).toEqual([]);
  expect(patched.size).toBe(changed);
  expect(log.filter((entry) => entry.kind === 'api' && entry.method === 'PATCH' && entry.status !== 204)).toEqual([]);
  for (const set of fleet.desired) {
    for (const contract of set.contracts) expect(diffContract(await liveContract(emulator!, set.tenant, contract.id), contract.fields)).toEqual([]);
  }
}

describe('two runs on the same state', () => {
  it.each([
    ['apply', 'apply', ['apply', '--lock-timeout', LOCK_TIMEOUT_SECONDS]],
    ['apply', 'drift --fix', ['drift', '--fix', '--lock-timeout', LOCK_TIMEOUT_SECONDS]],
  ])('%s and %s started at once both finish, and every contract is patched once', { timeout: 60_000 }, async (_first, _second, secondArgs) => {
    const { fleet, dir, changed } = await setup();

    const runs = await Promise.all([run(['apply', '--lock-timeout', LOCK_TIMEOUT_SECONDS], dir, fleet.env), run(secondArgs, dir, fleet.env)]);

    await expectBothFinished(runs, fleet, changed);
  });

  // SIGSTOP and SIGCONT do not exist on Windows.
  it.skipIf(process.platform === 'win32')(
    'both finish when the first is paused while it waits for a lock and the second reaches its locks meanwhile',
    { timeout: 60_000 },
    async () => {
      // The schedule that deadlocked runs taking every lock at once, forced: the first run holds
      // tenant-a and tenant-b and waits for tenant-c (held by the test) when the second run reaches
      // its locks; paused there, it lets the second run take tenant-c if that run asks for it
      // before tenant-a.
      const { fleet, dir, changed } = await setup();
      const stateDir = path.join(dir, '.contract-sync/state');
      async function lockPid(tenant: string): Promise<number | undefined> {
        const text = await readFile(path.join(stateDir, tenant, '.lock'), 'utf8').catch(() => undefined);
        return text === undefined ? undefined : parseLockFile(text)?.pid;
      }
      async function waitFor(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
        for (const deadline = Date.now() + ms; Date.now() < deadline; await delay(20)) if (await condition()) return true;
        return false;
      }
      const held = await fileStateStore(stateDir).lock('tenant-c', { timeoutMs: 0, owner: 'test' });
      const args = ['apply', '--lock-timeout', LOCK_TIMEOUT_SECONDS];

      const first = start(args, dir, fleet.env);
      const firstHolds = await waitFor(async () => (await lockPid('tenant-a')) === first.child.pid && (await lockPid('tenant-b')) === first.child.pid, 30_000);
      const second = start(args, dir, fleet.env, true);
      await Promise.race([second.lookedAtLock('tenant-a'), second.finished]);
      first.child.kill('SIGSTOP');
      await held.release();
      // A run taking every lock at once is polling tenant-c now and takes it; in order, it waits for tenant-a first.
      const secondTookC = await waitFor(async () => (await lockPid('tenant-c')) === second.child.pid, 2_000);
      first.child.kill('SIGCONT');
      const runs = await Promise.all([first.finished, second.finished]);

      expect(firstHolds).toBe(true);
      await expectBothFinished(runs, fleet, changed);
      expect(secondTookC).toBe(false);
    },
  );
});
