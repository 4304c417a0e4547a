/**
 * Which contracts a change touches: not every contract of a changed file, only those it adds or
 * whose desired fields it edits. Pure: contract sets in, marking out.
 */
import equal from 'fast-deep-equal';
import type { ContractSet } from '../desired/types.ts';
import { FIELD_NAMES, type FieldName } from '../model/fields.ts';
import type { ContractFields } from '../model/types.ts';
import { describeChanges } from './changes.ts';
import { diffContract } from './diff.ts';
import type { DesiredChange, PlanTouched, PlanUnmanagedContract } from './types.ts';

function present(fields: ContractFields): string[] {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name)
    .sort();
}

/**
 * Equal as desired state: the same fields managed, and each equal as the diff compares them (`100`
 * = `100.0`, one instant in two notations, members in any order). Diffing both ways catches a
 * member field that only one side writes. Most contracts of a changed file are not the ones that
 * changed: the same values in the same shape are equal without diffing (an incremental plan's
 * start-up compares a file's hundred contracts to find the one that changed). That first look is
 * fast-deep-equal's, not node:util's isDeepStrictEqual, which costs a pull request's plan several
 * milliseconds of cold code; it calls an object's own `valueOf` or `toString`, which the closed
 * schemas of contract fields never let a key be.
 */
export function sameDesiredFields(a: ContractFields, b: ContractFields): boolean {
  if (equal(a, b)) return true;
  if (present(a).join('\n') !== present(b).join('\n')) return false;
  return diffContract(a, b).length === 0 && diffContract(b, a).length === 0;
}

/**
 * What a pull request did to one contract's desired fields, base -> head, field by field in the
 * field table's order: the diff the head makes against the base's desired fields (every member
 * list compared in full, as in authoritative mode), then each field the head no longer writes
 * (`unmanaged`: the service keeps its value). `before` undefined: the change adds the contract.
 */
export function desiredFieldChanges(before: ContractFields | undefined, after: ContractFields): DesiredChange[] {
  const changes: DesiredChange[] = describeChanges(before, diffContract(before, after));
  if (before === undefined) return changes;
  const fields: Readonly<Record<string, unknown>> = before;
  const kept: Readonly<Record<string, unknown>> = after;
  for (const name of FIELD_NAMES) {
    const value = fields[name];
    if (value === undefined || kept[name] !== undefined) continue;
    if (Array.isArray(value)) for (const member of value) changes.push({ field: name, before: member, after: null, unmanaged: true });
    else changes.push({ field: name, before: value, after: null, unmanaged: true });
  }
  const order = new Map<FieldName, number>(FIELD_NAMES.map((name, index) => [name, index]));
  // A stable sort: within a field, the diff's order.
  return changes.sort((a, b) => order.get(a.field)! - order.get(b.field)!);
}

/** One key for a tenant's contract, for maps that hold several tenants' contracts. */
export function contractKey(tenant: string, id: string): string {
  return `${tenant}\0${id}`;
}

/**
 * `head`: the whole desired state at the head. `base`: what the changed files declared at the base
 * (files added by the change have none). `changedPaths`: the desired-state files the change touched.
 * A contract is touched when its file changed and the base did not declare it (for that tenant) or
 * declared other fields; moving a contract unchanged to another file touches nothing. A contract
 * the base declared in a changed file that the head declares nowhere is no longer managed. Each
 * touched contract's desired changes (desiredFieldChanges) come with them.
 */
export function findTouchedContracts(head: readonly ContractSet[], base: readonly ContractSet[], changedPaths: ReadonlySet<string>): PlanTouched {
  const atBase = new Map<string, { fields: ContractFields; unmanaged: PlanUnmanagedContract }>();
  for (const set of base) {
    for (const contract of set.contracts) {
      const key = contractKey(set.tenant, contract.id);
      if (atBase.has(key)) continue;
      atBase.set(key, { fields: contract.fields, unmanaged: { tenant: set.tenant, id: contract.id, file: set.file, line: contract.line } });
    }
  }

  const atHead = new Set<string>();
  const contracts = new Map<string, Set<string>>();
  const desiredChanges = new Map<string, DesiredChange[]>();
  for (const set of head) {
    const changed = changedPaths.has(set.file);
    for (const contract of set.contracts) {
      const key = contractKey(set.tenant, contract.id);
      atHead.add(key);
      if (!changed) continue;
      const before = atBase.get(key);
      if (before && sameDesiredFields(before.fields, contract.fields)) continue;
      const ids = contracts.get(set.tenant) ?? new Set<string>();
      contracts.set(set.tenant, ids);
      ids.add(contract.id);
      desiredChanges.set(key, desiredFieldChanges(before?.fields, contract.fields));
    }
  }

  const noLongerManaged = [...atBase].filter(([key]) => !atHead.has(key)).map(([, entry]) => entry.unmanaged);
  return { contracts, noLongerManaged, desiredChanges };
}
