import { describe, expect, it } from 'vitest';
import type { ContractOutcome } from '../../engine/apply/apply-contract.ts';
import { pendingAfterRun, type TenantRunFacts } from '../../engine/apply/pending-after-run.ts';
import type { PlanContract } from '../../engine/plan/types.ts';
import type { PendingContract } from '../../engine/state/types.ts';

const SINCE = '2027-01-02T00:00:00.000Z';
const EARLIER = '2027-01-01T00:00:00.000Z';

function planned(id: string, action: PlanContract['action'], knownFrom: PlanContract['knownFrom'] = 'state'): PlanContract {
  return { id, file: `contracts/${id}.yaml`, line: 3, action, knownFrom, knownFingerprint: 'sha256:x', ops: [], changes: [] };
}

function earlier(contractId: string, outcome: PendingContract['outcome']): PendingContract {
  return { contractId, outcome, reason: 'earlier', since: EARLIER };
}

function facts(overrides: Partial<TenantRunFacts>): TenantRunFacts {
  return { since: SINCE, previous: [], planned: [], sent: new Map(), notSent: new Map(), ...overrides };
}

const APPLIED: ContractOutcome = { outcome: 'applied', reconciled: false };
const FAILED: ContractOutcome = { outcome: 'failed', status: 409, reason: 'conflict' };

describe('pendingAfterRun', () => {
  it.each<[string, Partial<TenantRunFacts>, PendingContract[]]>([
    ['nothing pending, nothing failed', { planned: [planned('1', 'update')], sent: new Map([['1', APPLIED]]) }, []],
    [
      'a sent contract that failed, with its file',
      { planned: [planned('1', 'update')], sent: new Map([['1', FAILED]]) },
      [{ contractId: '1', outcome: 'failed', reason: 'conflict', since: SINCE, file: 'contracts/1.yaml' }],
    ],
    ['an earlier entry settled by sending', { previous: [earlier('1', 'unknown')], planned: [planned('1', 'update')], sent: new Map([['1', APPLIED]]) }, []],
    ['an earlier failure now planned as noop', { previous: [earlier('1', 'failed')], planned: [planned('1', 'noop')] }, []],
    ['an earlier uncertain entry now noop against a live read', { previous: [earlier('1', 'interrupted')], planned: [planned('1', 'noop', 'live')] }, []],
    [
      'an earlier uncertain entry now noop against the state store, which may be behind',
      { previous: [earlier('1', 'unknown')], planned: [planned('1', 'noop')] },
      [{ ...earlier('1', 'unknown'), file: 'contracts/1.yaml' }],
    ],
    ['an earlier entry of a contract no longer planned', { previous: [earlier('gone', 'failed')], planned: [planned('1', 'noop')] }, []],
    [
      'an incremental run: an earlier entry declared in a file it did not read stays',
      { previous: [{ ...earlier('2', 'failed'), file: 'contracts/2.yaml' }], planned: [planned('1', 'noop')], filesRead: new Set(['contracts/1.yaml']) },
      [{ ...earlier('2', 'failed'), file: 'contracts/2.yaml' }],
    ],
    [
      'an incremental run: an earlier entry without a file stays',
      { previous: [earlier('2', 'failed')], planned: [planned('1', 'noop')], filesRead: new Set(['contracts/1.yaml']) },
      [earlier('2', 'failed')],
    ],
    [
      'an incremental run: an earlier entry whose file it read, and which is gone from it, is dropped',
      { previous: [{ ...earlier('2', 'failed'), file: 'contracts/1.yaml' }], planned: [planned('1', 'noop')], filesRead: new Set(['contracts/1.yaml']) },
      [],
    ],
    [
      'an earlier entry of a contract changed but not sent (not in a saved plan)',
      { previous: [earlier('1', 'failed')], planned: [planned('1', 'update')] },
      [{ ...earlier('1', 'failed'), file: 'contracts/1.yaml' }],
    ],
    [
      'a contract refused as stale',
      { planned: [planned('1', 'update')], notSent: new Map([['1', { file: 'contracts/1.yaml', reason: 'stale plan' }]]) },
      [{ contractId: '1', outcome: 'failed', reason: 'stale plan', since: SINCE, file: 'contracts/1.yaml' }],
    ],
    [
      'a contract refused as stale that an earlier run left uncertain, which stays uncertain',
      { previous: [earlier('1', 'unknown')], notSent: new Map([['1', { file: 'contracts/1.yaml', reason: 'stale plan' }]]) },
      [{ ...earlier('1', 'unknown'), file: 'contracts/1.yaml' }],
    ],
  ])('%s', (_name, overrides, expected) => {
    const input = facts(overrides);

    const pending = pendingAfterRun(input);

    expect(pending).toStrictEqual(expected);
  });

  it('lists entries by ContractId', () => {
    const input = facts({
      planned: [planned('b', 'update'), planned('a', 'update')],
      sent: new Map([
        ['b', FAILED],
        ['a', FAILED],
      ]),
    });

    const pending = pendingAfterRun(input);

    expect(pending.map((entry) => entry.contractId)).toEqual(['a', 'b']);
  });
});
