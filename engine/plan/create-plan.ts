/** createPlan: desired state + known state -> the versioned plan document (docs/architecture.md section 5). Pure. */
import { compareText } from '../compare-text.ts';
import type { ContractSet } from '../desired/types.ts';
import { isUtcTimestamp } from '../model/normalise.ts';
import type { KnownState } from '../model/types.ts';
import { describeChanges } from './changes.ts';
import { checkDiffOptions, diffCheckedContract, type DiffOptions } from './diff.ts';
import { fingerprint } from '../model/fingerprint.ts';
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

  const byTenant = new Map<string, { id: string; file: string; line: number; column: number; fields: ContractSet['contracts'][number]['fields'] }[]>();
  for (const set of desired) {
    const list = byTenant.get(set.tenant) ?? [];
    byTenant.set(set.tenant, list);
    for (const contract of set.contracts) list.push({ ...contract, file: set.file });
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
    const sorted = byTenant.get(tenant)!.sort((a, b) => compareText(a.file, b.file) || a.line - b.line || a.column - b.column || compareText(a.id, b.id));
    for (const contract of sorted) {
      const entry = knownContracts?.get(contract.id);
      const ops = diffCheckedContract(entry?.fields, contract.fields, diffOptions);
      const isTouched = touchedIds?.has(contract.id) === true;
      contracts.push({
        id: contract.id,
        file: contract.file,
        line: contract.line,
        action: ops.length > 0 ? 'update' : 'noop',
        ...(touched ? { touched: isTouched } : {}),
        knownFrom: entry?.from ?? 'unknown',
        knownFingerprint: entry === undefined ? unknownFingerprint() : fingerprint(entry.fields),
        ops,
        changes: describeChanges(entry?.fields, ops),
      });
      contractCount += 1;
      if (ops.length > 0) changed += 1;
      opCount += ops.length;
      if (isTouched) touchedCount += 1;
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
