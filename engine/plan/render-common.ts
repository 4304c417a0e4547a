/** What the text and markdown renderings share: values and counts as people read them. Pure. */
import { COLLECTION_FIELDS, getField, isCollectionField, type CollectionFieldName, type CollectionFieldSpec, type FieldSpec } from '../model/fields.ts';
import { describeIdentity, isJsonObject } from '../model/normalise.ts';
import { completeMember, fillPlanOf } from '../model/members.ts';
import type { JsonSchema } from '../model/json-schema-type.ts';
import { plural } from '../text/plural.ts';
import { quoteForDisplay } from '../text/text-escape.ts';
import type { KnownFrom, PlanChange, PlanContract, PlanDocument, PlanTenant } from './types.ts';

export { plural } from '../text/plural.ts';

/**
 * A value on one line, YAML-flow-like: `{ Id: 12, RelationType: "Supplier" }`. Strings are JSON
 * quoted, so a newline or a terminal escape inside one can never break the layout, and bidi and
 * zero-width characters are shown as escapes (engine/text/text-escape.ts).
 */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  // JSON quoting shows C0 controls as escapes; the rest (C1, bidi, zero-width) is made visible too.
  if (typeof value === 'string') return quoteForDisplay(value);
  if (Array.isArray(value)) return `[${value.map(formatValue).join(', ')}]`;
  if (typeof value === 'object') {
    // Built as it goes: every value of every planned contract comes here.
    let text = '';
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined) text += `${text === '' ? '{ ' : ', '}${key}: ${formatValue(item)}`;
    }
    return text === '' ? '{}' : `${text} }`;
  }
  return String(value);
}

const EMPTY: Readonly<Record<string, unknown>> = {};

/**
 * formatValue(completeMember(field, member)) without the completed copy (every member of every
 * first plan is shown completed). Undefined where the completed map is not simply the schema's
 * keys in order: a key the schema does not name (fill keeps it after the schema's, array indexes
 * before all); the caller then formats completeMember's copy.
 */
export function formatCompletedMember(field: CollectionFieldSpec, member: unknown): string | undefined {
  return formatFilled(field.member, member);
}

function formatFilled(schema: JsonSchema, value: unknown): string | undefined {
  const plan = fillPlanOf(schema);
  if (plan === undefined || (value !== undefined && !isJsonObject(value))) return formatValue(value);
  const given = value ?? EMPTY;
  for (const key of Object.keys(given)) if (!plan.keys.has(key)) return undefined;
  let text = '';
  for (const { key, sub, nullable, createNested } of plan.steps) {
    const item = given[key];
    let shown: string | undefined;
    if (item !== undefined) shown = formatFilled(sub, item);
    // fill would take the key from its fallback, an empty map: only a key Object.prototype has is there.
    else if (EMPTY[key] !== undefined) return undefined;
    else if (nullable) shown = 'null';
    else if (createNested) shown = formatFilled(sub, undefined);
    else continue;
    if (shown === undefined) return undefined;
    text += `${text === '' ? '{ ' : ', '}${key}: ${shown}`;
  }
  return text === '' ? '{}' : `${text} }`;
}

/** A duration without its null units (absent = null): `{ Days: 30 }`; every unit null is `{}`. */
function formatDuration(value: unknown): string {
  if (value === null || typeof value !== 'object') return formatValue(value);
  // formatValue of the units that are neither null nor undefined, without a copy (a list too is read as a map, by its keys).
  let text = '';
  for (const key of Object.keys(value)) {
    const unit = (value as Record<string, unknown>)[key];
    if (unit !== null && unit !== undefined) text += `${text === '' ? '{ ' : ', '}${key}: ${formatValue(unit)}`;
  }
  return text === '' ? '{}' : `${text} }`;
}

/** A value of `field` for people: formatValue, a duration without its null units. */
export function formatFieldValue(field: FieldSpec, value: unknown): string {
  return field.kind === 'duration' ? formatDuration(value) : formatValue(value);
}

export const KNOWN_FROM_TEXT: Readonly<Record<KnownFrom, string>> = {
  state: 'known from the state store',
  live: 'known from a live read',
  unknown: 'known state unknown',
};

/** What planning without known state means (docs/architecture.md section 3.4); said wherever such contracts appear. */
export function unknownNote(count: number): string {
  return (
    `Known state unknown for ${plural(count, 'contract')} (nothing in the state store, not read live): ` +
    'every desired field is set and every desired member added; nothing is removed.'
  );
}

export type ChangeKind = 'set' | 'replace' | 'add' | 'remove' | 'member-change';

export interface ChangeView {
  readonly kind: ChangeKind;
  /** `Name`, or for a member `Company (Id 12, RelationType "Supplier")`. */
  readonly label: string;
  readonly before: string;
  readonly after: string;
}

export function viewChange(change: PlanChange): ChangeView {
  const field = getField(change.field) as FieldSpec;
  const before = formatFieldValue(field, change.before);
  const after = formatFieldValue(field, change.after);
  if (!isCollectionField(field)) {
    return { kind: change.before === null ? 'set' : 'replace', label: change.field, before, after };
  }
  const member = change.after ?? change.before;
  const label = `${change.field} (${describeIdentity(field, member)})`;
  if (change.before === null) return { kind: 'add', label, before, after };
  if (change.after === null) return { kind: 'remove', label, before, after };
  return { kind: 'member-change', label, before, after };
}

/**
 * A change on one line without its sign, and its kind: changeText(viewChange(change)), each value
 * formatted only where the line shows it.
 */
export function changeLine(change: PlanChange): { readonly kind: ChangeKind; readonly text: string } {
  const field = getField(change.field) as FieldSpec;
  if (!isCollectionField(field)) {
    if (change.before === null) return { kind: 'set', text: `${change.field}: ${formatFieldValue(field, change.after)}` };
    return { kind: 'replace', text: `${change.field}: ${formatFieldValue(field, change.before)} -> ${formatFieldValue(field, change.after)}` };
  }
  const label = `${change.field} (${describeIdentity(field, change.after ?? change.before)})`;
  if (change.before === null) return { kind: 'add', text: `${label}: ${formatFieldValue(field, change.after)}` };
  if (change.after === null) return { kind: 'remove', text: `${label}: ${formatFieldValue(field, change.before)}` };
  return { kind: 'member-change', text: `${label}: ${formatFieldValue(field, change.before)} -> ${formatFieldValue(field, change.after)}` };
}

/** changeLine of a change with nothing before (`field` set to `after`, or `after` added to it), from the field itself. */
export function addedLine(field: FieldSpec, after: unknown): { readonly kind: 'set' | 'add'; readonly text: string } {
  if (!isCollectionField(field)) return { kind: 'set', text: `${field.name}: ${formatFieldValue(field, after)}` };
  return { kind: 'add', text: `${field.name} (${describeIdentity(field, after)}): ${formatFieldValue(field, after)}` };
}

/** The member's identity values are each a string, number, boolean or null: its completed copy has the same ones. */
function plainIdentity(field: CollectionFieldSpec, member: unknown): boolean {
  for (const path of field.identity) {
    let value = member;
    for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (value === undefined || (value !== null && typeof value === 'object')) return false;
  }
  return true;
}

/** addedLine(field, completeMember(field, member)): a desired member added, shown completed, without the completed copy where it can. */
export function addedMemberLine(field: CollectionFieldSpec, member: unknown): { readonly kind: 'set' | 'add'; readonly text: string } {
  const shown = plainIdentity(field, member) ? formatCompletedMember(field, member) : undefined;
  if (shown === undefined) return addedLine(field, completeMember(field, member));
  return { kind: 'add', text: `${field.name} (${describeIdentity(field, member)}): ${shown}` };
}

export interface TenantCounts {
  readonly contracts: number;
  readonly changed: number;
  readonly ops: number;
  readonly unknown: number;
}

export function tenantCounts(tenant: PlanTenant): TenantCounts {
  let changed = 0;
  let ops = 0;
  let unknown = 0;
  for (const contract of tenant.contracts) {
    if (contract.action === 'update') changed += 1;
    ops += contract.ops.length;
    if (contract.knownFrom === 'unknown') unknown += 1;
  }
  return { contracts: tenant.contracts.length, changed, ops, unknown };
}

export function unknownCount(plan: PlanDocument): number {
  let count = 0;
  for (const tenant of plan.tenants) count += tenantCounts(tenant).unknown;
  return count;
}

export function changedContracts(tenant: PlanTenant): PlanContract[] {
  return tenant.contracts.filter((contract) => contract.action === 'update');
}

/**
 * Contracts a run could not plan (apply's failed reads), which the plan document does not list:
 * with any, the headline never says "No changes".
 */
export interface NotPlanned {
  readonly count: number;
  /** Of `count`, the contracts whose read was answered 404. */
  readonly notOnService: number;
}

export function headline(plan: PlanDocument, notPlanned?: NotPlanned): string {
  const { tenants, contracts, changed, ops } = plan.summary;
  if (notPlanned !== undefined && notPlanned.count > 0) {
    const why =
      notPlanned.notOnService === 0
        ? ''
        : notPlanned.notOnService === notPlanned.count
          ? ': not on the service'
          : ` (${notPlanned.notOnService} not on the service)`;
    const missing = `${plural(notPlanned.count, 'contract')} could not be planned${why}`;
    if (contracts === 0) return `Nothing to send: ${missing} (listed below).`;
    if (changed === 0) return `Nothing to send for ${plural(contracts, 'planned contract')} in ${plural(tenants, 'tenant')}, but ${missing} (listed below).`;
    return `${changed} of ${plural(contracts, 'planned contract')} in ${plural(tenants, 'tenant')} to update, ${plural(ops, 'op')}; ${missing} (listed below).`;
  }
  if (contracts === 0) return 'No changes: no contract to plan.';
  const inTenants = `in ${plural(tenants, 'tenant')}`;
  if (changed === 0) return `No changes: ${plural(contracts, 'contract')} ${inTenants} ${contracts === 1 ? 'matches' : 'match'} the desired state.`;
  const counted = changed === contracts ? plural(changed, 'contract') : `${changed} of ${plural(contracts, 'contract')}`;
  return `${counted} ${inTenants} to update, ${plural(ops, 'op')}.`;
}

/** Tenants named one by one in tenantSummary; the rest are counted together. */
const SUMMARY_TENANTS = 10;

/**
 * The plan in a few lines for the question of apply and drift --fix: its headline, then per tenant
 * the contracts to update, ops and members removed (`  acme: 1500 to update, 3000 ops, 2 members removed`).
 */
export function tenantSummary(plan: PlanDocument): string {
  const lines = [headline(plan)];
  const changed = plan.tenants.filter((tenant) => tenantCounts(tenant).changed > 0);
  for (const tenant of changed.slice(0, SUMMARY_TENANTS)) {
    const c = tenantCounts(tenant);
    let removed = 0;
    for (const contract of tenant.contracts)
      for (const change of contract.changes) if (isCollectionField(getField(change.field) as FieldSpec) && change.after === null) removed += 1;
    lines.push(`  ${tenant.tenant}: ${c.changed} to update, ${plural(c.ops, 'op')}, ${plural(removed, 'member')} removed`);
  }
  const rest = changed.slice(SUMMARY_TENANTS);
  if (rest.length > 0) {
    const contracts = rest.reduce((sum, tenant) => sum + tenantCounts(tenant).changed, 0);
    lines.push(`  and ${plural(rest.length, 'more tenant')}: ${contracts} to update`);
  }
  return `${lines.join('\n')}\n`;
}

export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}

/** With a base: what the change touches, e.g. `Changes since origin/main (merge base 1a2b3c4) touch 2 contracts; 1 contract is no longer managed.` */
export function changeSummary(plan: PlanDocument, code: (text: string) => string = (text) => text): string | undefined {
  const { base } = plan.source;
  if (!base) return undefined;
  const touched = plan.summary.touched ?? 0;
  const dropped = plan.noLongerManaged?.length ?? 0;
  const since = `Changes since ${code(base.ref)} (merge base ${code(shortCommit(base.mergeBase))})`;
  const touches = touched === 0 ? 'touch no contract' : `touch ${plural(touched, 'contract')}`;
  const unmanaged = dropped === 0 ? '' : `; ${plural(dropped, 'contract is', 'contracts are')} no longer managed`;
  return `${since} ${touches}${unmanaged}.`;
}

/** What happens to a contract removed from the desired state (the engine never deletes one). */
export const NO_LONGER_MANAGED_TEXT = 'removed from the desired state; contract-sync never deletes, so it is left unchanged on the service';

/** For a touched contract without ops. */
export const ALREADY_MATCHES_TEXT = 'no ops: the known state already matches';

/** How a change is marked in a diff, as Terraform marks it: `+` set or added, `-` removed, `~` changed in place. */
export const CHANGE_SIGN: Readonly<Record<ChangeKind, '+' | '-' | '~'>> = {
  set: '+',
  add: '+',
  replace: '~',
  'member-change': '~',
  remove: '-',
};

/** A change on one line without its sign: `Name: "old" -> "new"`, `Company (Id 12, ...): {...}`. */
export function changeText(view: ChangeView): string {
  switch (view.kind) {
    case 'replace':
    case 'member-change':
      return `${view.label}: ${view.before} -> ${view.after}`;
    case 'remove':
      return `${view.label}: ${view.before}`;
    case 'set':
    case 'add':
      return `${view.label}: ${view.after}`;
  }
}

/** After a member-change: why one member shows as one change although it is sent as a Remove and an Add. */
export const MEMBER_CHANGE_NOTE = '(removed and added again)';

/** `2026-11-22 10:00:00 UTC` for an ISO 8601 date-time; the text as given when it is not one. */
export function formatUtc(dateTime: string): string {
  const time = Date.parse(dateTime);
  if (Number.isNaN(time)) return dateTime;
  return `${new Date(time).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The collection fields a plan's run treats as authoritative, in field-table order; undefined when the plan does not record its config. */
export function authoritativeCollections(plan: PlanDocument): string[] | undefined {
  const recorded = plan.madeWith?.collections;
  if (recorded === undefined) return undefined;
  return COLLECTION_FIELDS.map((field) => field.name as CollectionFieldName).filter((name) => recorded[name] === 'authoritative');
}

export interface UnknownApplyNote {
  /** `warning` when apply may remove members that this plan does not show. */
  readonly level: 'note' | 'warning';
  readonly text: string;
}

/**
 * What `apply` does with contracts whose known state is unknown, which their ops do not show: with
 * reads, it reads them live first and plans them again (docs/architecture.md section 3.4), so in an
 * authoritative collection it may remove members the desired state does not list.
 */
export function unknownApplyNote(plan: PlanDocument): UnknownApplyNote {
  const them = unknownCount(plan) === 1 ? 'it' : 'them';
  const savedPlan = '`apply PLAN.json` of a saved plan sends only the ops shown.';
  const madeWith = plan.madeWith;
  const authoritative = authoritativeCollections(plan);
  if (madeWith === undefined || authoritative === undefined) {
    return {
      level: 'warning',
      text:
        `When reads are configured (api.read), \`contract-sync apply\` reads ${them} live first and plans ${them} again: ` +
        `in collections in authoritative mode (the default), it may then remove members the desired state does not list. ${savedPlan}`,
    };
  }
  if (!madeWith.reads)
    return { level: 'note', text: 'No reads are configured (api.read): `contract-sync apply` sends these ops as shown and removes no member.' };
  const reads = `Reads are configured (api.read): \`contract-sync apply\` reads ${them} live first and plans ${them} again.`;
  if (authoritative.length === 0) return { level: 'note', text: `${reads} Every collection is additive: it removes no member.` };
  const names = authoritative.length === 1 ? authoritative[0]! : `${authoritative.slice(0, -1).join(', ')} and ${authoritative.at(-1)!}`;
  return {
    level: 'warning',
    text:
      `${reads} It may then remove members the desired state does not list from ${names} ` +
      `(${authoritative.length === 1 ? 'the collection' : 'the collections'} in authoritative mode). ${savedPlan}`,
  };
}
