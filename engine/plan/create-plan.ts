/** createPlan: desired state + known state -> the versioned plan document (docs/architecture.md section 5). Pure. */
import { compareText } from '../text/compare-text.ts';
import type { ContractSet, DesiredContract } from '../desired/types.ts';
import { isUtcTimestamp } from '../model/normalise.ts';
import { opPath, type FieldName } from '../model/fields.ts';
import type { KnownContracts, KnownState, Op } from '../model/types.ts';
import { describeChanges } from './changes.ts';
import { checkDiffOptions, diffCheckedContract, forEachUnknownOp, type DiffOptions } from './diff.ts';
import { fingerprint } from '../model/fingerprint.ts';
import { contractKey } from './touched-contracts.ts';
import {
  PLAN_VERSION,
  type DesiredChanges,
  type PlanChange,
  type PlanContract,
  type PlanDocument,
  type PlanSource,
  type PlanTenant,
  type PlanTouched,
  type PlanUnmanagedContract,
} from './types.ts';

export interface PlanOptions extends DiffOptions {
  /** When the plan was made (ISO 8601 UTC); passed in so that the same input gives the same plan. */
  readonly createdAt: string;
  readonly source: PlanSource;
  /**
   * What the change from `source.base` did (with a base only): marks each contract `touched` and
   * lists the contracts no longer managed.
   */
  readonly touched?: PlanTouched;
}

let unknownFingerprintText: string | undefined;

/** fingerprint(undefined), the same for every contract whose known state is unknown: hashed once. */
function unknownFingerprint(): string {
  unknownFingerprintText ??= fingerprint(undefined);
  return unknownFingerprintText;
}

/** Contracts no longer managed as a plan lists them: by tenant, file, line and id, with only the plan's keys. */
export function sortNoLongerManaged(contracts: readonly PlanUnmanagedContract[]): PlanUnmanagedContract[] {
  return [...contracts]
    .sort((a, b) => compareText(a.tenant, b.tenant) || compareText(a.file, b.file) || a.line - b.line || compareText(a.id, b.id))
    .map(({ tenant, id, file, line }) => ({ tenant, id, file, line }));
}

/** A contract of a tenant as planned: where it is declared, and its desired fields. */
export interface TenantContract extends DesiredContract {
  readonly file: string;
}

/** One tenant's contracts in plan order: by file and line (the order people read them in), then column and id. */
export function tenantContracts(sets: readonly ContractSet[]): TenantContract[] {
  const list: TenantContract[] = [];
  for (const set of sets) for (const contract of set.contracts) list.push({ ...contract, file: set.file });
  return list.sort((a, b) => compareText(a.file, b.file) || a.line - b.line || a.column - b.column || compareText(a.id, b.id));
}

const NONE_TOUCHED: ReadonlySet<string> = new Set();

/**
 * One contract's plan against its tenant's known contracts. `touchedIds`: only in a plan made with
 * a base, the tenant's contracts the change touches. `diffOptions` must have been checked (checkDiffOptions).
 */
export function planContract(
  contract: TenantContract,
  knownContracts: KnownContracts | undefined,
  touchedIds: ReadonlySet<string> | undefined,
  diffOptions: DiffOptions,
): PlanContract {
  const entry = knownContracts?.get(contract.id);
  if (entry === undefined) return planUnknownContract(contract, touchedIds);
  const { ops, changes, ...head } = planContractText(contract, knownContracts, touchedIds, diffOptions);
  // The fingerprint between knownFrom and ops: the plan document's keys keep their order.
  return { ...head, knownFingerprint: fingerprint(entry.fields), ops, changes };
}

/**
 * planContract of a contract with nothing known (a first plan's every contract), in one pass: each
 * op made with its change (the op's field, nothing before, the op's value after: what
 * describeChanges makes of it), the document's keys in planContract's order, no copies of the head.
 */
export function planUnknownContract(contract: TenantContract, touchedIds: ReadonlySet<string> | undefined): PlanContract {
  const ops: Op[] = [];
  const changes: PlanChange[] = [];
  forEachUnknownOp(contract.fields, 'copied', (field, value) => {
    const name = field.name as FieldName;
    ops.push(field.kind === 'collection' ? { op: 'Add', path: opPath(name), value } : { op: 'Replace', path: opPath(name), value });
    changes.push({ field: name, before: null, after: value });
  });
  return {
    id: contract.id,
    file: contract.file,
    line: contract.line,
    action: ops.length > 0 ? 'update' : 'noop',
    ...(touchedIds ? { touched: touchedIds.has(contract.id) } : {}),
    knownFrom: 'unknown',
    knownFingerprint: unknownFingerprint(),
    ops,
    changes,
  };
}

/** What the text plan reads of a contract's plan: all of it but the known state's fingerprint (which only the plan document carries). */
export type PlanContractText = Omit<PlanContract, 'knownFingerprint'>;

/** planContract without the known state's fingerprint (not hashed): for a plan written only as text. */
export function planContractText(
  contract: TenantContract,
  knownContracts: KnownContracts | undefined,
  touchedIds: ReadonlySet<string> | undefined,
  diffOptions: DiffOptions,
): PlanContractText {
  const entry = knownContracts?.get(contract.id);
  const ops = diffCheckedContract(entry?.fields, contract.fields, diffOptions);
  return {
    id: contract.id,
    file: contract.file,
    line: contract.line,
    action: ops.length > 0 ? 'update' : 'noop',
    ...(touchedIds ? { touched: touchedIds.has(contract.id) } : {}),
    knownFrom: entry?.from ?? 'unknown',
    ops,
    changes: describeChanges(entry?.fields, ops),
  };
}

/** A touched contract planned without known state keeps what the change did to its desired fields (its ops set them all). */
export function withDesiredChanges(planned: PlanContract, tenant: string, desiredChanges: DesiredChanges | undefined): PlanContract {
  if (desiredChanges === undefined || planned.touched !== true || planned.knownFrom !== 'unknown') return planned;
  const changes = desiredChanges.get(contractKey(tenant, planned.id));
  return changes === undefined ? planned : { ...planned, desiredChanges: changes };
}

/**
 * Plans every contract of `desired` against `known`. Tenants come out sorted by name, contracts
 * by file and line (the order people read them in), so the plan does not depend on input order.
 */
export function createPlan(desired: readonly ContractSet[], known: KnownState, options: PlanOptions): PlanDocument {
  if (!isUtcTimestamp(options.createdAt)) {
    throw new TypeError(`options.createdAt: expected an ISO 8601 date-time in UTC, got ${JSON.stringify(options.createdAt)}`);
  }
  const { touched } = options;
  if ((touched === undefined) !== (options.source.base === undefined)) {
    throw new TypeError('options.touched and options.source.base go together: the marking is relative to the base');
  }
  const diffOptions: DiffOptions = { collections: options.collections ?? {} };
  checkDiffOptions(diffOptions);

  const byTenant = new Map<string, ContractSet[]>();
  for (const set of desired) {
    const list = byTenant.get(set.tenant) ?? [];
    byTenant.set(set.tenant, list);
    list.push(set);
  }

  const tenants: PlanTenant[] = [];
  let contractCount = 0;
  let changed = 0;
  let opCount = 0;
  let touchedCount = 0;
  for (const tenant of [...byTenant.keys()].sort(compareText)) {
    const knownContracts = known.get(tenant);
    const touchedIds = touched?.contracts.get(tenant);
    const contracts: PlanContract[] = [];
    for (const contract of tenantContracts(byTenant.get(tenant)!)) {
      const planned = withDesiredChanges(
        planContract(contract, knownContracts, touched ? (touchedIds ?? NONE_TOUCHED) : undefined, diffOptions),
        tenant,
        touched?.desiredChanges,
      );
      contracts.push(planned);
      contractCount += 1;
      if (planned.ops.length > 0) changed += 1;
      opCount += planned.ops.length;
      if (planned.touched === true) touchedCount += 1;
    }
    tenants.push({ tenant, contracts });
  }

  const { base } = options.source;
  const summary = { tenants: tenants.length, contracts: contractCount, changed, ops: opCount };
  const { incremental } = options.source;
  const incrementalSource = incremental
    ? { incremental: { tenants: incremental.tenants.map((entry) => ({ ...entry })), full: incremental.full.map((entry) => ({ ...entry })) } }
    : {};
  if (!touched || !base) {
    return {
      version: PLAN_VERSION,
      createdAt: options.createdAt,
      source: { repo: options.source.repo, ref: options.source.ref, commit: options.source.commit, ...incrementalSource },
      tenants,
      summary,
    };
  }
  const noLongerManaged = sortNoLongerManaged(touched.noLongerManaged);
  return {
    version: PLAN_VERSION,
    createdAt: options.createdAt,
    source: {
      repo: options.source.repo,
      ref: options.source.ref,
      commit: options.source.commit,
      base: { ref: base.ref, commit: base.commit, mergeBase: base.mergeBase },
      ...incrementalSource,
    },
    tenants,
    noLongerManaged,
    summary: { ...summary, touched: touchedCount, noLongerManaged: noLongerManaged.length },
  };
}

/**
 * `plan` without the tenants in `left` (tenants that could not start: no known state was learnt,
 * and their contracts planned against nothing would read as every field to set), its summary
 * counted again.
 */
export function planWithout(plan: PlanDocument, left: ReadonlySet<string>): PlanDocument {
  if (left.size === 0 || !plan.tenants.some((tenant) => left.has(tenant.tenant))) return plan;
  const tenants = plan.tenants.filter((tenant) => !left.has(tenant.tenant));
  const contracts = tenants.flatMap((tenant) => tenant.contracts);
  const counts = {
    tenants: tenants.length,
    contracts: contracts.length,
    changed: contracts.filter((contract) => contract.ops.length > 0).length,
    ops: contracts.reduce((sum, contract) => sum + contract.ops.length, 0),
  };
  const touched = plan.summary.touched === undefined ? {} : { touched: contracts.filter((contract) => contract.touched === true).length };
  return { ...plan, tenants, summary: { ...plan.summary, ...counts, ...touched } };
}
