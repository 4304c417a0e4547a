/** createPlan: desired state + known state -> the versioned plan document (docs/architecture.md section 5). Pure. */
import { compareText } from '../text/compare-text.ts';
import type { ContractSet } from '../desired/types.ts';
import { isUtcTimestamp } from '../model/normalise.ts';
import type { KnownState } from '../model/types.ts';
import { checkDiffOptions, type DiffOptions } from './diff.ts';
import { NONE_TOUCHED } from './plan-contract.ts';
import { planTenantContracts } from './plan-tenant.ts';
import { PLAN_VERSION, type PlanContract, type PlanDocument, type PlanSource, type PlanTenant, type PlanTouched, type PlanUnmanagedContract } from './types.ts';

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

/** Contracts no longer managed as a plan lists them: by tenant, file, line and id, with only the plan's keys. */
export function sortNoLongerManaged(contracts: readonly PlanUnmanagedContract[]): PlanUnmanagedContract[] {
  return [...contracts]
    .sort((a, b) => compareText(a.tenant, b.tenant) || compareText(a.file, b.file) || a.line - b.line || compareText(a.id, b.id))
    .map(({ tenant, id, file, line }) => ({ tenant, id, file, line }));
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
    const contracts: PlanContract[] = [];
    const marking = touched
      ? { ids: touched.contracts.get(tenant) ?? NONE_TOUCHED, ...(touched.desiredChanges ? { desiredChanges: touched.desiredChanges } : {}) }
      : undefined;
    const counts = planTenantContracts(
      tenant,
      byTenant.get(tenant)!,
      known.get(tenant),
      marking,
      { contract: (planned) => void contracts.push(planned), end() {} },
      diffOptions,
    );
    contractCount += counts.contracts;
    changed += counts.changed;
    opCount += counts.ops;
    touchedCount += counts.touched;
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
