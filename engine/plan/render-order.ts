/**
 * The order a plan is read in (docs/architecture.md section 5, "The pull-request comment"), decided
 * once for the markdown comment and the text plan: with a base, the contracts the pull request
 * changes come first (a contract whose known state is unknown showing what the pull request changed
 * in its desired YAML), then every member removed, named, and the contracts no longer managed, then
 * the other contracts with changes, counted per tenant before any of their details, then how many
 * match. The comment also gives the changes a finding names a section of their own and groups
 * identical changes (it has a length limit; the text has none). Pure.
 */
import { plural, viewChange, type ChangeView } from './render-common.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { DesiredChange, KnownFrom, PlanContract, PlanDocument } from './types.ts';

/** With a base: `own`, a contract the change touches (listed with or without ops); `other`, one with ops it does not touch. */
export type ContractPlace = 'own' | 'other';

/** Where a contract of a plan made with a base is shown; undefined: not listed, counted among those that match. */
export function placeOf(contract: Pick<PlanContract, 'action' | 'touched'>): ContractPlace | undefined {
  if (contract.touched === true) return 'own';
  return contract.action === 'update' ? 'other' : undefined;
}

export interface TenantContract {
  readonly tenant: string;
  readonly contract: PlanContract;
}

/** The contracts of a plan in `place`, in plan order (tenant, file, line). */
function placed(plan: PlanDocument, place: ContractPlace): TenantContract[] {
  return plan.tenants.flatMap((tenant) =>
    tenant.contracts.filter((contract) => placeOf(contract) === place).map((contract) => ({ tenant: tenant.tenant, contract })),
  );
}

/** Contracts the change from the base touches, in plan order (tenant, file, line); empty without a base. */
export function touchedContracts(plan: PlanDocument): TenantContract[] {
  return placed(plan, 'own');
}

/** Contracts with ops that the change does not touch: drift from the known state, or not applied yet. */
export function untouchedChangedContracts(plan: PlanDocument): TenantContract[] {
  return placed(plan, 'other');
}

/** With a base: the contracts listed nowhere, which match the desired state (not touched, no ops). */
export function matchingCount(plan: PlanDocument): number {
  let count = 0;
  for (const tenant of plan.tenants) for (const contract of tenant.contracts) if (placeOf(contract) === undefined) count += 1;
  return count;
}

/**
 * The pull request's own changes to a contract, shown instead of its ops: only where its known
 * state is unknown (its ops then set every desired field, which says nothing of what the pull
 * request changed; createPlan keeps them then).
 */
export function desiredOf(contract: Pick<PlanContract, 'knownFrom' | 'touched' | 'desiredChanges'>): readonly DesiredChange[] | undefined {
  return contract.knownFrom === 'unknown' && contract.touched === true ? contract.desiredChanges : undefined;
}

/** After a field or member the head no longer writes. */
export const UNMANAGED_NOTE = '(no longer in the desired state: the service keeps it)';

/** What a contract's diff shows when it is the pull request's own diff rather than its ops. */
export const DESIRED_DIFF_TEXT = 'this pull request changed';

/**
 * Above the pull request's contracts: of the `touched` ones, `shown` show the pull request's own
 * diff (their known state unknown), whose ops add up to `ops`.
 */
export function desiredNoteText(touched: number, shown: number, ops: number): string {
  const one = shown === 1;
  const which = shown === touched ? (one ? 'this contract' : 'these contracts') : `${shown} of them`;
  return (
    `The known state of ${which} is unknown (nothing in the state store for ${one ? 'it' : 'them'}): ` +
    `${one ? 'its diff is' : 'their diffs are'} what this pull request changed in the desired YAML, base to head, field by field. ` +
    `An apply would set every desired field of ${one ? 'it' : 'them'} (${plural(ops, 'op')}), not only the ones changed here.`
  );
}

/** The members a contract's plan removes, in its changes' order: each is named wherever the plan is shown. */
export function removedMembers(contract: Pick<PlanContract, 'changes'>): ChangeView[] {
  const removed: ChangeView[] = [];
  for (const change of contract.changes) {
    // Only a member's removal has nothing after: a scalar's change always sets a value.
    if (change.after !== null) continue;
    const view = viewChange(change);
    if (view.kind === 'remove') removed.push(view);
  }
  return removed;
}

/** The other contracts of one tenant (with ops, not changed by the pull request), as they are counted before their details. */
export interface OtherCounts {
  contracts: number;
  ops: number;
  unknown: number;
}

/** Adds a contract to its tenant's counts (made when undefined) and returns them. */
export function countOther(counts: OtherCounts | undefined, contract: { readonly ops: number; readonly knownFrom: KnownFrom }): OtherCounts {
  const into = counts ?? { contracts: 0, ops: 0, unknown: 0 };
  into.contracts += 1;
  into.ops += contract.ops;
  if (contract.knownFrom === 'unknown') into.unknown += 1;
  return into;
}

/** `2 contracts, 5 ops, known state unknown for all`. */
export function otherCountsText(counts: OtherCounts): string {
  const unknown = counts.unknown === 0 ? '' : `, known state unknown for ${counts.unknown === counts.contracts ? 'all' : counts.unknown}`;
  return `${plural(counts.contracts, 'contract')}, ${plural(counts.ops, 'op')}${unknown}`;
}

/** The line after the contracts of a plan made with a base: `3 other contracts match the desired state: no ops.` */
export function matchingText(matching: number): string {
  return `${plural(matching, 'other contract matches', 'other contracts match')} the desired state: no ops.`;
}

/** `tenant\ncontractId` of every contract a finding names (a policy rule's, or another check's): its change is never cut. */
export function flaggedKeys(findings: readonly Finding[] | undefined): Set<string> {
  return new Set((findings ?? []).filter((finding) => finding.contractId !== undefined).map((finding) => `${finding.tenant}\n${finding.contractId}`));
}
