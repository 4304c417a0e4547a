/** attributeDrift: who changed each drifted field, from audit events; "unattributed" wherever the events do not say. */
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../engine/api/audit.ts';
import { attributeDrift } from '../../engine/drift/attribution.ts';

const OWN = { ownActors: ['contract-sync-acme'] };

function event(actor: string, time: string, fields: string[], id?: string): AuditEvent {
  return { actor, time, fields, ...(id === undefined ? {} : { id }) };
}

describe('attributeDrift', () => {
  it('names the actor, time and event id of the last event that changed each field', () => {
    const events = [event('jane', '2027-01-01T08:00:00.000Z', ['Name', 'Area'], 'e1'), event('bob', '2027-01-01T09:00:00.000Z', ['Area'], 'e2')];

    const attributions = attributeDrift(['Name', 'Area'], events, OWN);

    expect(attributions).toEqual([
      { field: 'Name', attributed: true, actor: 'jane', time: '2027-01-01T08:00:00.000Z', eventId: 'e1' },
      { field: 'Area', attributed: true, actor: 'bob', time: '2027-01-01T09:00:00.000Z', eventId: 'e2' },
    ]);
  });

  it.each([
    ['the events were not read', undefined, {}, 'not-read'],
    ['no event changed the field', [event('jane', '2027-01-01T08:00:00.000Z', ['Area'])], {}, 'no-event'],
    [
      'the last change was contract-sync’s own',
      [event('jane', '2027-01-01T08:00:00.000Z', ['Name']), event('contract-sync-acme', '2027-01-01T09:00:00.000Z', ['Name'])],
      {},
      'own-change',
    ],
    [
      'two actors changed it at the same latest time',
      [event('jane', '2027-01-01T08:00:00.000Z', ['Name']), event('bob', '2027-01-01T08:00:00.000Z', ['Name'])],
      {},
      'ambiguous',
    ],
    [
      'the only change is older than what contract-sync last knew',
      [event('jane', '2027-01-01T08:00:00.000Z', ['Name'])],
      { since: '2027-01-02T00:00:00Z' },
      'no-event',
    ],
  ] as const)('says unattributed when %s', (_, events, extra, reason) => {
    const attributions = attributeDrift(['Name'], events as readonly AuditEvent[] | undefined, { ...OWN, ...extra });

    expect(attributions).toEqual([{ field: 'Name', attributed: false, reason }]);
  });

  it('answers each field once, in the order given, and omits an event id the service did not give', () => {
    const attributions = attributeDrift(['Area', 'Name', 'Area'], [event('jane', '2027-01-01T08:00:00.000Z', ['Name', 'Area'])], OWN);

    expect(attributions.map((attribution) => attribution.field)).toEqual(['Area', 'Name']);
    expect(attributions[0]).not.toHaveProperty('eventId');
  });

  it('takes the later of one actor’s events at the same time', () => {
    const events = [event('jane', '2027-01-01T08:00:00.000Z', ['Name'], 'e1'), event('jane', '2027-01-01T08:00:00.000Z', ['Name'], 'e2')];

    expect(attributeDrift(['Name'], events, OWN)).toEqual([
      { field: 'Name', attributed: true, actor: 'jane', time: '2027-01-01T08:00:00.000Z', eventId: 'e2' },
    ]);
  });
});
