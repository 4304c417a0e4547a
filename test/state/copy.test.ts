/** copyState reads the copy back: a destination that loses or changes a write is reported. */
import { expect, it } from 'vitest';
import { copyState } from '../../engine/state/copy.ts';
import { memoryStateStore, type AppliedContract, type StateStore } from '../../engine/state/index.ts';

function applied(contractId: string, name: string): AppliedContract {
  return { contractId, fields: { Name: name }, fingerprint: `sha256:${name}`, appliedAt: '2027-01-01T00:00:00.000Z', commit: null };
}

it('copies everything and finds no difference', async () => {
  const from = memoryStateStore();
  await from.writeContract('acme', applied('1', 'a'));
  await from.writeRun('globex', { lastAppliedCommit: null, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' });
  await from.writeDriftKeys('acme', { '1': '0123456789abcdef' });
  const to = memoryStateStore();

  const result = await copyState(from, to);

  expect(result).toEqual({ copied: { tenants: 2, records: 1, runs: 1, history: 0, driftKeys: 1 }, mismatches: [] });
  expect(await to.readDriftKeys('acme')).toEqual({ '1': '0123456789abcdef' });
});

it('copies the drift memory of a tenant that has no record yet (drift ran before the first apply)', async () => {
  const from = memoryStateStore();
  await from.writeDriftKeys('acme', { '4711': '0123456789abcdef' });
  const to = memoryStateStore();

  const result = await copyState(from, to);

  expect(result).toEqual({ copied: { tenants: 1, records: 0, runs: 0, history: 0, driftKeys: 1 }, mismatches: [] });
  expect(await to.readDriftKeys('acme')).toEqual({ '4711': '0123456789abcdef' });
});

it('reports a drift memory the destination did not keep', async () => {
  const from = memoryStateStore();
  await from.writeContract('acme', applied('1', 'a'));
  await from.writeDriftKeys('acme', { '1': '0123456789abcdef' });
  const real = memoryStateStore();
  const forgetful: StateStore = { ...real, writeDriftKeys: async () => undefined };

  const result = await copyState(from, forgetful);

  expect(result.mismatches).toEqual(['tenant acme contract 1: the drift memory differs in the copy']);
});

it('reports a record the destination lost and one it changed', async () => {
  const from = memoryStateStore();
  await from.writeContract('acme', applied('1', 'a'));
  await from.writeContract('acme', applied('2', 'b'));
  await from.writeContract('acme', applied('3', 'c'));
  const real = memoryStateStore();
  // A destination that drops contract 1 and alters contract 2 as it writes them.
  const lossy: StateStore = {
    ...real,
    async writeContract(tenant, record) {
      if (record.contractId === '1') return;
      await real.writeContract(tenant, record.contractId === '2' ? { ...record, fingerprint: 'sha256:other' } : record);
    },
  };

  const { mismatches } = await copyState(from, lossy);

  expect(mismatches).toEqual([
    'tenant acme: 3 records, the copy holds 2',
    'tenant acme contract 1: the copy differs (fingerprint sha256:a, copy absent)',
    'tenant acme contract 2: the copy differs (fingerprint sha256:b, copy sha256:other)',
  ]);
});
