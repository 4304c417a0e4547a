import type { FieldName } from '../model/fields.ts';
import type { Op } from '../model/types.ts';

/** The plan document version this code writes and reads (DESIGN.md section 5). */
export const PLAN_VERSION = 1;

export type PlanAction = 'update' | 'noop';
/** `unknown`: never applied and no read configured (DESIGN.md section 3.4). */
export type KnownFrom = 'state' | 'live' | 'unknown';

/**
 * One change for people. A scalar: the field's known and desired value. A collection: one member,
 * `before` null for an Add, `after` null for a Remove, both set for a member removed and re-added
 * because a field it writes changed. `before` is null when the field is not set or not known.
 */
export interface PlanChange {
  readonly field: FieldName;
  readonly before: unknown;
  readonly after: unknown;
}

export interface PlanContract {
  readonly id: string;
  /** Desired-state file and line of the ContractId key. */
  readonly file: string;
  readonly line: number;
  readonly action: PlanAction;
  readonly knownFrom: KnownFrom;
  /** Fingerprint of the known state the ops were computed from; see fingerprint(). */
  readonly knownFingerprint: string;
  /** The body of the PATCH, exactly; empty for `noop`. */
  readonly ops: readonly Op[];
  readonly changes: readonly PlanChange[];
}

export interface PlanTenant {
  readonly tenant: string;
  readonly contracts: readonly PlanContract[];
}

export interface PlanSource {
  /** The repository as given on the command line. */
  readonly repo: string;
  /** The git ref the desired state was read at; null for the working tree. */
  readonly ref: string | null;
  readonly commit: string | null;
}

export interface PlanSummary {
  readonly tenants: number;
  readonly contracts: number;
  readonly changed: number;
  readonly ops: number;
}

export interface PlanDocument {
  readonly version: typeof PLAN_VERSION;
  readonly createdAt: string;
  readonly source: PlanSource;
  readonly tenants: readonly PlanTenant[];
  readonly summary: PlanSummary;
}
