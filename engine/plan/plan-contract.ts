/**
 * One contract's plan against its tenant's known contracts (the plan stage, contract by contract):
 * every road to a plan makes each contract's plan here. Pure.
 */
import { compareText } from '../text/compare-text.ts';
import type { ContractSet, DesiredContract } from '../desired/types.ts';
import { opPath, type FieldName } from '../model/fields.ts';
import { fingerprint } from '../model/fingerprint.ts';
import type { KnownContracts, Op } from '../model/types.ts';
import { describeChanges } from './changes.ts';
import { diffCheckedContract, forEachUnknownOp, type DiffOptions } from './diff.ts';
import { contractKey } from './touched-contracts.ts';
import type { DesiredChanges, PlanChange, PlanContract } from './types.ts';

let unknownFingerprintText: string | undefined;

/** fingerprint(undefined), the same for every contract whose known state is unknown: hashed once. */
function unknownFingerprint(): string {
  unknownFingerprintText ??= fingerprint(undefined);
  return unknownFingerprintText;
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

export const NONE_TOUCHED: ReadonlySet<string> = new Set();

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
export function withDesiredChanges<T extends PlanContractText>(planned: T, tenant: string, desiredChanges: DesiredChanges | undefined): T {
  if (desiredChanges === undefined || planned.touched !== true || planned.knownFrom !== 'unknown') return planned;
  const changes = desiredChanges.get(contractKey(tenant, planned.id));
  return changes === undefined ? planned : { ...planned, desiredChanges: changes };
}
