/**
 * Why a contract drifted: each live-vs-desired change of a plan made from a live read, judged
 * against the contract's last applied record (docs/architecture.md section 5, `drift`). Pure.
 *
 * The rule: live differs from the last applied value -> changed outside git; live equals it (so
 * desired is what moved) -> not yet applied; no record -> never applied. When both moved, live
 * and git, the change is "changed outside git": fixing it overwrites someone's edit on the
 * service, which is the thing a reader must not miss.
 */
import { getField, isCollectionField, type CollectionFieldSpec, type FieldName, type FieldSpec } from '../model/fields.ts';
import { describeIdentity, equalWhereWritten, isJsonObject, memberIdentity } from '../model/normalise.ts';
import type { ContractFields } from '../model/types.ts';
import { diffContract } from '../plan/diff.ts';
import type { PlanChange } from '../plan/types.ts';
import type { DriftCause, DriftItem } from './types.ts';

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Equal scalars in the planner's own normal form (numbers, instants, durations), so that drift and plan never disagree. */
function scalarsEqual(field: FieldName, a: unknown, b: unknown): boolean {
  if (isAbsent(a) || isAbsent(b)) return isAbsent(a) && isAbsent(b);
  return diffContract({ [field]: a } as ContractFields, { [field]: b } as ContractFields).length === 0;
}

function findMember(field: CollectionFieldSpec, members: unknown, identity: string): unknown {
  if (!Array.isArray(members)) return undefined;
  // With duplicate identities the first one counts, as in the diff and the op interpreter.
  return members.find((member) => memberIdentity(field, member) === identity);
}

function memberCause(change: PlanChange, appliedMember: unknown): DriftCause {
  // Add: the member is missing live. Was it there when we last applied?
  if (change.before === null) return appliedMember === undefined ? 'not-yet-applied' : 'changed-outside-git';
  // Remove: live has a member the desired state does not. Did we leave it there?
  if (change.after === null) return appliedMember === undefined ? 'changed-outside-git' : 'not-yet-applied';
  if (appliedMember === undefined) return 'changed-outside-git';
  return equalWhereWritten(change.before, appliedMember, differingPart(change.before, change.after)) ? 'not-yet-applied' : 'changed-outside-git';
}

/**
 * The values of `after` that differ from `before`. An Add carries the member complete (the fields
 * the desired member leaves out as known or null), so only where live and desired differ says
 * what the desired member changes; that part alone is compared with the last applied member.
 */
function differingPart(before: unknown, after: unknown): unknown {
  if (!isJsonObject(after)) return after;
  const known = isJsonObject(before) ? before : {};
  const part: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(after)) {
    if (isJsonObject(value)) {
      const inner = differingPart(known[key], value);
      if (isJsonObject(inner) && Object.keys(inner).length > 0) part[key] = inner;
    } else if (!equalWhereWritten(known[key], value, value)) {
      part[key] = value;
    }
  }
  return part;
}

/**
 * One change of a plan whose known state is a live read (`before` is live, `after` desired), with
 * its cause. `lastApplied` is the contract's record in the state store; undefined when there is none.
 */
export function classifyChange(change: PlanChange, lastApplied: ContractFields | undefined): DriftItem {
  // A plan's field names come from the field table.
  const field = getField(change.field) as FieldSpec;
  const applied = lastApplied as Readonly<Record<string, unknown>> | undefined;
  if (!isCollectionField(field)) {
    const appliedValue = applied?.[change.field] ?? null;
    const cause: DriftCause =
      applied === undefined ? 'never-applied' : scalarsEqual(change.field, change.before, appliedValue) ? 'not-yet-applied' : 'changed-outside-git';
    return { field: change.field, live: change.before, desired: change.after, lastApplied: appliedValue, cause };
  }
  const member = change.after ?? change.before;
  const appliedMember = findMember(field, applied?.[change.field], memberIdentity(field, member));
  const cause: DriftCause = applied === undefined ? 'never-applied' : memberCause(change, appliedMember);
  return {
    field: change.field,
    member: describeIdentity(field, member),
    live: change.before,
    desired: change.after,
    lastApplied: appliedMember ?? null,
    cause,
  };
}
