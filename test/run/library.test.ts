/**
 * The runs through the library alone (`import ... from 'contract-sync'`, engine/index.ts), as a
 * program other than the CLI would drive them: an apply of a real git repository against the
 * emulator, then a pull request's incremental plan, then the apply of its merge, with events and an
 * injected confirmation, and nothing written to stdout or stderr by the engine.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { run, systemClock, type ApplyPreview, type RunEffects, type RunEvent } from '../../engine/index.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { createFleet, fleetRepoFiles, fleetSeed, liveContract, requestLog } from '../helpers/fleet.ts';

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
  return { cwd: repo.dir, env: { ...fleet.env, PATH: process.env.PATH ?? '' }, clock: systemClock, onEvent: (event) => events.push(event), ...(confirm ? { confirm } : {}) };
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
    expect(firstEvents.flatMap((event) => (event.type === 'phase' ? [event.phase] : []))).toEqual(['read-input', 'read-known', 'confirm', 'send']);
    expect(firstEvents.some((event) => event.type === 'preview')).toBe(true);

    // A pull request renames one contract of tenant-a.
    const [set] = fleet.desired;
    const renamed = set!.contracts[1]!;
    await repo.git('checkout', '-q', '-b', 'rename');
    const edited = Object.fromEntries(set!.contracts.map((contract) => [contract.id, contract.id === renamed.id ? { ...contract.fields, Name: 'Renamed in a pull request' } : contract.fields]));
    await repo.commit('rename one contract', { [set!.file]: stringify({ tenant: set!.tenant, contracts: edited }) });

    const planned = await run({ kind: 'plan', where: { repo: '.', ref: 'HEAD' }, base: 'main', known: 'store', scope: 'incremental' }, effects([]));

    expect(planned.kind).toBe('planned');
    if (planned.kind !== 'planned') return;
    expect(planned.plan.source.incremental?.tenants.map((tenant) => tenant.tenant)).toEqual(['tenant-a', 'tenant-b']);
    const updates = planned.plan.tenants.flatMap((tenant) => tenant.contracts.filter((contract) => contract.action === 'update').map((contract) => `${tenant.tenant}/${contract.id}`));
    expect(updates).toEqual([`tenant-a/${renamed.id}`]);
    expect(planned.plan.tenants.flatMap((tenant) => tenant.contracts.filter((contract) => contract.touched === true).map((contract) => contract.id))).toEqual([renamed.id]);

    await repo.git('checkout', '-q', 'main');
    await repo.git('merge', '-q', '--ff-only', 'rename');
    const before = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;
    const merged = await run({ kind: 'apply', where: { repo: '.', ref: 'HEAD' }, scope: 'incremental', mode: 'send', lockTimeoutMs: 5000, removals: { allow: false } }, effects([]));

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
    const unknownTenant = await run({ kind: 'plan', where: { repo: '.' }, selection: { tenants: ['nobody'] }, known: 'store', scope: 'incremental' }, effects([]));

    expect(unknownRef).toMatchObject({ kind: 'git-error', code: 'unknown-ref' });
    expect(unknownTenant).toMatchObject({ kind: 'bad-request', message: expect.stringContaining('--tenant "nobody" is not configured') });
  });
});
