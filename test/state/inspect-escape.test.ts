import { describe, expect, it } from 'vitest';
import { describeLockHolder, renderRecordText, renderSummaryText } from '../../engine/state/inspect.ts';
import { lockTimeoutMessage } from '../../engine/state/lock-timeout-message.ts';

/** A C1 control (CSI), a bidi override and a zero-width space: what a terminal would act on or hide. */
const HOSTILE = '\u009b31m\u202Eevil\u200B';
const RAW = /[\u0080-\u009f\u202a-\u202e\u2066-\u2069\u200b-\u200f]/u;

describe('what state shows of a store, escaped for a terminal', () => {
  it('a record: its ContractId, commit and fields', () => {
    const text = renderRecordText('acme', {
      contractId: `4711${HOSTILE}`,
      fields: { Name: HOSTILE },
      fingerprint: 'f1',
      appliedAt: '2026-11-28T00:00:00.000Z',
      commit: HOSTILE,
    });

    expect(text).not.toMatch(RAW);
    expect(text).toContain('contract:    4711\\u009b31m\\u202eevil\\u200b');
    expect(text.split('\n').length).toBeGreaterThan(8);
  });

  it('a lock holder, in state list, state unlock and the lock timeout message', () => {
    const holder = { owner: `run ${HOSTILE}`, pid: 12, hostname: HOSTILE, acquiredAt: HOSTILE, heartbeatAt: HOSTILE };

    const listed = renderSummaryText([{ tenant: 'acme', records: 1, lastAppliedCommit: HOSTILE, pending: 0, lock: holder }]);
    const described = describeLockHolder(holder);
    const timeout = lockTimeoutMessage('acme', holder, 1000);

    for (const text of [listed, described, timeout]) expect(text).not.toMatch(RAW);
    expect(described).toContain('on host \\u009b31m');
  });
});
