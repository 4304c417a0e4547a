import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fileStateStore, isTempFileName } from '../../engine/state/index.ts';
import { CRASH_CONTRACTS, crashContractId, crashWrite, writeNumberOf } from './fixtures/crash-records.ts';
import { readLines, spawnFixture } from './fixtures/spawn-fixture.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-crash-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// `locked`: as a run writes, under the lock, compacting the journal at each release and as it grows.
it.each([
  ['unlocked', 5],
  ['unlocked', 50],
  ['unlocked', 200],
  ['locked', 5],
  ['locked', 60],
  ['locked', 400],
])('keeps every acknowledged write whole when the %s writer is killed after %i of them', { timeout: 30_000 }, async (mode, killAfter) => {
  const child = spawnFixture('write-loop.ts', [dir, 'acme', ...(mode === 'locked' ? ['locked'] : [])]);
  const exit = once(child, 'exit');
  const { lines, stderr } = await readLines(child, (line) => {
    if (Number(line) + 1 === killAfter) child.kill('SIGKILL');
  });
  const [, signal] = (await exit) as [number | null, NodeJS.Signals | null];

  const acknowledged = lines.map(Number);
  expect(signal, stderr).toBe('SIGKILL');
  expect(acknowledged.length).toBeGreaterThanOrEqual(killAfter);
  expect(acknowledged).toEqual(acknowledged.map((_, index) => index));
  const lastWrite = new Map(acknowledged.map((n) => [crashContractId(n), n]));
  // Reading throws on any record that is not whole and yet passes its checksum.
  const store = fileStateStore(dir);
  const known = await store.readTenant('acme');
  const records = new Map((await store.listRecords('acme')).map((record) => [record.contractId, record]));
  expect([Math.min(CRASH_CONTRACTS, acknowledged.length), Math.min(CRASH_CONTRACTS, acknowledged.length + 1)]).toContain(known.size);
  for (const [contractId, last] of lastWrite) {
    const held = writeNumberOf(known.get(contractId)?.fields.Name);
    // The acknowledged write, or the one the kill interrupted after its fsync.
    expect([last, last + CRASH_CONTRACTS], contractId).toContain(held);
    expect(held).toBeLessThanOrEqual(acknowledged.length);
    const expected = crashWrite(held);
    expect(records.get(contractId)).toStrictEqual(expected);
    expect(known.get(contractId)?.fields).toEqual(expected.fields);
  }
  // The next lock holder removes what the kill left behind, and compacts the journal to one line a record.
  const lock = await fileStateStore(dir, { compactRatio: 1 }).lock('acme', { timeoutMs: 5000, owner: 'next-run' });
  expect((await readdir(path.join(dir, 'acme'))).filter(isTempFileName)).toEqual([]);
  await lock.release();
  const journal = await readFile(path.join(dir, 'acme', '.records.jsonl'), 'utf8');
  expect(journal.split('\n').filter((line) => line !== '')).toHaveLength(known.size);
  expect(await fileStateStore(dir).readTenant('acme')).toEqual(known);
});
