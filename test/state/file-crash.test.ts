import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fileStateStore, isTempFileName, parseStateRecord } from '../../engine/state/index.ts';
import { CRASH_CONTRACTS, crashContractId, crashWrite, writeNumberOf } from './fixtures/crash-records.ts';
import { readLines, spawnFixture } from './fixtures/spawn-fixture.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-crash-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it.each([5, 50, 200])('keeps every acknowledged write whole when the writer is killed after %i of them', async (killAfter) => {
  const child = spawnFixture('write-loop.ts', [dir, 'acme']);
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
  // Reading throws on any torn record.
  const known = await fileStateStore(dir).readTenant('acme');
  for (const [contractId, last] of lastWrite) {
    const file = path.join(dir, 'acme', `${contractId}.json`);
    const record = parseStateRecord(await readFile(file, 'utf8'), file, 'acme', contractId);
    const held = writeNumberOf(record.fields.Name);
    // The acknowledged write, or the one the kill interrupted after its rename.
    expect([last, last + CRASH_CONTRACTS], contractId).toContain(held);
    expect(held).toBeLessThanOrEqual(acknowledged.length);
    const expected = crashWrite(held);
    expect(record).toStrictEqual({ version: 1, tenant: 'acme', ...expected });
    expect(known.get(contractId)?.fields).toEqual(expected.fields);
  }
  // What the kill left behind is removed by the next lock holder.
  const lock = await fileStateStore(dir).lock('acme', { timeoutMs: 0, owner: 'next-run' });
  expect((await readdir(path.join(dir, 'acme'))).filter(isTempFileName)).toEqual([]);
  await lock.release();
});
