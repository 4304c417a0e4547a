/** decideDriftNotifications: once per new drift, once when resolved, nothing for a repeat. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Op } from '../../engine/model/types.ts';
import { decideDriftNotifications, driftKey, type DriftMemory, type DriftSighting } from '../../engine/notify/index.ts';

const RENAME: Op[] = [{ op: 'Replace', path: '/Contract/Name', value: 'Facility cleaning 2027' }];
const DRIFT: DriftSighting = { tenant: 'acme', contractId: '4711', ops: RENAME };

describe('decideDriftNotifications', () => {
  it('notifies a new drift once: a hundred scheduled runs over the same drift send one message', () => {
    let memory: DriftMemory = {};
    let sent = 0;

    for (let run = 0; run < 100; run += 1) {
      const decision = decideDriftNotifications({ previous: memory, drifted: [DRIFT], checked: { acme: ['4711', '4712'] } });
      sent += decision.notify.length;
      memory = decision.next;
    }

    expect(sent).toBe(1);
    expect(memory).toEqual({ acme: { '4711': driftKey(DRIFT) } });
  });

  it('says resolved once, when the contract is checked and equal to git again, and forgets it', () => {
    const previous = { acme: { '4711': driftKey(DRIFT) } };

    const first = decideDriftNotifications({ previous, drifted: [], checked: { acme: ['4711'] } });
    const second = decideDriftNotifications({ previous: first.next, drifted: [], checked: { acme: ['4711'] } });

    expect(first.resolved).toEqual([{ tenant: 'acme', contractId: '4711' }]);
    expect(first.next).toEqual({});
    expect(second.resolved).toEqual([]);
  });

  it('drift --fix: a new drift it corrected is notified and not remembered; a remembered one it corrected is resolved', () => {
    const other: DriftSighting = { tenant: 'acme', contractId: '4712', ops: RENAME };
    const previous = { acme: { '4712': driftKey(other) } };

    const decision = decideDriftNotifications({
      previous,
      drifted: [DRIFT, other],
      checked: { acme: ['4711', '4712'] },
      corrected: { acme: ['4711', '4712'] },
    });

    expect(decision.notify).toEqual([DRIFT]);
    expect(decision.repeated).toEqual([other]);
    expect(decision.resolved).toEqual([{ tenant: 'acme', contractId: '4712' }]);
    expect(decision.next).toEqual({});
  });

  it('notifies again when the drift changes what it would take to correct it', () => {
    const previous = { acme: { '4711': driftKey(DRIFT) } };
    const changed = { ...DRIFT, ops: [{ op: 'Replace', path: '/Contract/Name', value: 'Other' }] as Op[] };

    const decision = decideDriftNotifications({ previous, drifted: [changed], checked: { acme: ['4711'] } });

    expect(decision.notify).toEqual([changed]);
    expect(decision.resolved).toEqual([]);
    expect(decision.next).toEqual({ acme: { '4711': driftKey(changed) } });
  });

  it('neither resolves nor forgets a drift it could not check (a failed read, another tenant, a contract outside the selection)', () => {
    const previous = { acme: { '4711': driftKey(DRIFT) }, globex: { 'G-100': 'k' } };

    const decision = decideDriftNotifications({ previous, drifted: [], checked: { acme: ['4712'] } });

    expect(decision.resolved).toEqual([]);
    expect(decision.next).toEqual(previous);
  });

  it('keys a drift by tenant, contract and ops alone', () => {
    expect(driftKey(DRIFT)).toBe(
      driftKey({ contractId: '4711', ops: [{ value: 'Facility cleaning 2027', path: '/Contract/Name', op: 'Replace' }] as Op[], tenant: 'acme' }),
    );
    expect(driftKey(DRIFT)).not.toBe(driftKey({ ...DRIFT, tenant: 'globex' }));
    expect(driftKey(DRIFT)).not.toBe(driftKey({ ...DRIFT, contractId: '4712' }));
  });

  it('sends nothing when a run sees exactly what the last one saw (property)', () => {
    const sighting = fc.record({
      tenant: fc.constantFrom('acme', 'globex'),
      contractId: fc.constantFrom('1', '2', '3'),
      ops: fc.array(fc.record({ op: fc.constant('Replace' as const), path: fc.constantFrom('/Contract/Name', '/Contract/Area'), value: fc.string() }), {
        minLength: 1,
        maxLength: 2,
      }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(sighting, { selector: (s) => `${s.tenant}/${s.contractId}` }), (drifted) => {
        const checked = { acme: ['1', '2', '3'], globex: ['1', '2', '3'] };
        const first = decideDriftNotifications({ previous: {}, drifted, checked });

        const again = decideDriftNotifications({ previous: first.next, drifted, checked });

        expect(first.notify).toHaveLength(drifted.length);
        expect(again.notify).toEqual([]);
        expect(again.resolved).toEqual([]);
        expect(again.next).toEqual(first.next);
      }),
    );
  });
});
