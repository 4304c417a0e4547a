import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  fileStateStore,
  parseStateRecord,
  serialiseRunRecord,
  serialiseStateRecord,
  type AppliedContract,
  type FileStateStoreOptions,
  type StateRecord,
  type TenantRunRecord,
} from '../../engine/state/index.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-state-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function put(tenant: string, name: string, content: string): Promise<void> {
  await mkdir(path.join(dir, tenant), { recursive: true });
  await writeFile(path.join(dir, tenant, name), content);
}

function applied(contractId: string, name: string, commit: string | null = 'a'.repeat(40)): AppliedContract {
  return {
    contractId,
    fields: { Name: name, Company: [{ Id: 1, RelationType: 'Client' }] },
    fingerprint: `sha256:${name}`,
    appliedAt: '2027-01-01T00:00:00.000Z',
    commit,
  };
}

const RUN: TenantRunRecord = {
  lastAppliedCommit: 'b'.repeat(40),
  pending: [
    { contractId: '4711', outcome: 'failed', reason: '409 conflict', since: '2027-01-01T00:00:00.000Z' },
    { contractId: '4712', outcome: 'interrupted', reason: 'run stopped', since: '2027-01-01T00:00:00.000Z' },
  ],
  updatedAt: '2027-01-01T00:05:00.000Z',
};

describe('fileStateStore: reading', () => {
  it('reads nothing for a tenant never applied', async () => {
    const known = await fileStateStore(path.join(dir, 'missing')).readTenant('acme');

    expect(known.size).toBe(0);
  });

  it('reads one record per contract, skipping temporary, lock, run and foreign files', async () => {
    const record: StateRecord = { version: 1, tenant: 'acme', contractId: '4711', fields: { Name: 'A', Company: [{ Id: 1, RelationType: 'Client' }] } };
    await put('acme', '4711.json', serialiseStateRecord(record));
    await put('acme', '.4712.json.tmp', 'partial');
    await put('acme', '.4713.json.0123abcd.tmp', '{"version":1,');
    await put('acme', '.lock', '{"owner":"run-1"}');
    await put('acme', '.lock.0123abcd.stale', '');
    await put('acme', '.run.json', serialiseRunRecord('acme', RUN));
    await put('acme', 'README.md', 'not state');
    await put('globex', 'G-1.json', serialiseStateRecord({ version: 1, tenant: 'globex', contractId: 'G-1', fields: {} }));

    const known = await fileStateStore(dir).readTenant('acme');

    expect([...known]).toEqual([['4711', { fields: record.fields, from: 'state' }]]);
  });

  it('reads only the contracts asked for, skipping those without a record', async () => {
    const store = fileStateStore(dir);
    for (const id of ['4711', '4712', '4713']) await store.writeContract('acme', applied(id, `contract ${id}`));

    const known = await store.readTenant('acme', new Set(['4713', '4711', '9999']));
    const none = await fileStateStore(path.join(dir, 'missing')).readTenant('acme', new Set(['4711']));

    expect([...known.keys()]).toEqual(['4711', '4713']);
    expect(known.get('4713')).toEqual({ fields: applied('4713', 'contract 4713').fields, from: 'state' });
    expect(none.size).toBe(0);
  });

  it('never reads another file for a ContractId that looks like a path: ids live in the journal', async () => {
    await put('globex', 'G-1.json', '{"version":1,"tenant":"globex","contractId":"G-1","fields":{}}');

    const known = await fileStateStore(dir).readTenant('acme', new Set(['../globex/G-1']));

    expect(known.size).toBe(0);
  });

  it.each([
    ['not JSON', '{', /4711\.json: not JSON/],
    ['an unknown version', '{"version":2,"tenant":"acme","contractId":"4711","fields":{}}', /state version 2 is not supported/],
    ['another contract', '{"version":1,"tenant":"acme","contractId":"4712","fields":{}}', /holds tenant "acme" contract "4712", but its path says acme 4711/],
    ['fields not an object', '{"version":1,"tenant":"acme","contractId":"4711","fields":[]}', /"fields" must be an object/],
    ['a commit that is a number', '{"version":1,"tenant":"acme","contractId":"4711","fields":{},"commit":1}', /"commit" must be a string or null/],
    ['a fingerprint that is not a string', '{"version":1,"tenant":"acme","contractId":"4711","fields":{},"fingerprint":{}}', /"fingerprint" must be a string/],
  ])('refuses a record that is %s', async (_name, content, message) => {
    await put('acme', '4711.json', content);

    await expect(fileStateStore(dir).readTenant('acme')).rejects.toThrow(
      expect.objectContaining({ code: 'state-format', message: expect.stringMatching(message) }),
    );
  });

  it('round-trips a record through its serialisation, with and without the apply metadata', () => {
    const old: StateRecord = { version: 1, tenant: 'acme', contractId: '4711', fields: { ValidFrom: '2027-01-01T00:00:00Z' } };
    const current: StateRecord = { ...old, appliedAt: '2027-01-01T00:00:00.000Z', commit: null, fingerprint: 'sha256:0' };

    expect(parseStateRecord(serialiseStateRecord(old), 'f', 'acme', '4711')).toStrictEqual(old);
    expect(parseStateRecord(serialiseStateRecord(current), 'f', 'acme', '4711')).toStrictEqual(current);
  });
});

describe('fileStateStore: writing contracts', () => {
  it('writes a record a reader reads back, creating the tenant directory, with fingerprint, time and commit', async () => {
    const store = fileStateStore(path.join(dir, 'state', 'nested'));

    await store.writeContract('acme', applied('4711', 'first'));

    const journal = await readFile(path.join(dir, 'state', 'nested', 'acme', '.records.jsonl'), 'utf8');
    expect(journal).toMatch(
      /^\n[0-9a-f]{8} \{"v":1,"id":"4711","appliedAt":"2027-01-01T00:00:00.000Z","commit":"a{40}","fingerprint":"sha256:first","fields":\{"Name":"first",/,
    );
    expect(await store.readRecord('acme', '4711')).toStrictEqual(applied('4711', 'first'));
    expect([...(await store.readTenant('acme'))]).toEqual([['4711', { fields: applied('4711', 'first').fields, from: 'state' }]]);
  });

  it("overwrites a record by appending to the tenant's journal, leaving no other file behind", async () => {
    const store = fileStateStore(dir);
    await store.writeContract('acme', applied('4711', 'first'));

    await store.writeContract('acme', applied('4711', 'second', null));
    await store.writeContract('acme', applied('4712', 'other'));

    const known = await store.readTenant('acme');
    expect(known.get('4711')?.fields.Name).toBe('second');
    expect(known.get('4712')?.fields.Name).toBe('other');
    expect((await store.readRecord('acme', '4711'))?.commit).toBeNull();
    expect(await readdir(path.join(dir, 'acme'))).toEqual(['.records.jsonl']);
    expect((await readFile(path.join(dir, 'acme', '.records.jsonl'), 'utf8')).split('\n').filter((line) => line !== '')).toHaveLength(3);
  });

  it('never shows a reader a partial record while the record is replaced', async () => {
    const store = fileStateStore(dir);
    await store.writeContract('acme', applied('4711', 'v0'));
    let writing = true;
    const writer = (async () => {
      for (let version = 1; version <= 100; version++) {
        await store.writeContract('acme', { ...applied('4711', `v${version}`), fields: { Name: `v${version}`, Description: 'x'.repeat(20_000 + version) } });
      }
      writing = false;
    })();
    const seen = new Set<unknown>();

    while (writing) seen.add((await store.readTenant('acme')).get('4711')?.fields.Name);
    await writer;

    expect(seen.size).toBeGreaterThan(1);
    expect([...seen].every((name) => typeof name === 'string' && /^v\d+$/.test(name))).toBe(true);
  });

  it('writes contracts concurrently, each one whole', async () => {
    const store = fileStateStore(dir);
    const ids = Array.from({ length: 50 }, (_, index) => `C-${index}`);

    await Promise.all(ids.map((id) => store.writeContract('acme', applied(id, `name ${id}`))));

    const known = await store.readTenant('acme');
    expect([...known.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) expect(known.get(id)?.fields.Name).toBe(`name ${id}`);
  });

  it.each([
    ['a tenant that escapes the directory', '../acme', applied('4711', 'x'), /tenant: expected a name matching/],
    ['a ContractId with a control character', 'acme', applied('47\u000011', 'x'), /contractId: a ContractId is non-empty/],
    ['a ContractId with a trailing space', 'acme', applied('4711 ', 'x'), /contractId: a ContractId is non-empty/],
    ['a record without fingerprint', 'acme', { ...applied('4711', 'x'), fingerprint: undefined as unknown as string }, /"fingerprint" must be a string/],
  ])('refuses %s', async (_name, tenant, record, message) => {
    const store = fileStateStore(dir);

    await expect(store.writeContract(tenant, record)).rejects.toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('fileStateStore: run records', () => {
  it('reads nothing before the first run', async () => {
    expect(await fileStateStore(dir).readRun('acme')).toBeUndefined();
  });

  it('writes a run record that reads back, and replaces it', async () => {
    const store = fileStateStore(dir);
    await store.writeRun('acme', RUN);
    const next: TenantRunRecord = { lastAppliedCommit: null, pending: [], updatedAt: '2027-01-02T00:00:00.000Z' };

    const first = await store.readRun('acme');
    await store.writeRun('acme', next);

    expect(first).toStrictEqual(RUN);
    expect(await store.readRun('acme')).toStrictEqual(next);
    expect(await readdir(path.join(dir, 'acme'))).toEqual(['.run.json']);
    expect((await store.readTenant('acme')).size).toBe(0);
  });

  it("keeps each pending entry's file and the planning fingerprint, on disk and read back", async () => {
    const store = fileStateStore(dir);
    const record: TenantRunRecord = {
      lastAppliedCommit: 'c'.repeat(40),
      planningFingerprint: 'sha256:planning',
      pending: [{ contractId: '4711', outcome: 'unknown', reason: 'no answer', since: '2027-01-01T00:00:00.000Z', file: 'contracts/acme.yaml' }],
      updatedAt: '2027-01-01T00:05:00.000Z',
    };

    await store.writeRun('acme', record);

    expect(await store.readRun('acme')).toStrictEqual(record);
    expect(JSON.parse(await readFile(path.join(dir, 'acme', '.run.json'), 'utf8'))).toMatchObject({
      planningFingerprint: 'sha256:planning',
      pending: [{ contractId: '4711', file: 'contracts/acme.yaml' }],
    });
  });

  it('reads a run record written before pending entries had a file, leaving the file out', async () => {
    await put(
      'acme',
      '.run.json',
      '{"version":1,"tenant":"acme","lastAppliedCommit":null,"pending":[{"contractId":"4711","outcome":"failed","reason":"r","since":"s"}],"updatedAt":"u"}',
    );

    const record = await fileStateStore(dir).readRun('acme');

    expect(record).toStrictEqual({ lastAppliedCommit: null, pending: [{ contractId: '4711', outcome: 'failed', reason: 'r', since: 's' }], updatedAt: 'u' });
  });

  it.each([
    ['not JSON', '{"version":1', /not JSON/],
    ['an unknown version', '{"version":7,"tenant":"acme","lastAppliedCommit":null,"pending":[],"updatedAt":"x"}', /state version 7 is not supported/],
    [
      'another tenant',
      '{"version":1,"tenant":"globex","lastAppliedCommit":null,"pending":[],"updatedAt":"x"}',
      /holds tenant "globex", but its path says acme/,
    ],
    [
      'a pending entry with an unknown outcome',
      '{"version":1,"tenant":"acme","lastAppliedCommit":null,"pending":[{"contractId":"1","outcome":"lost","reason":"r","since":"s"}],"updatedAt":"x"}',
      /"pending\[0\]" must be/,
    ],
    ['without updatedAt', '{"version":1,"tenant":"acme","lastAppliedCommit":null,"pending":[]}', /"updatedAt" must be a string/],
    [
      'a pending entry whose file is not a string',
      '{"version":1,"tenant":"acme","lastAppliedCommit":null,"pending":[{"contractId":"1","outcome":"failed","reason":"r","since":"s","file":7}],"updatedAt":"x"}',
      /"pending\[0\]\.file" must be a string/,
    ],
    [
      'a planning fingerprint that is not a string',
      '{"version":1,"tenant":"acme","lastAppliedCommit":null,"planningFingerprint":1,"pending":[],"updatedAt":"x"}',
      /"planningFingerprint" must be a string/,
    ],
  ])('refuses a run record that is %s, naming its file', async (_name, content, message) => {
    await put('acme', '.run.json', content);

    const error = await fileStateStore(dir)
      .readRun('acme')
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'state-format', file: path.join(dir, 'acme', '.run.json') });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.startsWith(path.join(dir, 'acme', '.run.json'))).toBe(true);
  });
});

describe('fileStateStore: options', () => {
  it.each<[string, FileStateStoreOptions, string]>([
    ['staleLockMs zero', { staleLockMs: 0 }, 'options.staleLockMs: expected a finite number > 0, got 0'],
    ['pollMs negative', { pollMs: -1 }, 'options.pollMs: expected a finite number > 0, got -1'],
    ['heartbeatMs not a number', { heartbeatMs: '5' as unknown as number }, 'options.heartbeatMs: expected a finite number > 0, got "5"'],
    ['heartbeatMs not below staleLockMs', { staleLockMs: 1000, heartbeatMs: 1000 }, 'options.heartbeatMs: expected less than staleLockMs (1000), got 1000'],
    ['now not a function', { now: 5 as unknown as () => number }, 'options.now: expected a function, got 5'],
    ['hostname empty', { hostname: '' }, 'options.hostname: expected a non-empty string, got ""'],
    ['pid not an integer', { pid: 1.5 }, 'options.pid: expected an integer > 0, got 1.5'],
    [
      'timers without clearInterval',
      { timers: { setInterval: () => 0 } as never },
      'options.timers: expected { setInterval, clearInterval } functions, got [object Object]',
    ],
  ])('refuses %s with a TypeError naming it', (_name, options, message) => {
    expect(() => fileStateStore(dir, options)).toThrow(new TypeError(message));
  });

  it.each([
    [{ timeoutMs: -1, owner: 'run-1' }, 'options.timeoutMs: expected a number >= 0, got -1'],
    [{ timeoutMs: Number.NaN, owner: 'run-1' }, 'options.timeoutMs: expected a number >= 0, got NaN'],
    [{ timeoutMs: 0, owner: '' }, 'options.owner: expected a non-empty string, got ""'],
  ])('refuses lock options %j', async (options, message) => {
    await expect(fileStateStore(dir).lock('acme', options)).rejects.toThrow(new TypeError(message));
  });
});
