/**
 * A FIFO or device put in the file state store's directory (issue 41): every file the store reads
 * or appends to there is refused with one line naming it, instead of the run hanging on it.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { fileStateStore, type StateStore } from '../../engine/state/index.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog } from '../helpers/fleet.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-state-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const APPLIED = { contractId: 'C-1', fields: { Name: 'n' }, fingerprint: 'sha256:n', appliedAt: '2027-01-01T00:00:00.000Z', commit: null };

/** `operation`, failed at once if it blocks: what it rejects with. */
async function refusal(operation: Promise<unknown>): Promise<string> {
  const hung = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('hung')), 5000).unref());
  try {
    await Promise.race([operation, hung]);
  } catch (error) {
    return (error as Error).message;
  }
  return 'not refused';
}

async function fifoAt(...parts: string[]): Promise<string> {
  const file = path.join(dir, ...parts);
  await mkdir(path.dirname(file), { recursive: true });
  execFileSync('mkfifo', [file]);
  return file;
}

describe('the file state store, with a FIFO where it keeps a file', () => {
  it.each<[string, string[], (store: StateStore) => Promise<unknown>]>([
    ['the format marker', ['.format.json'], (store) => store.readTenant('acme')],
    ["a tenant's journal, read", ['acme', '.records.jsonl'], (store) => store.readTenant('acme')],
    ["a tenant's journal, appended to", ['acme', '.records.jsonl'], (store) => store.writeContract('acme', APPLIED)],
    ["a contract's record of the older layout", ['acme', 'C-1.json'], (store) => store.readTenant('acme')],
    ["a tenant's run record", ['acme', '.run.json'], (store) => store.readRun('acme')],
    ["a tenant's lock", ['acme', '.lock'], (store) => store.lockHolder('acme')],
    ['a history entry', ['.history', 'run-1.json'], (store) => store.readHistory()],
  ])('%s: refused naming the file, nothing read from it', async (_what, parts, operation) => {
    const file = await fifoAt(...parts);

    const message = await refusal(operation(fileStateStore(dir)));

    expect(message).toBe(`${file} is a FIFO (named pipe), not a regular file`);
  });

  it('a link to a device is refused too (as what it names)', async () => {
    await mkdir(path.join(dir, 'acme'), { recursive: true });
    await symlink('/dev/zero', path.join(dir, 'acme', '.run.json'));

    expect(await refusal(fileStateStore(dir).readRun('acme'))).toBe(`${path.join(dir, 'acme', '.run.json')} is a character device, not a regular file`);
  });
});

describe('a command whose file state store holds a FIFO', () => {
  let emulator: Emulator | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  it('apply: the tenant fails with one line naming the file, nothing is sent, exit 1; state history: one line, exit 1', async () => {
    const fleet = createFleet(1, 2);
    emulator = await startEmulator(fleetSeed(fleet));
    const { dir: repo, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { statePath: '.contract-sync/state' }));
    try {
      const state = path.join(repo, '.contract-sync/state');
      for (const file of ['tenant-a/.run.json', '.history/run-1.json']) {
        await mkdir(path.dirname(path.join(state, file)), { recursive: true });
        execFileSync('mkfifo', [path.join(state, file)]);
      }

      const applied = await runCli(['apply', '--auto-approve'], repo, { ...fleet.env, CONTRACT_SYNC_LOG_LEVEL: 'silent' });
      const history = await runCli(['state', 'history'], repo, fleet.env);

      expect(applied.code).toBe(1);
      expect(applied.stdout).toContain(
        `tenant-a: 0 of 2 contracts changed, 26 ops, 0 requests, 0 retries, 2 failed\n  ${state}/tenant-a/.run.json is a FIFO (named pipe), not a regular file\n`,
      );
      expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH')).toEqual([]);
      expect(history.code).toBe(1);
      expect(history.stderr).toBe(`contract-sync state history: ${state}/.history/run-1.json is a FIFO (named pipe), not a regular file\n`);
    } finally {
      await cleanup();
    }
  });
});
