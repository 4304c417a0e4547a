/**
 * The runs through the library alone (`import ... from 'contract-sync'`, engine/index.ts), as a
 * program other than the CLI would drive them: an apply of a real git repository against the
 * emulator, then a pull request's incremental plan, then the apply of its merge, with events and an
 * injected confirmation, and nothing written to stdout or stderr by the engine.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { run, systemClock, type ApplyPreview, type RunEffects, type RunEvent } from '../../engine/index.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { createFleet, fleetConfigYaml, fleetRepoFiles, fleetSeed, liveContract, requestLog } from '../helpers/fleet.ts';

const fleet = createFleet(2, 6);
let emulator: Emulator;
let repo: TestRepo;

beforeEach(async () => {
  emulator = await startEmulator(fleetSeed(fleet));
  repo = await createRepo({ ...fleetRepoFiles(fleet, emulator, { read: true, statePath: '.contract-sync/state' }), '.gitignore': '.contract-sync/\n' });
});

afterEach(async () => {
  await emulator.close();
  await repo.cleanup();
});

function effects(events: RunEvent[], confirm?: (preview: ApplyPreview) => Promise<boolean>): RunEffects {
  return {
    cwd: repo.dir,
    env: { ...fleet.env, PATH: process.env.PATH ?? '' },
    clock: systemClock,
    onEvent: (event) => events.push(event),
    ...(confirm ? { confirm } : {}),
  };
}

describe('the library', () => {
  it('applies, plans a pull request incrementally and applies its merge, with events and no output of its own', async () => {
    const stdout = vi.spyOn(process.stdout, 'write');
    const stderr = vi.spyOn(process.stderr, 'write');
    const firstEvents: RunEvent[] = [];
    const confirmations: ApplyPreview[] = [];

    const first = await run(
      { kind: 'apply', where: { repo: '.', ref: 'HEAD' }, scope: 'incremental', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } },
      effects(firstEvents, async (preview) => {
        confirmations.push(preview);
        return true;
      }),
    );

    expect(first.kind).toBe('applied');
    if (first.kind !== 'applied') return;
    const changed = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
    expect(first.report.tenants.flatMap((tenant) => [tenant.error, ...tenant.failures.map((failure) => failure.reason)]).filter(Boolean)).toEqual([]);
    expect(first.report.summary).toMatchObject({ failed: 0 });
    expect(first.report.tenants.reduce((sum, tenant) => sum + tenant.applied, 0)).toBe(changed);
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0]!.sending.contracts).toBe(changed);
    expect(firstEvents.filter((event) => event.type === 'progress' && event.step === 'send')).toHaveLength(changed);
    // The known state was read live first (api.read is configured): one read event per contract, counted on their own.
    const reads = firstEvents.flatMap((event) => (event.type === 'progress' && event.step === 'read' ? [event] : []));
    expect(reads.map((event) => event.done)).toEqual(reads.map((_, index) => index + 1));
    expect(new Set(reads.map((event) => event.total))).toEqual(new Set([reads.length]));
    expect(firstEvents.flatMap((event) => (event.type === 'phase' ? [event.phase] : []))).toEqual([
      'read-input',
      'lock',
      'read-known',
      'plan',
      'check',
      'confirm',
      'send',
      'record',
    ]);
    expect(firstEvents.some((event) => event.type === 'preview')).toBe(true);

    // A pull request renames one contract of tenant-a.
    const [set] = fleet.desired;
    const renamed = set!.contracts[1]!;
    await repo.git('checkout', '-q', '-b', 'rename');
    const edited = Object.fromEntries(
      set!.contracts.map((contract) => [contract.id, contract.id === renamed.id ? { ...contract.fields, Name: 'Renamed in a pull request' } : contract.fields]),
    );
    await repo.commit('rename one contract', { [set!.file]: stringify({ tenant: set!.tenant, contracts: edited }) });

    const planned = await run({ kind: 'plan', where: { repo: '.', ref: 'HEAD' }, base: 'main', known: 'store', scope: 'incremental' }, effects([]));

    expect(planned.kind).toBe('planned');
    if (planned.kind !== 'planned') return;
    expect(planned.plan.source.incremental?.tenants.map((tenant) => tenant.tenant)).toEqual(['tenant-a', 'tenant-b']);
    const updates = planned.plan.tenants.flatMap((tenant) =>
      tenant.contracts.filter((contract) => contract.action === 'update').map((contract) => `${tenant.tenant}/${contract.id}`),
    );
    expect(updates).toEqual([`tenant-a/${renamed.id}`]);
    expect(planned.plan.tenants.flatMap((tenant) => tenant.contracts.filter((contract) => contract.touched === true).map((contract) => contract.id))).toEqual([
      renamed.id,
    ]);

    await repo.git('checkout', '-q', 'main');
    await repo.git('merge', '-q', '--ff-only', 'rename');
    const before = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;
    const merged = await run(
      { kind: 'apply', where: { repo: '.', ref: 'HEAD' }, scope: 'incremental', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } },
      effects([]),
    );

    expect(merged.kind).toBe('applied');
    if (merged.kind !== 'applied') return;
    expect(merged.incremental).toBe(true);
    expect(merged.report.tenants.reduce((sum, tenant) => sum + tenant.applied, 0)).toBe(1);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length - before).toBe(1);
    expect((await liveContract(emulator, 'tenant-a', renamed.id)).Name).toBe('Renamed in a pull request');
    expect(stdout).not.toHaveBeenCalled();
    expect(stderr).not.toHaveBeenCalled();
    stdout.mockRestore();
    stderr.mockRestore();
  });

  it('returns problems as values: an unknown ref, an unknown tenant', async () => {
    const unknownRef = await run({ kind: 'validate', where: { repo: '.', ref: 'no-such-branch' } }, effects([]));
    const unknownTenant = await run(
      { kind: 'plan', where: { repo: '.' }, selection: { tenants: ['nobody'] }, known: 'store', scope: 'incremental' },
      effects([]),
    );

    expect(unknownRef).toMatchObject({ kind: 'git-error', code: 'unknown-ref' });
    expect(unknownTenant).toMatchObject({ kind: 'bad-request', message: expect.stringContaining('--tenant "nobody" is not configured') });
  });
});

describe('a run stopped through its signal', () => {
  const request = {
    kind: 'apply',
    where: { repo: '.', ref: 'HEAD' },
    scope: 'incremental',
    mode: 'send',
    lockTimeoutMs: 30_000,
    removals: { allow: true },
  } as const;

  it('during sending: answered PATCHes recorded, the others pending as not sent, the locks free; the next run sends only those', async () => {
    // One request at a time per tenant, 20 a second: the stop comes while most are still to send.
    await repo.commit('send slowly', {
      'contract-sync.yaml': fleetConfigYaml(fleet, emulator, {
        read: true,
        statePath: '.contract-sync/state',
        rate: '{ requestsPerSecond: 20, concurrency: 1, maxInFlight: 2 }',
      }),
    });
    const controller = new AbortController();
    const events: RunEvent[] = [];
    const stopping: RunEffects = {
      ...effects(events),
      signal: controller.signal,
      onEvent(event) {
        events.push(event);
        // Stopped once the second PATCH is answered.
        if (event.type === 'progress' && event.step === 'send' && event.done === 2) controller.abort();
      },
    };

    const stopped = await run(request, stopping);

    expect(stopped.kind).toBe('applied');
    if (stopped.kind !== 'applied') return;
    const changed = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
    expect(stopped.interrupted).toBeDefined();
    const { sent, notSent } = stopped.interrupted!;
    expect(sent + notSent).toBe(changed);
    expect(sent).toBeGreaterThanOrEqual(2);
    expect(notSent).toBeGreaterThan(0);
    const patched = (await requestLog(emulator))
      .filter((entry) => entry.kind === 'api' && entry.method === 'PATCH')
      .map((entry) => entry.path.replace(/^.*\//, ''));
    expect(patched).toHaveLength(sent);
    const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
    const pending: string[] = [];
    for (const tenant of fleet.tenants) {
      for (const id of patched.filter((contractId) => contractId.startsWith(`${tenant}-`)))
        expect((await store.readRecord(tenant, id))?.commit, id).toMatch(/^[0-9a-f]{40}$/);
      pending.push(...((await store.readRun(tenant))?.pending ?? []).map((entry) => `${entry.outcome} ${entry.reason} ${entry.contractId}`));
      expect(await store.lockHolder(tenant)).toBeUndefined();
    }
    expect(pending).toHaveLength(notSent);
    for (const entry of pending) expect(entry).toMatch(/^failed not sent: the run was interrupted /);

    const before = (await requestLog(emulator)).length;
    const resumed = await run(request, effects([]));
    expect(resumed).toMatchObject({ kind: 'applied', report: { summary: { failed: 0 } } });
    const again = (await requestLog(emulator)).slice(before).filter((entry) => entry.kind === 'api');
    const left = pending.map((entry) => entry.replace(/^.* /, '')).sort();
    expect(
      again
        .filter((entry) => entry.method === 'GET')
        .map((entry) => entry.path.replace(/^.*\//, ''))
        .sort(),
    ).toEqual(left);
    expect(
      again
        .filter((entry) => entry.method === 'PATCH')
        .map((entry) => entry.path.replace(/^.*\//, ''))
        .sort(),
    ).toEqual(left);
  });

  it('while waiting for a lock: stops waiting, sends nothing, releases what it holds, and releases the waited-for lock when it comes late', async () => {
    const store = fileStateStore(path.join(repo.dir, '.contract-sync/state'));
    const held = await store.lock('tenant-b', { timeoutMs: 1000, owner: 'the test' });
    const controller = new AbortController();
    const startedAt = Date.now();
    // Stopped once the run holds tenant-a's lock (taken first, in name order) and waits for tenant-b's,
    // and has had time to learn tenant-a's known state: however slowly the machine got it there.
    void (async () => {
      while ((await store.lockHolder('tenant-a')) === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      setTimeout(() => controller.abort(), 500);
    })();

    const stopped = await run(request, { ...effects([]), signal: controller.signal });

    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(stopped.kind).toBe('applied');
    if (stopped.kind !== 'applied') return;
    const changed = [...fleet.changed.values()].reduce((sum, ids) => sum + ids.size, 0);
    // tenant-a's changed contracts, and every contract of tenant-b, which did not start (as a tenant whose lock timed out).
    expect(stopped.interrupted).toEqual({ sent: 0, notSent: changed / 2 + fleet.desired[1]!.contracts.length });
    expect((await requestLog(emulator)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH')).toEqual([]);
    expect(await store.lockHolder('tenant-a')).toBeUndefined();
    // Nothing was sent: nothing recorded, the commit not advanced.
    expect(await store.readRun('tenant-a')).toBeUndefined();
    await held.release();
    // The run's wait for tenant-b goes on in the background until the lock comes, and lets it go at once.
    await vi.waitFor(async () => expect(await store.lockHolder('tenant-b')).toBeUndefined(), { timeout: 5000 });
  });
});
