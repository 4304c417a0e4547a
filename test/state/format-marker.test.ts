/**
 * Issue 21, item 12: the file backend's format marker, `DIR/.format.json`. A directory without one
 * (the layout before it) is read and marked at the first write; a marker of another version is
 * refused by every operation, naming the file, before anything else is read or written. Run
 * records are written as version 2, which a contract-sync from before the marker refuses.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fileStateStore, StateFormatError, type AppliedContract, type StateStore } from '../../engine/state/index.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-format-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const APPLIED: AppliedContract = { contractId: '4711', fields: { Name: 'A' }, fingerprint: 'sha256:a', appliedAt: '2027-01-01T00:00:00.000Z', commit: null };
const MARKER = '{"format":"contract-sync-file-state","version":2}\n';

it('reads a directory without a marker (the layout before it), and marks it at the first write only', async () => {
  const store = fileStateStore(dir);
  await mkdir(path.join(dir, 'acme'));
  await writeFile(path.join(dir, 'acme', '4712.json'), JSON.stringify({ version: 1, tenant: 'acme', contractId: '4712', fields: { Name: 'old layout' } }));

  const before = await store.readTenant('acme');
  const unmarked = await readdir(dir);
  await store.writeContract('acme', APPLIED);
  await store.writeRun('acme', { lastAppliedCommit: null, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' });

  expect([...before.keys()]).toEqual(['4712']);
  expect(unmarked).toEqual(['acme']);
  expect(await readFile(path.join(dir, '.format.json'), 'utf8')).toBe(MARKER);
  // No temporary file is left, and the marker is no tenant.
  expect((await readdir(dir)).sort()).toEqual(['.format.json', 'acme']);
  expect(await store.listTenants()).toEqual(['acme']);
  // The run record is version 2: a contract-sync from before the marker reads only version 1 and refuses it.
  expect(JSON.parse(await readFile(path.join(dir, 'acme', '.run.json'), 'utf8')).version).toBe(2);
  expect([...(await fileStateStore(dir).readTenant('acme')).keys()].sort()).toEqual(['4711', '4712']);
});

const operations: [string, (store: StateStore) => Promise<unknown>][] = [
  ['readTenant', (store) => store.readTenant('acme')],
  ['readRun', (store) => store.readRun('acme')],
  ['listTenants', (store) => store.listTenants()],
  ['readHistory', (store) => store.readHistory()],
  ['writeContract', (store) => store.writeContract('acme', APPLIED)],
  ['writeRun', (store) => store.writeRun('acme', { lastAppliedCommit: null, pending: [], updatedAt: 'x' })],
  ['lock', (store) => store.lock('acme', { timeoutMs: 0, owner: 'run-1' })],
];

it.each([
  [
    'a newer format',
    '{"format":"contract-sync-file-state","version":3}\n',
    'the state directory is in format version 3, newer than the one this contract-sync reads (version 2); a newer contract-sync wrote this state: upgrade contract-sync to use it',
  ],
  [
    'an older format',
    '{"format":"contract-sync-file-state","version":1}\n',
    'the state directory is in format version 1, not one this contract-sync reads (version 2)',
  ],
  [
    'no marker at all',
    'hello',
    'not a contract-sync state format marker (expected {"format":"contract-sync-file-state","version":2}); refusing to read or write this state directory',
  ],
])('refuses %s in every operation with one message naming the marker, and writes nothing', async (_name, content, message) => {
  await writeFile(path.join(dir, '.format.json'), content);

  for (const [name, operation] of operations) {
    const error = await operation(fileStateStore(dir)).catch((caught: unknown) => caught);
    expect(error, name).toBeInstanceOf(StateFormatError);
    expect((error as Error).message, name).toBe(`${path.join(dir, '.format.json')}: ${message}`);
  }
  expect(await readdir(dir)).toEqual(['.format.json']);
});
