import { describe, expect, it } from 'vitest';
import { judgeReviewed, planReadLive } from '../../engine/apply/reviewed-plan.ts';
import type { Op } from '../../engine/model/types.ts';
import type { PlanContract, PlanDocument } from '../../engine/plan/types.ts';

const RENAME: Op = { op: 'Replace', path: '/Contract/Name', value: 'B' };
const ADD: Op = { op: 'Add', path: '/Contract/Company', value: { Id: 1, RelationType: 'Supplier' } };

function contract(overrides: Partial<PlanContract> = {}): PlanContract {
  return {
    id: '4711',
    file: 'contracts/acme.yaml',
    line: 3,
    action: 'update',
    knownFrom: 'live',
    knownFingerprint: 'sha256:a',
    ops: [RENAME, ADD],
    changes: [],
    ...overrides,
  };
}

describe('judgeReviewed', () => {
  it('sends the fresh contract when its fingerprint and ops are the reviewed ones, whatever the key order', () => {
    const fresh = contract({ ops: [RENAME, { value: { RelationType: 'Supplier', Id: 1 }, path: '/Contract/Company', op: 'Add' }] });

    const verdict = judgeReviewed(contract(), fresh);

    expect(verdict).toEqual({ kind: 'send', contract: fresh });
  });

  it.each<[string, PlanContract | undefined, RegExp]>([
    [
      'no longer planned',
      undefined,
      /^stale plan: at the plan's commit this tenant declares no contract 4711, which the plan lists from contracts\/acme\.yaml:3; run contract-sync plan again$/,
    ],
    [
      "declared in another file: the plan carries another tenant's contract",
      contract({ file: 'contracts/globex.yaml', line: 9, knownFingerprint: 'sha256:b' }),
      /^stale plan: the plan lists contract 4711 from contracts\/acme\.yaml:3, but at the plan's commit this tenant declares it in contracts\/globex\.yaml:9 \(the plan carries another tenant's contract, or the file was renamed since\); run contract-sync plan again$/,
    ],
    [
      'a known state read live that changed',
      contract({ knownFingerprint: 'sha256:b' }),
      /^stale plan: the known state \(read live\) changed since the plan was made; run contract-sync plan again$/,
    ],
    [
      'a known state in the state store that changed',
      contract({ knownFrom: 'state', knownFingerprint: 'sha256:b' }),
      /the known state \(in the state store\) changed/,
    ],
    ['other ops', contract({ ops: [RENAME] }), /^stale plan: planning it again gives other ops than the reviewed ones .*; run contract-sync plan again$/],
    ['the same ops in another order', contract({ ops: [ADD, RENAME] }), /other ops than the reviewed ones/],
  ])('refuses a contract %s as stale', (_name, fresh, reason) => {
    const verdict = judgeReviewed(contract(), fresh);

    expect(verdict.kind).toBe('stale');
    expect(verdict.kind === 'stale' ? verdict.reason : '').toMatch(reason);
  });
});

describe('planReadLive', () => {
  it.each<[PlanContract['knownFrom'][], boolean]>([
    [['state', 'unknown'], false],
    [['unknown', 'live'], true],
    [[], false],
  ])('is true for known states %j only when one was read live', (knownFroms, expected) => {
    const plan = { tenants: [{ tenant: 'acme', contracts: knownFroms.map((knownFrom) => contract({ knownFrom })) }] } as unknown as PlanDocument;

    expect(planReadLive(plan)).toBe(expected);
  });
});
