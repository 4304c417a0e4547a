import type { CollectionMode } from '../config/types.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { CollectionFieldName, FieldName } from '../model/fields.ts';
import type { Op } from '../model/types.ts';

/** The plan document version this code writes and reads (docs/architecture.md section 5). */
export const PLAN_VERSION = 1;

export type PlanAction = 'update' | 'noop';
/** `unknown`: never applied and no read configured (docs/architecture.md section 3.4). */
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
  /**
   * Only in a plan made with a base (`plan --base`): true when the change from the base adds this
   * contract or edits its desired fields.
   */
  readonly touched?: boolean;
  readonly knownFrom: KnownFrom;
  /** Fingerprint of the known state the ops were computed from; see fingerprint(). */
  readonly knownFingerprint: string;
  /** The body of the PATCH, exactly; empty for `noop`. */
  readonly ops: readonly Op[];
  readonly changes: readonly PlanChange[];
  /**
   * Only with a base, for a touched contract whose known state is unknown: what the change did to
   * its desired fields (base -> head). Its ops set every desired field, which says nothing of what
   * the pull request changed; the pull-request comment shows this instead.
   */
  readonly desiredChanges?: readonly DesiredChange[];
  /** What the checks (policy rules, a library caller's) found on this contract, as in the plan's `findings`; absent when nothing. */
  readonly policy?: readonly ContractFinding[];
}

/** A finding on a planned contract (engine/plan/policy-findings.ts): the plan's Finding without what the contract already says. */
export type ContractFinding = Omit<Finding, 'tenant' | 'contractId' | 'file' | 'line'>;

/** The plan's findings counted by what they do: as the text plan's headline counts them. */
export interface PolicySummary {
  readonly findings: number;
  readonly denied: number;
  readonly needsOverride: number;
  readonly warned: number;
  readonly overridden: number;
  readonly excepted: number;
  /** Of those counted above as denied, needing an override or warned: findings whose exception has expired. */
  readonly expired: number;
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
  /** Only with `plan --base`: what the desired state was compared with. */
  readonly base?: PlanBase;
  /** Only in a plan of the contracts changed since the last applied commit (not `--full`). */
  readonly incremental?: PlanIncremental;
}

/**
 * An incremental plan: per tenant, only the contracts whose desired fields changed since the
 * tenant's last applied commit, and those an earlier run did not finish; every other contract, by
 * the state store's record, plans to nothing.
 */
export interface PlanIncremental {
  /** The tenants planned incrementally, with the commit each was planned since. */
  readonly tenants: readonly PlanIncrementalTenant[];
  /** Tenants planned in full all the same, and why. */
  readonly full: readonly { readonly tenant: string; readonly reason: string }[];
}

export interface PlanIncrementalTenant {
  readonly tenant: string;
  /** The tenant's last applied commit. */
  readonly since: string;
  /** Contracts an earlier run did not finish, planned whether or not they changed. */
  readonly pending: number;
}

export interface PlanBase {
  /** The ref as given. */
  readonly ref: string;
  readonly commit: string;
  /** Where the head branched off the base: the change is what happened since (as a pull request shows it). */
  readonly mergeBase: string;
}

/** A contract the base declared that the head no longer declares: left unchanged on the service. */
export interface PlanUnmanagedContract {
  readonly tenant: string;
  readonly id: string;
  /** Where the base declared it. */
  readonly file: string;
  readonly line: number;
}

/**
 * One change a pull request made to a contract's desired fields (base -> head), as PlanChange: a
 * scalar set or changed, a member added, removed or changed. `unmanaged`: the head no longer writes
 * the field (or member list), `after` is null and the service keeps its value.
 */
export interface DesiredChange extends PlanChange {
  readonly unmanaged?: true;
}

/** contractKey(tenant, id) -> what the change did to that contract's desired fields; only touched contracts. */
export type DesiredChanges = ReadonlyMap<string, readonly DesiredChange[]>;

/** What a change between the base and the head did to the desired state (input to createPlan). */
export interface PlanTouched {
  /** Tenant -> ids of the head's contracts that the change adds or edits. */
  readonly contracts: ReadonlyMap<string, ReadonlySet<string>>;
  readonly noLongerManaged: readonly PlanUnmanagedContract[];
  /** What the change did to each touched contract's desired fields (the pull request's own diff): kept in the plan for those with the known state unknown. */
  readonly desiredChanges?: DesiredChanges;
}

export interface PlanSummary {
  readonly tenants: number;
  readonly contracts: number;
  readonly changed: number;
  readonly ops: number;
  /** Only with a base: contracts marked `touched`. */
  readonly touched?: number;
  /** Only with a base: the length of `noLongerManaged`. */
  readonly noLongerManaged?: number;
  /** Only when the checks found something: `findings` counted. */
  readonly policy?: PolicySummary;
}

/**
 * What a reviewer needs to know about the run that made a plan and its ops do not say: recorded
 * by the CLI (createPlan takes data only), so that `show PLAN.json` renders it as `plan` did.
 */
export interface PlanMadeWith {
  /** The contract-sync version that computed the ops. */
  readonly version: string;
  /**
   * Whether the config has reads (api.read): then `apply` without a plan file reads each contract
   * live before patching it, so a contract whose known state is unknown here is planned again.
   */
  readonly reads: boolean;
  /** Each collection field's mode: in authoritative mode, known members the desired state does not list are removed. */
  readonly collections: Readonly<Partial<Record<CollectionFieldName, CollectionMode>>>;
  /** The removal guard's limit (config safety.maxRemovals) apply will check after the merge; absent in older plans. */
  readonly maxRemovals?: number;
}

export interface PlanDocument {
  readonly version: typeof PLAN_VERSION;
  readonly createdAt: string;
  readonly source: PlanSource;
  readonly tenants: readonly PlanTenant[];
  /** Only with a base: contracts removed from the desired state by the change; the engine never deletes. */
  readonly noLongerManaged?: readonly PlanUnmanagedContract[];
  readonly summary: PlanSummary;
  /** Absent from plans made by a library call, or before contract-sync recorded it. */
  readonly madeWith?: PlanMadeWith;
  /** What the plan's checks found that no outcome shows (engine/pipeline/checks.ts), in tenant order; absent when nothing. */
  readonly findings?: readonly Finding[];
}
