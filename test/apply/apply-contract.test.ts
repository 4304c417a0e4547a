/**
 * applyContract with a real TenantLane and the in-memory state store. The service is its injected
 * ApiClient: a scripted stand-in that records each PATCH and read.
 */
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import type { ApiClient, ApiOutcome, ReadOutcome } from '../../engine/api/client.ts';
import { ApiError, type ApiErrorDetails } from '../../engine/api/errors.ts';
import { applyContract, type ContractContext, type ContractWork } from '../../engine/apply/apply-contract.ts';
import { retryBudget } from '../../engine/apply/retry-policy.ts';
import { TenantLane } from '../../engine/apply/tenant-lane.ts';
import type { TenantTokens } from '../../engine/auth/index.ts';
import type { Clock } from '../../engine/io/clock.ts';
import type { CollectionMode } from '../../engine/config/types.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import { applyOps } from '../../engine/model/apply-ops.ts';
import type { CollectionFieldName } from '../../engine/model/fields.ts';
import type { ContractFields, Op } from '../../engine/model/types.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { memoryStateStore, type MemoryStateStore } from '../../engine/state/memory-store.ts';

const T0 = Date.UTC(2027, 0, 1, 12, 0, 0);
const COMMIT = 'c0ffee0000000000000000000000000000000000';
const COLLECTIONS: Readonly<Record<CollectionFieldName, CollectionMode>> = {
  Company: 'authoritative',
  OrganizationalUnit: 'authoritative',
  Owner: 'authoritative',
  Type: 'authoritative',
};

const KNOWN: ContractFields = { Name: 'Cleaning 2026', Company: [{ Id: 1, RelationType: 'Supplier' }] };
const DESIRED: ContractFields = {
  Name: 'Cleaning 2027',
  Company: [
    { Id: 1, RelationType: 'Supplier' },
    { Id: 2, RelationType: 'Client' },
  ],
};
const REPLACE_NAME: Op = { op: 'Replace', path: '/Contract/Name', value: 'Cleaning 2027' };
const ADD_COMPANY: Op = { op: 'Add', path: '/Contract/Company', value: { Id: 2, RelationType: 'Client' } };
const OPS: readonly Op[] = [REPLACE_NAME, ADD_COMPANY];

function work(extra: Partial<ContractWork> = {}): ContractWork {
  return { contractId: 'C-1', ops: OPS, known: KNOWN, knownIsLive: false, desired: DESIRED, ...extra };
}

/** Time that moves on by each wait at once: backoff and pauses end without a real wait. */
function instantClock(): Clock & { readonly sleeps: number[] } {
  let now = T0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    async sleep(ms) {
      sleeps.push(ms);
      now += Math.max(0, ms);
    },
  };
}

function tokens(): TenantTokens {
  return { get: async (tenant) => `${tenant}-token`, invalidate: () => undefined };
}

const RESET: Partial<ApiErrorDetails> = { kind: 'retryable', status: null, ambiguous: true };

function apiError(details: Partial<ApiErrorDetails>): ApiError {
  return new ApiError(`PATCH /contract/C-1: ${details.status ?? 'connection failed (ECONNRESET)'}`, {
    kind: 'permanent',
    status: null,
    excerpt: '',
    ambiguous: false,
    ...details,
  });
}

type PatchAnswer = ApiError | 'ok';

interface ScriptedApi extends ApiClient {
  /** `patch` / `read`, in the order they were sent. */
  readonly calls: string[];
  /** The ops of each PATCH, in order. */
  readonly patched: (readonly Op[])[];
}

/**
 * The service: PATCH answers from `patches` in order (the last repeats); a read answers `live()`.
 */
function scriptedApi(canRead: boolean, patches: readonly PatchAnswer[], live: () => ContractFields | ApiError = () => KNOWN): ScriptedApi {
  const calls: string[] = [];
  const patched: (readonly Op[])[] = [];
  return {
    canRead,
    calls,
    patched,
    async patch(_contractId, ops): Promise<ApiOutcome> {
      const answer = patches[Math.min(patched.length, patches.length - 1)]!;
      calls.push('patch');
      patched.push(structuredClone(ops));
      if (answer !== 'ok') throw answer;
      return {};
    },
    async read(): Promise<ReadOutcome> {
      calls.push('read');
      const answer = live();
      if (answer instanceof ApiError) throw answer;
      return { fields: structuredClone(answer) };
    },
  };
}

interface TestContext extends ContractContext {
  readonly store: MemoryStateStore;
}

function context(api: ApiClient, extra: Partial<Pick<ContractContext, 'maxReconciles'>> = {}): TestContext {
  const clock = instantClock();
  const lane = new TenantLane({
    tenant: 'acme',
    requestsPerSecond: 1_000_000,
    concurrency: 2,
    budget: retryBudget(3),
    inFlight: new PQueue({ concurrency: 4 }),
    tokens: tokens(),
    clock,
    random: () => 0.5,
    logger: silentLogger(),
  });
  return { lane, api, store: memoryStateStore(), collections: COLLECTIONS, commit: COMMIT, now: () => clock.now(), maxReconciles: 2, ...extra };
}

describe('applyContract: success', () => {
  it('sends the planned ops once and records known + ops with fingerprint, appliedAt and commit', async () => {
    const api = scriptedApi(false, ['ok']);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    const fields = applyOps(KNOWN, OPS);
    expect(outcome).toEqual({ outcome: 'applied', reconciled: false });
    expect(api.patched).toEqual([OPS]);
    expect(ctx.store.applied('acme').get('C-1')).toStrictEqual({
      contractId: 'C-1',
      fields,
      fingerprint: fingerprint(fields),
      appliedAt: '2027-01-01T12:00:00.000Z',
      commit: COMMIT,
    });
  });

  it('records a contract never applied before from nothing known', async () => {
    const api = scriptedApi(false, ['ok']);
    const ctx = context(api);

    await applyContract(work({ known: undefined, ops: [REPLACE_NAME] }), ctx);

    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual({ Name: 'Cleaning 2027' });
  });
});

describe('applyContract: refused', () => {
  it('fails with the status of a permanent 409 to a Replace-only patch, without a read, and records nothing', async () => {
    const conflict = apiError({ kind: 'permanent', status: 409 });
    const api = scriptedApi(true, [conflict]);
    const ctx = context(api);

    const outcome = await applyContract(work({ ops: [REPLACE_NAME] }), ctx);

    expect(outcome).toEqual({ outcome: 'failed', status: 409, reason: conflict.message });
    expect(api.calls).toEqual(['patch']);
    expect(ctx.store.applied('acme').size).toBe(0);
  });
  it('fails with the last status after maxAttempts plain 502s', async () => {
    const api = scriptedApi(true, [apiError({ kind: 'retryable', status: 502 })]);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toMatchObject({ outcome: 'failed', status: 502 });
    expect(api.calls).toEqual(['patch', 'patch', 'patch']);
  });
});

describe('applyContract: a 409 to a patch that adds or removes members', () => {
  const CONFLICT = apiError({ kind: 'permanent', status: 409 });

  it('without a read: fails as a conflict that names the member, sent once', async () => {
    const api = scriptedApi(false, [CONFLICT]);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toMatchObject({ outcome: 'failed', status: 409 });
    expect(outcome.outcome !== 'applied' && outcome.reason).toBe(
      'PATCH /contract/C-1: 409; conflict: the service does not hold the members this patch expects for Add /Contract/Company {"Id":2,"RelationType":"Client"}, so its known state was behind the service (configure api.read to settle a conflict by reading the contract)',
    );
    expect(api.calls).toEqual(['patch']);
    expect(ctx.store.applied('acme').size).toBe(0);
  });

  it('names at most three members, and how many more', async () => {
    const adds: Op[] = [1, 2, 3, 4, 5].map((id) => ({ op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: id, Name: 'U' } }));
    const api = scriptedApi(false, [CONFLICT]);

    const outcome = await applyContract(work({ ops: [REPLACE_NAME, ...adds] }), context(api));

    expect(outcome.outcome !== 'applied' && outcome.reason).toContain(
      'for Add /Contract/OrganizationalUnit {"Id":1,"Name":"U"}, Add /Contract/OrganizationalUnit {"Id":2,"Name":"U"}, Add /Contract/OrganizationalUnit {"Id":3,"Name":"U"} and 2 more,',
    );
  });

  it('with a read: the known state was behind; read, re-planned and only what is missing sent', async () => {
    // Someone added the Company member in the UI after the last run: the Add was a 409.
    const live: ContractFields = { ...KNOWN, Company: DESIRED.Company };
    const api = scriptedApi(true, [CONFLICT, 'ok'], () => live);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: true });
    expect(api.calls).toEqual(['patch', 'read', 'patch']);
    expect(api.patched).toEqual([OPS, [REPLACE_NAME]]);
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual(DESIRED);
  });

  it('with a read: a re-plan with nothing left to send records the live state', async () => {
    const api = scriptedApi(true, [CONFLICT], () => DESIRED);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: true });
    expect(api.calls).toEqual(['patch', 'read']);
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual(DESIRED);
  });

  it('with a read: read at most once per contract; a second 409 fails naming the member', async () => {
    const api = scriptedApi(true, [CONFLICT], () => KNOWN);
    const ctx = context(api, { maxReconciles: 5 });

    const outcome = await applyContract(work(), ctx);

    expect(api.calls).toEqual(['patch', 'read', 'patch']);
    expect(outcome).toMatchObject({
      outcome: 'failed',
      status: 409,
      reason: expect.stringMatching(/conflict: .*Add \/Contract\/Company .*again after reading and re-planning the contract once/),
    });
  });

  it('with a read that fails: failed as a conflict (a 409 applied nothing), saying the read failed', async () => {
    const api = scriptedApi(true, [CONFLICT], () => apiError({ kind: 'permanent', status: 403 }));
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(api.calls).toEqual(['patch', 'read']);
    expect(outcome).toMatchObject({
      outcome: 'failed',
      status: 409,
      reason: expect.stringMatching(/Add \/Contract\/Company .*could not be read to settle it: .*403/),
    });
  });
});

describe('applyContract: an ambiguous PATCH', () => {
  // What the client makes of a PATCH answered 500 (engine/api/client.ts): retryable and ambiguous.
  const ANSWERED_500 = apiError({ kind: 'retryable', status: 500, ambiguous: true });

  it.each<[string, boolean, readonly Op[], string[], string]>([
    ['adding members, with a read: settled by reading, not resent', true, OPS, ['patch', 'read', 'patch'], 'applied'],
    ['adding members, without a read: unknown, not resent', false, OPS, ['patch'], 'unknown'],
    ['Replace-only, without a read: resent', false, [REPLACE_NAME], ['patch', 'patch'], 'applied'],
  ])('a 500: %s', async (_case, canRead, ops, calls, result) => {
    const api = scriptedApi(canRead, [ANSWERED_500, 'ok'], () => KNOWN);
    const ctx = context(api);

    const outcome = await applyContract(work({ ops }), ctx);

    expect(outcome.outcome).toBe(result);
    expect(api.calls).toEqual(calls);
  });

  it('ends as unknown, not resent, when it adds members and nothing can be read', async () => {
    const api = scriptedApi(false, [apiError(RESET), 'ok']);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toMatchObject({ outcome: 'unknown', status: null });
    expect(api.calls).toEqual(['patch']);
    expect(ctx.store.applied('acme').size).toBe(0);
  });

  it('is settled by a read showing it applied: no second PATCH, the live state recorded', async () => {
    // Someone else also set a field the desired state leaves unmanaged.
    const live: ContractFields = { ...applyOps(KNOWN, OPS), Comment: 'set in the UI' };
    const api = scriptedApi(true, [apiError(RESET), 'ok'], () => live);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: true });
    expect(api.calls).toEqual(['patch', 'read']);
    expect(ctx.store.applied('acme').get('C-1')).toMatchObject({ fields: live, fingerprint: fingerprint(live), commit: COMMIT });
  });

  it('is re-planned from a read showing it not applied, and only the missing ops are sent', async () => {
    // The Name change landed by another way; the Company member did not.
    const live: ContractFields = { ...KNOWN, Name: 'Cleaning 2027' };
    const api = scriptedApi(true, [apiError(RESET), 'ok'], () => live);
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: true });
    expect(api.calls).toEqual(['patch', 'read', 'patch']);
    expect(api.patched).toEqual([OPS, [ADD_COMPANY]]);
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual(applyOps(live, [ADD_COMPANY]));
  });

  it('resends a Replace-only patch through the lane, without a read', async () => {
    const api = scriptedApi(true, [apiError(RESET), 'ok']);
    const ctx = context(api);

    const outcome = await applyContract(work({ ops: [REPLACE_NAME] }), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: false });
    expect(api.calls).toEqual(['patch', 'patch']);
    expect(api.patched).toEqual([[REPLACE_NAME], [REPLACE_NAME]]);
  });

  it('ends unknown after maxReconciles re-reads of a PATCH that never gets an answer', async () => {
    const api = scriptedApi(true, [apiError(RESET)], () => KNOWN);
    const ctx = context(api, { maxReconciles: 2 });

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toMatchObject({ outcome: 'unknown', status: null });
    expect(api.calls).toEqual(['patch', 'read', 'patch', 'read', 'patch']);
  });

  it('ends unknown when the re-read itself fails: the patch may have landed', async () => {
    const api = scriptedApi(true, [apiError(RESET)], () => apiError({ kind: 'permanent', status: 403 }));
    const ctx = context(api);

    const outcome = await applyContract(work(), ctx);

    expect(outcome).toMatchObject({ outcome: 'unknown', reason: expect.stringContaining('could not be read again') });
    expect(api.calls).toEqual(['patch', 'read']);
    expect(ctx.store.applied('acme').size).toBe(0);
  });

  // A proxy's HTML error page (engine/api/client.ts): not retried, but the patch may have gone on.
  it("a Replace-only patch answered by a proxy's HTML 403 without a read ends unknown, sent once", async () => {
    const api = scriptedApi(false, [apiError({ kind: 'permanent', status: 403, ambiguous: true })]);

    const outcome = await applyContract(work({ ops: [REPLACE_NAME] }), context(api));

    expect(api.calls).toEqual(['patch']);
    expect(outcome).toMatchObject({
      outcome: 'unknown',
      status: null,
      reason: expect.stringContaining('the patch may have been applied (configure api.read to settle it)'),
    });
  });

  // The Replace-only patch *was* resent maxAttempts times; the reason says the opposite.
  it('the reason of an unknown Replace-only patch does not claim it adds or removes members', async () => {
    const api = scriptedApi(false, [apiError(RESET)]);
    const ctx = context(api);

    const outcome = await applyContract(work({ ops: [REPLACE_NAME] }), ctx);

    expect(api.calls).toEqual(['patch', 'patch', 'patch']);
    expect(outcome).toMatchObject({ outcome: 'unknown', status: null });
    expect(outcome.outcome !== 'applied' && outcome.reason).not.toMatch(/adds or removes/);
  });
});

describe('applyContract: uncertain from an earlier run', () => {
  const UNCERTAIN = 'an earlier run stopped while applying this contract';

  it('is read and re-planned before anything is sent when reads are configured', async () => {
    const live: ContractFields = { ...KNOWN, Name: 'Cleaning 2027' };
    const api = scriptedApi(true, ['ok'], () => live);
    const ctx = context(api);

    const outcome = await applyContract(work({ uncertain: UNCERTAIN }), ctx);

    expect(outcome.outcome).toBe('applied');
    expect(api.calls).toEqual(['read', 'patch']);
    expect(api.patched).toEqual([[ADD_COMPANY]]);
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual(applyOps(live, [ADD_COMPANY]));
  });

  it('sends nothing when the read shows the earlier patch landed', async () => {
    const live = applyOps(KNOWN, OPS);
    const api = scriptedApi(true, ['ok'], () => live);
    const ctx = context(api);

    const outcome = await applyContract(work({ uncertain: UNCERTAIN }), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: true });
    expect(api.calls).toEqual(['read']);
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual(live);
  });

  it('is not read again when its known state was read live in this run', async () => {
    const api = scriptedApi(true, ['ok']);
    const ctx = context(api);

    await applyContract(work({ uncertain: UNCERTAIN, knownIsLive: true }), ctx);

    expect(api.calls).toEqual(['patch']);
  });

  it.each<[string, readonly Op[], string[], string]>([
    ['adding members is not sent blindly', OPS, [], 'unknown'],
    ['Replace-only is sent', [REPLACE_NAME], ['patch'], 'applied'],
  ])('without a read: %s', async (_case, ops, calls, result) => {
    const api = scriptedApi(false, ['ok']);
    const ctx = context(api);

    const outcome = await applyContract(work({ uncertain: UNCERTAIN, ops }), ctx);

    expect(outcome.outcome).toBe(result);
    expect(api.calls).toEqual(calls);
  });

  // Re-planned from a read and applied, like the ambiguous case; the no-op branch above says true.
  it('reports reconciled: true when the read-first re-plan was sent and applied', async () => {
    const api = scriptedApi(true, ['ok'], () => KNOWN);
    const ctx = context(api);

    const outcome = await applyContract(work({ uncertain: UNCERTAIN }), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: true });
  });
});

describe('applyContract: the state record', () => {
  // The write failure is caught with the PATCH's errors and reported "failed" ("nothing of this
  // contract is known to be applied"); the next run then trusts the stale state store and sends
  // the Add again (409). "unknown" makes the next run read or hold it instead.
  it('a PATCH that succeeded but could not be recorded ends as unknown, not failed', async () => {
    const api = scriptedApi(false, ['ok']);
    const ctx = context(api);
    const store: MemoryStateStore = {
      ...ctx.store,
      writeContract: () => Promise.reject(new Error('ENOSPC: no space left on device')),
    };

    const outcome = await applyContract(work(), { ...ctx, store });

    expect(outcome).toMatchObject({ outcome: 'unknown', status: null });
  });
});
