import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileStateStore, parseStateRecord, serialiseStateRecord, type StateRecord } from '../../engine/state/index.ts';

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

describe('fileStateStore', () => {
  it('reads nothing for a tenant never applied', async () => {
    const known = await fileStateStore(path.join(dir, 'missing')).readTenant('acme');

    expect(known.size).toBe(0);
  });

  it('reads one record per contract, skipping temporary and foreign files', async () => {
    const record: StateRecord = { version: 1, tenant: 'acme', contractId: '4711', fields: { Name: 'A', Company: [{ Id: 1, RelationType: 'Client' }] } };
    await put('acme', '4711.json', serialiseStateRecord(record));
    await put('acme', '.4712.json.tmp', 'partial');
    await put('acme', 'README.md', 'not state');
    await put('globex', 'G-1.json', serialiseStateRecord({ version: 1, tenant: 'globex', contractId: 'G-1', fields: {} }));

    const known = await fileStateStore(dir).readTenant('acme');

    expect([...known]).toEqual([['4711', { fields: record.fields, from: 'state' }]]);
  });

  it.each([
    ['not JSON', '{', /4711\.json: not JSON/],
    ['an unknown version', '{"version":2,"tenant":"acme","contractId":"4711","fields":{}}', /state version 2 is not supported/],
    ['another contract', '{"version":1,"tenant":"acme","contractId":"4712","fields":{}}', /holds tenant "acme" contract "4712", but its path says acme 4711/],
    ['fields not an object', '{"version":1,"tenant":"acme","contractId":"4711","fields":[]}', /"fields" must be an object/],
  ])('refuses a record that is %s', async (_name, content, message) => {
    await put('acme', '4711.json', content);

    await expect(fileStateStore(dir).readTenant('acme')).rejects.toThrow(expect.objectContaining({ code: 'state-format', message: expect.stringMatching(message) }));
  });

  it('round-trips a record through its serialisation', () => {
    const record: StateRecord = { version: 1, tenant: 'acme', contractId: '4711', fields: { ValidFrom: '2027-01-01T00:00:00Z' } };

    expect(parseStateRecord(serialiseStateRecord(record), 'f', 'acme', '4711')).toEqual(record);
  });
});
