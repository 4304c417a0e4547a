/**
 * Who changed a drifted field, from the service's audit events (`api.audit`). Pure: the drifted
 * fields and the events in, one answer per field out. A field is attributed only to the one event
 * that last changed it; whenever the events do not say that, the answer is "unattributed", with the
 * reason, and never a guess.
 */
import type { AuditEvent } from '../api/audit.ts';

export type UnattributedReason =
  /** The audit events were not read (not configured, or the read failed). */
  | 'not-read'
  /** No event changed the field (since contract-sync last knew it). */
  | 'no-event'
  /** The last event that changed it is contract-sync's own: whatever changed it afterwards left no event. */
  | 'own-change'
  /** Several actors changed it at the same latest time. */
  | 'ambiguous';

export type FieldAttribution =
  | { readonly field: string; readonly attributed: true; readonly actor: string; readonly time: string; readonly eventId?: string }
  | { readonly field: string; readonly attributed: false; readonly reason: UnattributedReason };

export interface AttributionOptions {
  /** The actors that are contract-sync itself (the tenant's client ids): their changes are not drift. */
  readonly ownActors: readonly string[];
  /** ISO 8601: when contract-sync last knew the contract to be as desired; older events cannot be the drift's cause. */
  readonly since?: string;
}

/**
 * One attribution per drifted field (in the order given, without repeats). `events` undefined means
 * they were not read: every field is unattributed (`not-read`).
 */
export function attributeDrift(fields: readonly string[], events: readonly AuditEvent[] | undefined, options: AttributionOptions): FieldAttribution[] {
  const unique = [...new Set(fields)];
  if (events === undefined) return unique.map((field) => ({ field, attributed: false, reason: 'not-read' }));
  const since = options.since === undefined ? -Infinity : Date.parse(options.since);
  const own = new Set(options.ownActors);
  return unique.map((field): FieldAttribution => {
    const touching = events.filter((event) => event.fields.includes(field) && Date.parse(event.time) >= since);
    if (touching.length === 0) return { field, attributed: false, reason: 'no-event' };
    const latest = Math.max(...touching.map((event) => Date.parse(event.time)));
    const last = touching.filter((event) => Date.parse(event.time) === latest);
    if (new Set(last.map((event) => event.actor)).size > 1) return { field, attributed: false, reason: 'ambiguous' };
    const event = last.at(-1)!;
    if (own.has(event.actor)) return { field, attributed: false, reason: 'own-change' };
    return { field, attributed: true, actor: event.actor, time: event.time, ...(event.id === undefined ? {} : { eventId: event.id }) };
  });
}

const UNATTRIBUTED: Readonly<Record<UnattributedReason, string>> = {
  'not-read': 'audit events not read',
  'no-event': 'no audit event changed it',
  'own-change': "the last audit event is contract-sync's own",
  ambiguous: 'several actors changed it at once',
};

/** `changed by jane@example.com at 2027-03-01T09:15:00.000Z (event evt-000002)`, or `unattributed (why)`: the words of every report and message. */
export function attributionText(attribution: FieldAttribution): string {
  if (!attribution.attributed) return `unattributed (${UNATTRIBUTED[attribution.reason]})`;
  return `changed by ${attribution.actor} at ${attribution.time}${attribution.eventId === undefined ? '' : ` (event ${attribution.eventId})`}`;
}
