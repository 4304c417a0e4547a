/** The drift report document (`drift --format json`, `drift --report FILE`): versioned like the plan. */
import type { ContractResultOutcome } from '../apply/run-report.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { FieldName } from '../model/fields.ts';
import type { Op } from '../model/types.ts';
import type { PlanSource } from '../plan/types.ts';
import type { DeliveryWarning } from '../diagnostic/delivery-warning.ts';
import type { FieldAttribution } from './attribution.ts';
import type { AuditWarning } from './audit-warnings.ts';

/** The drift report version this code writes. */
export const DRIFT_REPORT_VERSION = 1;

/**
 * Why a live value differs from the desired one, judged against what contract-sync last applied:
 * - `changed-outside-git`: live differs from the last applied value (someone changed the service);
 * - `not-yet-applied`: live equals the last applied value, desired does not (git changed since);
 * - `never-applied`: the state store holds no record of the contract.
 */
export type DriftCause = 'changed-outside-git' | 'not-yet-applied' | 'never-applied';

export const DRIFT_CAUSES: readonly DriftCause[] = ['changed-outside-git', 'not-yet-applied', 'never-applied'];

/** One drifted scalar field, or one drifted member of a collection. */
export interface DriftItem {
  readonly field: FieldName;
  /** Only for a collection member: its identity, e.g. `Id 12, RelationType "Supplier"`. */
  readonly member?: string;
  /** The live value (a member: the live member); null when absent. */
  readonly live: unknown;
  /** The desired value (a member: the desired member); null when the member is to go. */
  readonly desired: unknown;
  /** The last applied value (a member: the member of that identity); null when absent or never applied. */
  readonly lastApplied: unknown;
  readonly cause: DriftCause;
  /** With `api.audit`: who changed the field, or why that is not known. Absent without it. */
  readonly attribution?: FieldAttribution;
}

/** What `--fix` did to a drifted contract. */
export interface DriftFix {
  readonly outcome: ContractResultOutcome;
  readonly status: number | null;
  readonly reason?: string;
}

export interface DriftContract {
  readonly id: string;
  /** Desired-state file and line of the ContractId key. */
  readonly file: string;
  readonly line: number;
  readonly drift: readonly DriftItem[];
  /** The ops that make the live contract equal to the desired one (what `--fix` sends). */
  readonly ops: readonly Op[];
  /** Only with `--fix`. */
  readonly fix?: DriftFix;
}

/** A contract that could not be checked: its read failed. */
export interface DriftError {
  readonly id: string;
  readonly file: string;
  readonly line: number;
  readonly status: number | null;
  readonly reason: string;
  /** The read was answered 404: the service has no such contract (contract-sync cannot create one). */
  readonly notOnService?: true;
}

export interface DriftTenant {
  readonly tenant: string;
  /** Managed contracts of the tenant (desired state), checked or not. */
  readonly managed: number;
  /** Drifted contracts only, in plan order (file, line). */
  readonly contracts: readonly DriftContract[];
  readonly errors: readonly DriftError[];
  /** A problem of the whole tenant (token, lock): none of its contracts was checked. */
  readonly error?: string;
}

export interface DriftSummary {
  readonly tenants: number;
  /** Managed contracts in the selected tenants. */
  readonly contracts: number;
  readonly drifted: number;
  /** Drifted fields and members, in all and by cause. */
  readonly changes: number;
  readonly changedOutsideGit: number;
  readonly notYetApplied: number;
  readonly neverApplied: number;
  /** Contracts that could not be read, plus tenants that could not be checked. */
  readonly errors: number;
  /** Only with `--fix`: drifted contracts corrected, and not corrected. */
  readonly fixed?: number;
  readonly fixFailed?: number;
}

export interface DriftReport {
  readonly version: typeof DRIFT_REPORT_VERSION;
  readonly createdAt: string;
  /** Also the X-Correlation-Id of every request the run sent. */
  readonly runId: string;
  readonly source: PlanSource;
  /** True when the run also corrected the drift (`--fix`). */
  readonly fix: boolean;
  readonly tenants: readonly DriftTenant[];
  readonly summary: DriftSummary;
  /** What the run's checks found (policy rules: the same evaluator as validate, plan and apply), in tenant order; absent when nothing. */
  readonly findings?: readonly Finding[];
  /** What the run says beyond the drift: audit events it could not use, notifications not delivered. Absent when nothing. */
  readonly warnings?: readonly (AuditWarning | DeliveryWarning)[];
}
