/**
 * The service's audit events, as the emulator records them (docs/architecture.md section 6): one
 * per change of a contract, by a PATCH (actor: the token's client id) or by the admin's
 * out-of-band PUT (actor: its X-Actor header). The real service's shape is unpublished; this is one
 * possible answer, read by the engine through `api.audit` like any other.
 */
import { isDeepStrictEqual } from 'node:util';
import { FIELD_NAMES } from '../engine/model/index.ts';

export interface AuditEvent {
  /** Unique for the emulator's life: a reset clears the events, never reuses an id. */
  readonly id: string;
  /** ISO 8601 UTC, from the emulator's clock. */
  readonly time: string;
  readonly actor: string;
  readonly contractId: string;
  /** The changed fields, in the contract table's order (fields the model does not list last, by name). */
  readonly fields: readonly string[];
}

const FIELD_ORDER: ReadonlyMap<string, number> = new Map(FIELD_NAMES.map((name, index) => [name, index]));

/** Field names without repeats, in table order; names the model does not list (kept by an admin PUT) after, sorted. */
export function orderFields(names: Iterable<string>): string[] {
  return [...new Set(names)].sort((a, b) => {
    const [left, right] = [FIELD_ORDER.get(a) ?? Infinity, FIELD_ORDER.get(b) ?? Infinity];
    if (left !== right) return left - right;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

/** The top-level fields whose value differs between two versions of a contract (absent = undefined). */
export function changedFields(before: Readonly<Record<string, unknown>> | undefined, after: Readonly<Record<string, unknown>>): string[] {
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after)]);
  return orderFields([...names].filter((name) => !isDeepStrictEqual(before?.[name], after[name])));
}

export class AuditLog {
  readonly #now: () => number;
  #events = new Map<string, AuditEvent[]>();
  #sequence = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Records a change; a change of no field is no event. */
  record(tenant: string, contractId: string, actor: string, fields: readonly string[]): AuditEvent | undefined {
    if (fields.length === 0) return undefined;
    this.#sequence += 1;
    const event: AuditEvent = {
      id: `evt-${String(this.#sequence).padStart(6, '0')}`,
      time: new Date(this.#now()).toISOString(),
      actor,
      contractId,
      fields: orderFields(fields),
    };
    const list = this.#events.get(tenant) ?? [];
    list.push(event);
    this.#events.set(tenant, list);
    return event;
  }

  /** The tenant's events for one contract, oldest first (copies). */
  forContract(tenant: string, contractId: string): AuditEvent[] {
    return (this.#events.get(tenant) ?? []).filter((event) => event.contractId === contractId).map((event) => ({ ...event, fields: [...event.fields] }));
  }

  clear(): void {
    this.#events = new Map();
  }
}
