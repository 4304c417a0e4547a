/** From a drift report to notifications: the new drift once, attributed; a repeat nothing; a resolution once. */
import { describe, expect, it } from 'vitest';
import type { FieldAttribution } from '../../engine/drift/attribution.ts';
import type { DriftContract, DriftTenant } from '../../engine/drift/types.ts';
import type { FieldName } from '../../engine/model/fields.ts';
import type { Op } from '../../engine/model/types.ts';
import { decideDriftNotifications, driftNotifications, driftSightings, type DriftMemory } from '../../engine/notify/index.ts';

function drifted(id: string, line: number, fields: FieldName[]): DriftContract {
  return {
    id,
    file: 'contracts/acme/facilities.yaml',
    line,
    drift: fields.map((field) => ({ field, live: 'x', desired: 'y', lastApplied: 'y', cause: 'changed-outside-git' })),
    ops: fields.map((field): Op => ({ op: 'Replace', path: `/Contract/${field}`, value: 'y' })),
  };
}

function tenant(contracts: DriftContract[]): DriftTenant {
  return { tenant: 'acme', managed: 3, contracts, errors: [] };
}

const JANE: FieldAttribution = { field: 'Name', attributed: true, actor: 'jane@example.com', time: '2027-03-01T09:15:00.000Z', eventId: 'evt-000002' };
const CONTEXT = { time: '2027-03-01T09:20:00.000Z', commit: 'a'.repeat(40) };
const CHECKED = { acme: ['4711', '4712', '5001'] };

describe('driftNotifications', () => {
  it('sends a drift once with its attributions, nothing for the repeat, and a resolution once', () => {
    const first = tenant([drifted('4711', 4, ['Name', 'Comment'])]);
    let memory: DriftMemory = {};

    const runs = [first, first, tenant([])].map((report) => {
      const decision = decideDriftNotifications({ previous: memory, drifted: driftSightings(report), checked: CHECKED });
      memory = decision.next;
      return driftNotifications({ tenant: report, decision, attributions: { '4711': [JANE] }, ...CONTEXT });
    });

    expect(runs[0]).toEqual([
      {
        event: 'drift',
        tenant: 'acme',
        ...CONTEXT,
        contracts: [{ id: '4711', file: 'contracts/acme/facilities.yaml', line: 4, fields: [{ field: 'Name', attribution: JANE }, { field: 'Comment' }] }],
      },
    ]);
    expect(runs[1]).toEqual([]);
    expect(runs[2]).toEqual([{ event: 'drift-resolved', tenant: 'acme', ...CONTEXT, contracts: [{ id: '4711', fields: [] }] }]);
  });

  it('names only the new drift when an old one is still there, and one field once however many members drifted', () => {
    const old = drifted('4711', 4, ['Name']);
    const previous = decideDriftNotifications({ previous: {}, drifted: driftSightings(tenant([old])), checked: CHECKED }).next;
    const report = tenant([old, drifted('4712', 9, ['Company', 'Company'])]);

    const decision = decideDriftNotifications({ previous, drifted: driftSightings(report), checked: CHECKED });
    const [notification] = driftNotifications({ tenant: report, decision, ...CONTEXT });

    expect(notification?.contracts).toEqual([{ id: '4712', file: 'contracts/acme/facilities.yaml', line: 9, fields: [{ field: 'Company' }] }]);
  });

  it("names the policy rules whose findings stand in the run (any tenant's), which drift --fix would refuse; not a warning nor an excepted one", () => {
    const report = tenant([drifted('4711', 4, ['Name'])]);
    const decision = decideDriftNotifications({ previous: {}, drifted: driftSightings(report), checked: CHECKED });
    const finding = { tenant: 'globex', contractId: '9001', message: 'no owner' } as const;
    const exception = { state: 'excepted', owner: 'jane@example.com', reason: 'owner being appointed', expires: '2027-12-31' } as const;

    const [standing] = driftNotifications({
      tenant: report,
      decision,
      findings: [
        { ...finding, check: 'dates-in-order', action: 'warn' },
        { ...finding, check: 'dora-owner', action: 'deny' },
        { ...finding, check: 'eba-code', action: 'deny', exception },
        { ...finding, check: 'expenses-rise', action: 'override' },
      ],
      ...CONTEXT,
    });
    const [none] = driftNotifications({ tenant: report, decision, findings: [{ ...finding, check: 'eba-code', action: 'deny', exception }], ...CONTEXT });

    expect(standing?.denials).toEqual({ rules: ['dora-owner', 'expenses-rise'], overridable: true });
    expect(none).not.toHaveProperty('denials');
  });
});
