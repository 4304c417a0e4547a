/**
 * applyContract after a PATCH answered with success (docs/architecture.md section 7): nothing the
 * engine does afterwards may turn it into `failed`. A real TenantLane and the in-memory state
 * store; the service is a scripted ApiClient whose PATCH always succeeds.
 */
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../engine/api/client.ts';
import { applyContract, type ContractContext, type ContractWork } from '../../engine/apply/apply-contract.ts';
import { retryBudget } from '../../engine/apply/retry-policy.ts';
import { TenantLane } from '../../engine/apply/tenant-lane.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import { validateOps } from '../../engine/model/apply-ops.ts';
import type { ContractFields, Op } from '../../engine/model/types.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { memoryStateStore, type MemoryStateStore } from '../../engine/state/memory-store.ts';

const T0 = Date.UTC(2027, 0, 1, 12, 0, 0);
const PREVIOUS = {
  contractId: 'C-1',
  fields: { Name: 'before' },
  fingerprint: fingerprint({ Name: 'before' }),
  appliedAt: '2026-01-01T00:00:00.000Z',
  commit: null,
};

interface PatchingApi extends ApiClient {
  readonly patched: (readonly Op[])[];
}

/** A service that accepts every PATCH (it is the judge of the ops, not the engine). */
function acceptingApi(): PatchingApi {
  const patched: (readonly Op[])[] = [];
  return {
    canRead: false,
    patched,
    async patch(_contractId, ops) {
      patched.push(structuredClone(ops));
      return {};
    },
    async read() {
      throw new Error('not read in these cases');
    },
  };
}

async function context(api: ApiClient): Promise<ContractContext & { readonly store: MemoryStateStore }> {
  const clock = { now: () => T0, sleep: async () => undefined };
  const lane = new TenantLane({
    tenant: 'acme',
    requestsPerSecond: 1_000_000,
    concurrency: 1,
    budget: retryBudget(3),
    inFlight: new PQueue({ concurrency: 1 }),
    tokens: { get: async () => 'acme-token', invalidate: () => undefined },
    clock,
    random: () => 0.5,
    logger: silentLogger(),
  });
  const store = memoryStateStore();
  await store.writeContract('acme', PREVIOUS);
  const collections = { Company: 'authoritative', OrganizationalUnit: 'authoritative', Owner: 'authoritative', Type: 'authoritative' } as const;
  return { lane, api, store, collections, commit: null, now: clock.now, maxReconciles: 2 };
}

function work(known: ContractFields | undefined, desired: ContractFields, ops: readonly Op[] = diffContract(known, desired)): ContractWork {
  return { contractId: 'C-1', ops, known, knownIsLive: false, desired };
}

describe('applyContract after a successful PATCH', () => {
  it('sends and records a Remove of a member recorded with a key the model does not list: a Remove needs its identity only', async () => {
    // A record written from a read before reads dropped unknown keys: the Remove carries `Name`.
    const known = { Company: [{ Id: 1, RelationType: 'Supplier', Name: 'Acme Ltd' }] } as unknown as ContractFields;
    const desired: ContractFields = { Company: [{ Id: 2, RelationType: 'Client' }] };
    const api = acceptingApi();
    const ctx = await context(api);
    const planned = work(known, desired);
    expect(validateOps(planned.ops)).toEqual([]);

    const outcome = await applyContract(planned, ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: false });
    expect(api.patched).toHaveLength(1);
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual(desired);
  });

  it('records an owner whose user name, email and unit are null', async () => {
    const owner = { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 5, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } };
    const api = acceptingApi();
    const ctx = await context(api);

    const outcome = await applyContract(work({ Owner: [] }, { Owner: [owner] }), ctx);

    expect(outcome).toEqual({ outcome: 'applied', reconciled: false });
    expect(ctx.store.applied('acme').get('C-1')?.fields).toEqual({ Owner: [owner] });
  });

  it.each<[string, ContractFields | undefined, readonly Op[]]>([
    // The service held something else than the record: its Add succeeded, the record already has the member.
    [
      'the known state already holds the member added',
      { Company: [{ Id: 2, RelationType: 'Client' }] },
      [{ op: 'Add', path: '/Contract/Company', value: { Id: 2, RelationType: 'Client' } }],
    ],
    ['the known state lacks the member removed', { Company: [] }, [{ op: 'Remove', path: '/Contract/Company', value: { Id: 2, RelationType: 'Client' } }]],
    [
      'the known state holds a collection that is not a list',
      { Company: 'x' } as unknown as ContractFields,
      [{ op: 'Add', path: '/Contract/Company', value: { Id: 2, RelationType: 'Client' } }],
    ],
  ])('is unknown, never failed, when the new state cannot be computed: %s', async (_case, known, ops) => {
    const api = acceptingApi();
    const ctx = await context(api);

    const outcome = await applyContract(work(known, {}, ops), ctx);

    expect(outcome).toMatchObject({
      outcome: 'unknown',
      status: null,
      reason: expect.stringMatching(/^applied, but its new state could not be computed from the known state: /),
    });
    expect(api.patched).toEqual([ops]);
    // The old record stays: it does not claim the patch, and the pending outcome sends the next run to read.
    expect(ctx.store.applied('acme').get('C-1')).toEqual(PREVIOUS);
  });
});

describe('applyContract before a PATCH is queued: the body against specs/patch.schema.json', () => {
  it.each<[string, readonly Op[], string]>([
    [
      'an op path the model does not know',
      [{ op: 'Replace', path: '/Contract/Colour' as Op['path'], value: 'red' }],
      'op #0: unknown path "/Contract/Colour": expected /Contract/<Field>',
    ],
    ['an Add of an incomplete member', [{ op: 'Add', path: '/Contract/OrganizationalUnit', value: { Id: 4 } }], 'op #0: value: missing required field "Name"'],
    [
      'a Replace of a collection',
      [{ op: 'Replace', path: '/Contract/Company', value: [] }],
      'op #0: op "Replace" is not allowed on /Contract/Company (allowed: Add, Remove)',
    ],
  ])('fails the contract as an internal error naming the ops, and sends nothing: %s', async (_case, ops, problem) => {
    const api = acceptingApi();
    const ctx = await context(api);

    const outcome = await applyContract(work({}, {}, ops), ctx);

    expect(outcome).toEqual({
      outcome: 'failed',
      status: null,
      reason: `internal error: the planned patch does not fit the published patch schema (specs/patch.schema.json), so it was not sent: ${problem}; ops: [${ops.map((op) => JSON.stringify(op)).join(', ')}]`,
    });
    expect(api.patched).toEqual([]);
    expect(ctx.store.applied('acme').get('C-1')).toEqual(PREVIOUS);
  });
});
