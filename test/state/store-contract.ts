/**
 * The StateStore contract, one suite for every backend (memory, file, PostgreSQL), so that the
 * backends cannot drift apart: records, `only`, run records and their pending entries, locks with
 * contention, recovery of a dead holder's lock, and no acknowledged write lost to a SIGKILL.
 */
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LastAppliedChangedError,
  LockLostError,
  LockTimeoutError,
  type AppliedContract,
  type RunHistoryEntry,
  type StateStore,
  type TenantRunRecord,
} from '../../engine/state/index.ts';
import { CRASH_CONTRACTS, crashContractId, crashWrite, writeNumberOf } from './fixtures/crash-records.ts';
import { readLines, spawnFixture } from './fixtures/spawn-fixture.ts';

export interface StoreHarness {
  /** A store on this test's location; each call is another instance, as another run would open. */
  open(): Promise<StateStore>;
  /**
   * How a child process opens the same location (fixtures/store-child.ts); absent for a backend that
   * lives in one process (memory), whose locks and records die with it.
   */
  readonly child?: { readonly backend: 'file' | 'postgres'; readonly location: string; readonly schema?: string };
  cleanup?(): Promise<void>;
}

function applied(contractId: string, name: string, extra: Partial<AppliedContract> = {}): AppliedContract {
  return {
    contractId,
    fields: { Name: name, Company: [{ Id: 12, RelationType: 'Supplier' }] },
    fingerprint: `sha256:${name}`,
    appliedAt: '2027-01-01T00:00:00.000Z',
    commit: null,
    ...extra,
  };
}

const RUN: TenantRunRecord = {
  lastAppliedCommit: 'a'.repeat(40),
  planningFingerprint: 'sha256:planning',
  pending: [
    { contractId: '4711', outcome: 'failed', reason: 'HTTP 400: Name too long', since: '2027-01-01T00:00:00.000Z', file: 'contracts/acme.yaml' },
    { contractId: '4712', outcome: 'unknown', reason: 'connection reset after sending', since: '2027-01-01T00:00:00.000Z' },
    { contractId: '4713', outcome: 'interrupted', reason: 'the run stopped', since: '2027-01-01T00:00:00.000Z', file: 'contracts/acme.yaml' },
  ],
  updatedAt: '2027-01-01T00:01:00.000Z',
};

function entry(runId: string, finishedAt: string, tenants: readonly string[]): RunHistoryEntry {
  return {
    runId,
    command: 'apply',
    startedAt: '2027-01-01T00:00:00.000Z',
    finishedAt,
    commit: 'c'.repeat(40),
    startedBy: { ci: 'github', actor: 'octocat', url: 'https://github.com/acme/contracts/actions/runs/1' },
    tenants: tenants
      .map((tenant) => ({ tenant, changed: 2, applied: 1, failed: 1, error: tenant === 'globex' ? 'token refused' : undefined }))
      .map(({ error, ...rest }) => (error === undefined ? rest : { ...rest, error })),
  };
}

/** Starts a child holding the tenant's lock; resolves once it holds it. */
async function startHolder(child: NonNullable<StoreHarness['child']>, tenant: string): Promise<{ kill(): Promise<void> }> {
  const process = spawnFixture('store-child.ts', [child.backend, child.location, 'hold', tenant, ...(child.schema === undefined ? [] : [child.schema])]);
  const exited = once(process, 'exit');
  await new Promise<void>((resolve, reject) => {
    const output = readLines(process, (line) => {
      if (line === 'locked') resolve();
    });
    void output.then(({ stderr }) => reject(new Error(`the lock holder ended before it held the lock: ${stderr}`)));
  });
  return {
    async kill() {
      process.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * `acrossProcesses`: the backend's records and locks outlive a process (file, PostgreSQL), so the
 * cases with a child process killed apply.
 */
export function describeStateStore(name: string, makeHarness: () => Promise<StoreHarness>, { acrossProcesses }: { readonly acrossProcesses: boolean }): void {
  describe(`StateStore contract: ${name}`, () => {
    let harness: StoreHarness;
    const opened: StateStore[] = [];

    async function open(): Promise<StateStore> {
      const store = await harness.open();
      opened.push(store);
      return store;
    }

    beforeEach(async () => {
      harness = await makeHarness();
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await harness.cleanup?.();
    });

    it('reads nothing for a tenant never applied, then every record written, as another instance sees them', async () => {
      const writer = await open();
      const empty = await writer.readTenant('acme');

      await writer.writeContract('acme', applied('4711', 'first'));
      await writer.writeContract('acme', applied('4712', 'other', { commit: 'b'.repeat(40) }));
      await writer.writeContract('acme', applied('4711', 'second'));
      await writer.writeContract('globex', applied('4711', 'globex'));
      const known = await (await open()).readTenant('acme');

      expect(empty.size).toBe(0);
      expect([...known].sort(([a], [b]) => a.localeCompare(b))).toEqual([
        ['4711', { fields: applied('4711', 'second').fields, from: 'state' }],
        ['4712', { fields: applied('4712', 'other').fields, from: 'state' }],
      ]);
      // Field order is kept, as written.
      expect(Object.keys(known.get('4711')!.fields)).toEqual(['Name', 'Company']);
    });

    it('reads only the contracts asked for, skipping those without a record', async () => {
      const store = await open();
      for (const id of ['4711', '4712', '4713']) await store.writeContract('acme', applied(id, id));

      const known = await store.readTenant('acme', new Set(['4713', '4711', '9999']));
      const none = await store.readTenant('acme', new Set());

      expect([...known.keys()].sort()).toEqual(['4711', '4713']);
      expect(none.size).toBe(0);
    });

    it('refuses a tenant or contract id no record may have (TypeError)', async () => {
      const store = await open();

      await expect(store.readTenant('../etc')).rejects.toThrow(TypeError);
      await expect(store.writeContract('acme', applied(' 4711', 'x'))).rejects.toThrow(TypeError);
      await expect(store.readTenant('acme', new Set(['a\nb']))).rejects.toThrow(TypeError);
    });

    it('keeps ContractIds of any shape the service could have, each as its own record', async () => {
      const ids = ['C/2024/001', '../4711', '.run', 'A B', 'Vertrag-ä', '50%?#x', 'say "hi"', 'C:\\files', '契約-7'];
      const store = await open();

      for (const id of ids) await store.writeContract('acme', applied(id, `name ${id}`));
      const known = await (await open()).readTenant('acme');
      // Asked for by id: ids beyond ASCII, or that JSON writes with an escape, too.
      const asked = ['../4711', 'A B', 'Vertrag-ä', 'say "hi"', 'C:\\files', '契約-7'];
      const some = await (await open()).readTenant('acme', new Set(asked));

      expect([...known.keys()].sort()).toEqual([...ids].sort());
      for (const id of ids) expect(known.get(id)?.fields.Name).toBe(`name ${id}`);
      expect([...some.keys()].sort()).toEqual([...asked].sort());
      expect(await store.readRecord('acme', 'C/2024/001')).toStrictEqual(applied('C/2024/001', 'name C/2024/001'));
      expect(await store.readRecord('acme', 'Vertrag-ä')).toStrictEqual(applied('Vertrag-ä', 'name Vertrag-ä'));
      expect(await store.readRecord('acme', 'say "hi"')).toStrictEqual(applied('say "hi"', 'name say "hi"'));
      expect(await store.removeRecord('acme', '契約-7')).toBe(true);
      expect((await (await open()).readTenant('acme')).has('契約-7')).toBe(false);
    });

    it('keeps run records with their pending entries, and replaces them', async () => {
      const store = await open();
      const before = await store.readRun('acme');

      await store.writeRun('acme', RUN);
      const first = await (await open()).readRun('acme');
      const next: TenantRunRecord = { lastAppliedCommit: null, pending: [], updatedAt: '2027-01-02T00:00:00.000Z' };
      await store.writeRun('acme', next);

      expect(before).toBeUndefined();
      expect(first).toStrictEqual(RUN);
      expect(await store.readRun('acme')).toStrictEqual(next);
      expect(await store.readRun('globex')).toBeUndefined();
    });

    it('makes a second run wait for a held tenant, names the holder when it gives up, and lets it in after release', async () => {
      const first = await open();
      const second = await open();
      const held = await first.lock('acme', { timeoutMs: 0, owner: 'run-1' });

      const refused = await second.lock('acme', { timeoutMs: 150, owner: 'run-2' }).catch((error: unknown) => error);
      const other = await second.lock('globex', { timeoutMs: 0, owner: 'run-2' });
      const waiting = second.lock('acme', { timeoutMs: 10_000, owner: 'run-2' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await held.release();
      await held.release();
      const taken = await waiting;

      expect(refused).toBeInstanceOf(LockTimeoutError);
      expect((refused as LockTimeoutError).tenant).toBe('acme');
      expect((refused as Error).message).toMatch(/^tenant "acme" is locked by another run \(owner "run-1"/);
      expect((refused as Error).message).toMatch(/gave up after waiting \d+ ms/);
      expect(taken.tenant).toBe('acme');
      await expect(first.lock('acme', { timeoutMs: 0, owner: 'run-1' })).rejects.toThrow(/owner "run-2"/);
      await taken.release();
      await other.release();
    });

    it('records a run commit only over the one its writer read (compare-and-set on lastAppliedCommit)', async () => {
      const older = await open();
      const newer = await open();
      const c0 = '0'.repeat(40);
      const c1 = '1'.repeat(40);
      const c2 = '2'.repeat(40);
      function record(commit: string | null): TenantRunRecord {
        return { lastAppliedCommit: commit, pending: [], updatedAt: '2027-01-01T00:00:00.000Z' };
      }
      // No record yet reads as null: a writer that read some commit is refused.
      const none = await older.writeRun('acme', record(c1), { lastAppliedCommit: c0 }).catch((error: unknown) => error);
      await older.writeRun('acme', record(c0), { lastAppliedCommit: null });
      // Both runs read c0; the newer one records c2 first, then the older one tries c1.
      await newer.writeRun('acme', record(c2), { lastAppliedCommit: c0 });
      const lost = await older.writeRun('acme', record(c1), { lastAppliedCommit: c0 }).catch((error: unknown) => error);

      expect(none).toBeInstanceOf(LastAppliedChangedError);
      expect((none as LastAppliedChangedError).current).toBeNull();
      expect(lost).toBeInstanceOf(LastAppliedChangedError);
      expect(lost).toMatchObject({ tenant: 'acme', expected: c0, current: c2 });
      expect((lost as Error).message).toBe(
        `skipped: the last applied commit of tenant acme changed to ${c2} while this run held its lock (it read ${c0}); this run's commit is not recorded over it`,
      );
      expect((await (await open()).readRun('acme'))?.lastAppliedCommit).toBe(c2);
      // The same commit again (the record a run writes before its first PATCH) is no change.
      await newer.writeRun('acme', { ...record(c2), pending: RUN.pending }, { lastAppliedCommit: c2 });
      expect((await newer.readRun('acme'))?.pending).toStrictEqual(RUN.pending);
    });

    it('refuses the writes of a holder whose lock was taken away, and fires its lost signal (fencing)', async () => {
      const oldRun = await open();
      const newRun = await open();
      const oldLock = await oldRun.lock('acme', { timeoutMs: 0, owner: 'run-1' });
      await oldRun.writeContract('acme', applied('4711', 'by run-1'), { lock: oldLock });
      await oldRun.writeRun('acme', { ...RUN, lastAppliedCommit: null }, { lock: oldLock, lastAppliedCommit: null });
      const aborted = oldLock.lost.aborted;

      await newRun.forceUnlock('acme');
      const newLock = await newRun.lock('acme', { timeoutMs: 5000, owner: 'run-2' });
      await newRun.writeContract('acme', applied('4711', 'by run-2'), { lock: newLock });
      const contract = await oldRun.writeContract('acme', applied('4711', 'late run-1'), { lock: oldLock }).catch((error: unknown) => error);
      const run = await oldRun.writeRun('acme', RUN, { lock: oldLock }).catch((error: unknown) => error);

      expect(aborted).toBe(false);
      expect(newLock.fence).not.toBe(oldLock.fence);
      expect(contract).toBeInstanceOf(LockLostError);
      expect((contract as Error).message).toMatch(/^lost the lock of tenant acme: .+; nothing more is sent or recorded for it by this run$/);
      expect(run).toBeInstanceOf(LockLostError);
      expect(oldLock.lost.aborted).toBe(true);
      expect(oldLock.lost.reason).toBeInstanceOf(LockLostError);
      expect(newLock.lost.aborted).toBe(false);
      expect((await newRun.readRecord('acme', '4711'))?.fields.Name).toBe('by run-2');
      expect((await newRun.readRun('acme'))?.lastAppliedCommit).toBeNull();
      await newLock.release();
      // A released lock guards no write either.
      await expect(newRun.writeContract('acme', applied('4711', 'after release'), { lock: newLock })).rejects.toBeInstanceOf(LockLostError);
      await oldLock.release();
    });

    it('never lets two lockers of one instance hold one tenant', async () => {
      const store = await open();
      const held = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });

      await expect(store.lock('acme', { timeoutMs: 0, owner: 'run-2' })).rejects.toBeInstanceOf(LockTimeoutError);
      await held.release();
      await (await store.lock('acme', { timeoutMs: 0, owner: 'run-2' })).release();
    });

    it('lists tenants with a record or a run record, and their full records sorted by id', async () => {
      const store = await open();
      const none = await store.listTenants();
      await store.writeContract('globex', applied('4711', 'globex'));
      await store.writeContract('acme', applied('4712', 'b', { commit: 'b'.repeat(40) }));
      await store.writeContract('acme', applied('4711', 'a'));
      await store.writeRun('initech', RUN);

      const other = await open();
      const tenants = await other.listTenants();
      const records = await other.listRecords('acme');

      expect(none).toEqual([]);
      expect(tenants).toEqual(['acme', 'globex', 'initech']);
      expect(records).toStrictEqual([applied('4711', 'a'), applied('4712', 'b', { commit: 'b'.repeat(40) })]);
      expect(await other.listRecords('initech')).toEqual([]);
    });

    it('reads one record, and forgets it: removeRecord says whether there was one', async () => {
      const store = await open();
      await store.writeContract('acme', applied('4711', 'a'));
      await store.writeContract('acme', applied('4712', 'b'));

      const record = await store.readRecord('acme', '4711');
      const removed = await store.removeRecord('acme', '4711');
      const again = await store.removeRecord('acme', '4711');
      const other = await open();

      expect(record).toStrictEqual(applied('4711', 'a'));
      expect([removed, again]).toEqual([true, false]);
      expect(await other.readRecord('acme', '4711')).toBeUndefined();
      expect([...(await other.readTenant('acme')).keys()]).toEqual(['4712']);
      await expect(store.removeRecord('acme', '')).rejects.toThrow(TypeError);
    });

    it('names the holder of a tenant lock, and nobody once it is released', async () => {
      const first = await open();
      const second = await open();
      const before = await second.lockHolder('acme');
      const held = await first.lock('acme', { timeoutMs: 0, owner: 'run-1' });

      const holder = await second.lockHolder('acme');
      await held.release();

      expect(before).toBeUndefined();
      expect(holder).toMatchObject({ owner: 'run-1', acquiredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      expect(await second.lockHolder('acme')).toBeUndefined();
      expect(await second.lockHolder('globex')).toBeUndefined();
    });

    it('force-unlocks a held tenant: says whose lock it was, and the tenant can be taken at once', async () => {
      const first = await open();
      const second = await open();
      const held = await first.lock('acme', { timeoutMs: 0, owner: 'run-1' });

      const none = await second.forceUnlock('globex');
      const was = await second.forceUnlock('acme');
      const taken = await second.lock('acme', { timeoutMs: 0, owner: 'run-2' });
      // The old holder's release must not free the new holder's lock.
      await held.release();

      expect(none).toBeUndefined();
      expect(was).toMatchObject({ owner: 'run-1' });
      expect(await (await open()).lockHolder('acme')).toMatchObject({ owner: 'run-2' });
      await taken.release();
    });

    it('keeps run history newest first, by tenant and limit, replacing an entry of the same run', async () => {
      const store = await open();
      const empty = await store.readHistory();
      await store.appendHistory(entry('run-a', '2027-01-01T00:01:00.000Z', ['acme']));
      await store.appendHistory(entry('run-c', '2027-01-03T00:01:00.000Z', ['globex']));
      await store.appendHistory(entry('run-b', '2027-01-02T00:01:00.000Z', ['acme', 'globex']));
      await store.appendHistory({ ...entry('run-a', '2027-01-01T00:02:00.000Z', ['acme']), command: 'drift --fix' });

      const other = await open();
      const all = await other.readHistory();

      expect(empty).toEqual([]);
      expect(all.map((e) => e.runId)).toEqual(['run-c', 'run-b', 'run-a']);
      expect(all[0]).toStrictEqual(entry('run-c', '2027-01-03T00:01:00.000Z', ['globex']));
      expect(all[2]).toMatchObject({ command: 'drift --fix', finishedAt: '2027-01-01T00:02:00.000Z' });
      expect((await other.readHistory({ tenant: 'acme' })).map((e) => e.runId)).toEqual(['run-b', 'run-a']);
      expect((await other.readHistory({ limit: 2 })).map((e) => e.runId)).toEqual(['run-c', 'run-b']);
      expect((await other.readHistory({ tenant: 'acme', limit: 1 })).map((e) => e.runId)).toEqual(['run-b']);
      expect(await other.readHistory({ tenant: 'initech' })).toEqual([]);
      await expect(other.readHistory({ limit: 0 })).rejects.toThrow(TypeError);
    });

    function key(digit: string): string {
      return digit.repeat(64);
    }

    it('remembers drift keys per tenant and contract, changes and forgets them, as another instance sees them', async () => {
      const store = await open();
      const empty = await store.readDriftKeys('acme');

      await store.writeDriftKeys('acme', { '4711': key('a'), '4712': key('b') });
      await store.writeDriftKeys('globex', { '4711': key('c') });
      await store.writeDriftKeys(
        'acme',
        JSON.parse(`{"4712": "${key('d')}", "__proto__": "${key('e')}", "4711": null, "9999": null}`) as Record<string, string | null>,
      );
      const other = await open();
      const acme = await other.readDriftKeys('acme');
      await other.writeDriftKeys('globex', { '4711': null });
      await other.writeDriftKeys('globex', {});

      expect(empty).toEqual({});
      expect(Object.entries(acme)).toEqual([
        ['4712', key('d')],
        ['__proto__', key('e')],
      ]);
      expect(await store.readDriftKeys('globex')).toEqual({});
      expect(await store.readDriftKeys('initech')).toEqual({});
      // The memory is no contract record: the tenants and records listed are unchanged.
      expect(await other.listTenants()).toEqual([]);
      // A tenant whose every key was forgotten holds no memory.
      expect(await store.listDriftTenants()).toEqual(['acme']);
    });

    it('refuses a drift key that is not a hash, or a contract id no record may have (TypeError)', async () => {
      const store = await open();

      await expect(store.writeDriftKeys('acme', { '4711': 'not a hash' })).rejects.toThrow(TypeError);
      await expect(store.writeDriftKeys('acme', { ' 4711': 'a'.repeat(64) })).rejects.toThrow(TypeError);
      await expect(store.readDriftKeys('../acme')).rejects.toThrow(TypeError);
      expect(await store.readDriftKeys('acme')).toEqual({});
    });

    it('closes idempotently', async () => {
      const store = await harness.open();

      await store.close();

      await expect(store.close()).resolves.toBeUndefined();
    });

    it.runIf(acrossProcesses)('frees the lock of a holder whose process was killed, within seconds', { timeout: 20_000 }, async () => {
      const store = await open();
      const holder = await startHolder(harness.child!, 'acme');

      const whileHeld = await store.lock('acme', { timeoutMs: 0, owner: 'run-2' }).catch((error: unknown) => error);
      await holder.kill();
      const started = Date.now();
      const lock = await store.lock('acme', { timeoutMs: 5000, owner: 'run-2' });

      expect((whileHeld as Error).message).toMatch(/owner "child-run", pid \d+ on host /);
      expect(Date.now() - started).toBeLessThan(5000);
      await lock.release();
    });

    it.runIf(acrossProcesses)('force-unlocks the lock of a live holder in another process', { timeout: 20_000 }, async () => {
      const store = await open();
      const holder = await startHolder(harness.child!, 'acme');

      try {
        const was = await store.forceUnlock('acme');
        const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-2' });

        expect(was).toMatchObject({ owner: 'child-run', pid: expect.any(Number) });
        await lock.release();
      } finally {
        await holder.kill();
      }
    });

    it.runIf(acrossProcesses).each([60])('keeps every write acknowledged before a SIGKILL after %i writes', { timeout: 20_000 }, async (killAfter) => {
      const { backend, location, schema } = harness.child!;
      const child = spawnFixture('store-child.ts', [backend, location, 'write', 'acme', ...(schema === undefined ? [] : [schema])]);
      const exited = once(child, 'exit');
      const { lines, stderr } = await readLines(child, (line) => {
        if (Number(line) + 1 === killAfter) child.kill('SIGKILL');
      });
      await exited;

      const acknowledged = lines.map(Number);
      expect(acknowledged.length, stderr).toBeGreaterThanOrEqual(killAfter);
      const known = await (await open()).readTenant('acme');
      for (const n of acknowledged.slice(-CRASH_CONTRACTS)) {
        const held = writeNumberOf(known.get(crashContractId(n))?.fields.Name);
        // The acknowledged write, or a later one the kill interrupted after its commit.
        expect([n, n + CRASH_CONTRACTS], crashContractId(n)).toContain(held);
        expect(known.get(crashContractId(n))?.fields).toEqual(crashWrite(held).fields);
      }
    });
  });
}
