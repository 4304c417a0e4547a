/**
 * The plan as a pull-request comment: title, where it comes from (head, base, contract-sync
 * version, time), headline, a summary table and the findings, then the contracts. Without a base:
 * every removal and every change a finding names, then one collapsible section per tenant. With a
 * base (`plan --base`), in the order of docs/architecture.md section 5: the contracts the pull
 * request changes alone, and those it no longer manages; every removal and every change a finding
 * names (never cut); its groups of identical changes; then the other contracts with ops (drift, or
 * not applied yet), counted per tenant before their details, then how many match. A tenant with
 * many contracts in a section gets a collapsible section of its own. Contracts with the same ops
 * (same values) are shown once, as one ```diff block with the list of their ids (collapsed past a
 * few). With `links` (a CI job's repository, engine/plan/file-links.ts) and a head commit, file
 * paths link to the file there. Never longer than `maxLength` characters: shortening cuts from the
 * bottom, what does not fit is summarised, and every contract left out is still named by id or
 * counted (GitHub refuses comments over 65,536 characters). Pure.
 */
import { codeSpan, escapeHtml, escapeInline } from '../text/markdown-escape.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import { fitBlocks, type FitChoice } from './fit-blocks.ts';
import { commitUrl, fileUrl, type FullPlanArtifact, type RepositoryLinks } from './file-links.ts';
import {
  ALREADY_MATCHES_TEXT,
  changedContracts,
  changeSummary,
  changeText,
  formatUtc,
  headline,
  KNOWN_FROM_TEXT,
  MEMBER_CHANGE_NOTE,
  plural,
  shortCommit,
  tenantCounts,
  unknownApplyNote,
  unknownCount,
  unknownNote,
  viewChange,
  type ChangeKind,
} from './render-common.ts';
import {
  countOther,
  DESIRED_DIFF_TEXT,
  desiredNoteText,
  desiredOf,
  flaggedKeys,
  matchingCount,
  matchingText,
  otherCountsText,
  removedMembers,
  touchedContracts,
  UNMANAGED_NOTE,
  untouchedChangedContracts,
  type OtherCounts,
  type TenantContract,
} from './render-order.ts';
import { incrementalNote } from './incremental-note.ts';
import { renderFindingsMarkdown } from './render-findings.ts';
import { renderRemovalsMarkdown } from './render-removals.ts';
import type { DesiredChange, PlanContract, PlanDocument } from './types.ts';

export const MARKDOWN_MAX_LENGTH = 60_000;

export interface MarkdownRenderOptions {
  /** Upper bound on the output length in characters; default 60,000. */
  readonly maxLength?: number;
  /**
   * Where the repository lives on the web (repositoryLinks() of the CI job's environment): file
   * paths link to the file at the plan's head commit. No link for a plan of the working tree, whose
   * files may differ from any commit.
   */
  readonly links?: RepositoryLinks;
  /** The artifact holding the whole plan (text and JSON, and this markdown), linked wherever the comment shows less. */
  readonly artifact?: FullPlanArtifact | undefined;
}

interface RenderContext {
  readonly maxLength: number;
  readonly links: RepositoryLinks | undefined;
  /** The commit the plan's files are at: undefined for the working tree. */
  readonly head: string | undefined;
  readonly artifact: FullPlanArtifact | undefined;
}

// Room kept for the closing lines and the truncation note; both are bounded (numbers and fixed text).
const RESERVE = 800;
// The summary table stops growing here, so that contract sections always get room.
const TABLE_SHARE = 0.25;

// A ref is shown up to this length: the heading is written before any length check.
const MAX_REF_LENGTH = 100;

/** The other contracts of a pull request's plan are counted for this many tenants, the rest together. */
const OTHER_TENANTS_COUNTED = 20;

/** Past this many contracts with the same ops, their ids collapse into a <details> list. */
export const GROUP_LISTED = 5;
/** A tenant with more contracts than this in a section of the pull-request layout gets a collapsible section of its own. */
export const TENANT_SECTION = 20;
/** A value (or a member's label) longer than this is cut in the diff; the artifact or the plan file has it whole. */
export const VALUE_SHOWN = 200;

/**
 * How a change is marked in the comment's diff blocks. GitHub colours a diff block's `+` lines
 * green, `-` lines red and `!` lines orange (a changed line): a value changed in place is one `!`
 * line, old -> new, so it reads as one change in its own colour. The text plan keeps `~`, which
 * GitHub leaves uncoloured.
 */
const MARKDOWN_SIGN: Readonly<Record<ChangeKind, '+' | '-' | '!'>> = {
  set: '+',
  add: '+',
  replace: '!',
  'member-change': '!',
  remove: '-',
};

/** Inline code for a value from the user (a ref): backticks cannot be escaped inside it, so they are dropped. */
function inlineCode(text: string): string {
  const clipped = text.length > MAX_REF_LENGTH ? `${text.slice(0, MAX_REF_LENGTH - 1)}…` : text;
  return `\`${escapeHtml(clipped.replaceAll('`', ''))}\``;
}

/** Inline code that links to `url` when there is one. */
function linked(code: string, url: string | undefined): string {
  return url === undefined ? code : `[${code}](${url})`;
}

/** Where the whole plan is, for the notes that say something is not shown. */
function fullPlanPlace(context: RenderContext): string {
  return context.artifact === undefined ? 'the plan file' : 'the plan artifact';
}

/** A value cut at VALUE_SHOWN characters, saying how much is left out and where it is whole. */
function clipValue(context: RenderContext, text: string): string {
  if (text.length <= VALUE_SHOWN) return text;
  let cut = VALUE_SHOWN;
  // Never half a surrogate pair.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  const more = text.length - cut;
  return `${text.slice(0, cut)}… (${more.toLocaleString('en-US')} more characters; full value in ${fullPlanPlace(context)})`;
}

/** `file:line`, escaped, linked to the file at `commit` when the context has links. */
function position(context: RenderContext, commit: string | undefined, file: string, line: number): string {
  const text = escapeInline(`${file}:${line}`);
  const url = context.links === undefined || commit === undefined ? undefined : fileUrl(context.links, commit, file, line);
  return url === undefined ? text : `[${text}](${url})`;
}

/** A fence longer than any backtick run in `body`, so a value cannot close the code block. */
function fenceFor(body: string): string {
  let longest = 0;
  for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

const DETAIL_NOT_SHOWN = 'changes not shown here, to keep the comment short';

/** Contracts of one tenant whose ops (and the values they change from) are the same: shown once. */
interface Group {
  readonly tenant: string;
  readonly contracts: readonly PlanContract[];
}

/**
 * `contracts` in groups of the same ops, the same changes and the same known-state source (and,
 * where the pull request's own diff is shown instead of the ops, the same diff), each group where
 * its first contract is.
 */
function groupsOf(tenant: string, contracts: readonly PlanContract[]): Group[] {
  const byKey = new Map<string, PlanContract[]>();
  for (const contract of contracts) {
    const key = JSON.stringify([contract.knownFrom, contract.ops, contract.changes, desiredOf(contract) ?? null]);
    const group = byKey.get(key);
    if (group === undefined) byKey.set(key, [contract]);
    else group.push(contract);
  }
  return [...byKey.values()].map((group) => ({ tenant, contracts: group }));
}

function opsOf(group: Group): number {
  return group.contracts.reduce((sum, contract) => sum + contract.ops.length, 0);
}

/** The pull request's own changes to a contract (base -> head) as the body of a diff block. */
function desiredDiffBody(context: RenderContext, changes: readonly DesiredChange[]): string {
  const lines: string[] = [];
  for (const change of changes) {
    const view = viewChange(change);
    const shown = { ...view, label: clipValue(context, view.label), before: clipValue(context, view.before), after: clipValue(context, view.after) };
    if (change.unmanaged === true) {
      lines.push(`- ${escapeForTerminal(`${shown.label}: ${shown.before}`)}  ${UNMANAGED_NOTE}`);
      continue;
    }
    const note = view.kind === 'member-change' ? `  ${MEMBER_CHANGE_NOTE}` : '';
    lines.push(`${MARKDOWN_SIGN[view.kind]} ${escapeForTerminal(changeText(shown))}${note}`);
  }
  return lines.join('\n');
}

/** The changes of a contract as the body of a diff block. */
function diffBody(context: RenderContext, contract: PlanContract): string {
  const lines: string[] = [];
  for (const change of contract.changes) {
    const view = viewChange(change);
    const shown = { ...view, label: clipValue(context, view.label), before: clipValue(context, view.before), after: clipValue(context, view.after) };
    // A member removed and added again (its two ops) is one change too, like the text plan shows it.
    const note = view.kind === 'member-change' ? `  ${MEMBER_CHANGE_NOTE}` : '';
    lines.push(`${MARKDOWN_SIGN[view.kind]} ${escapeForTerminal(changeText(shown))}${note}`);
  }
  return lines.join('\n');
}

function diffBlock(context: RenderContext, contract: PlanContract): string {
  const desired = desiredOf(contract);
  const body = desired === undefined ? diffBody(context, contract) : desiredDiffBody(context, desired);
  const fence = fenceFor(body);
  return `${fence}diff\n${body}\n${fence}\n\n`;
}

/** ` · acme` when the section mixes tenants; '' inside a tenant's own section. */
function about(tenant: string | undefined): string {
  return tenant === undefined ? '' : ` · ${escapeInline(tenant)}`;
}

/** The title of a group of two or more: `**3 contracts, the same 2 ops each** · acme · known from the state store` (`the same op each` for one). */
function groupTitle(group: Group, tenant: string | undefined): string {
  const first = group.contracts[0]!;
  const count = group.contracts.length;
  if (first.ops.length === 0) return `**${count} contracts**${about(tenant)} · ${ALREADY_MATCHES_TEXT}`;
  const same = first.ops.length === 1 ? 'the same op' : `the same ${first.ops.length} ops`;
  if (desiredOf(first) !== undefined)
    return `**${count} contracts, the same change each**${about(tenant)} · ${KNOWN_FROM_TEXT[first.knownFrom]}, ${same} each; ${DESIRED_DIFF_TEXT}:`;
  return `**${count} contracts, ${same} each**${about(tenant)} · ${KNOWN_FROM_TEXT[first.knownFrom]}`;
}

/** `known state unknown, 11 ops`, and when the diff is the pull request's own: `; this pull request changed:`. */
function opsText(contract: PlanContract): string {
  const text = `${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')}`;
  return desiredOf(contract) === undefined ? text : `${text}; ${DESIRED_DIFF_TEXT}:`;
}

/** The ids of a group as inline code, comma-separated. */
function idList(contracts: readonly PlanContract[]): string {
  return contracts.map((contract) => codeSpan(contract.id)).join(', ');
}

/** The contracts of a large group, per file: `- contracts/acme.yaml: `1001` (line 3), `1002` (line 7)`; the file links to its first contract. */
function filesList(context: RenderContext, contracts: readonly PlanContract[]): string {
  const byFile = new Map<string, PlanContract[]>();
  for (const contract of contracts) {
    const list = byFile.get(contract.file) ?? [];
    byFile.set(contract.file, list);
    list.push(contract);
  }
  let out = '';
  for (const [file, list] of byFile) {
    const text = escapeInline(file);
    const url = context.links === undefined || context.head === undefined ? undefined : fileUrl(context.links, context.head, file, list[0]!.line);
    const name = url === undefined ? text : `[${text}](${url})`;
    out += `- ${name}: ${list.map((contract) => `${codeSpan(contract.id)} (line ${contract.line})`).join(', ')}\n`;
  }
  return out;
}

/** A group with its changes: one contract as its title and diff; up to GROUP_LISTED, their ids then the diff once; more, the diff then their ids collapsed. */
function groupBlock(context: RenderContext, group: Group, tenant: string | undefined): string {
  const contracts = group.contracts;
  const first = contracts[0]!;
  if (contracts.length === 1) {
    const where = position(context, context.head, first.file, first.line);
    if (first.ops.length === 0) return `**${codeSpan(first.id)}**${about(tenant)} · ${where} · ${ALREADY_MATCHES_TEXT}\n\n`;
    const title = `**${codeSpan(first.id)}**${about(tenant)} · ${where} · ${opsText(first)}`;
    return `${title}\n\n${diffBlock(context, first)}`;
  }
  const title = `${groupTitle(group, tenant)}\n\n`;
  const diff = first.ops.length === 0 ? '' : diffBlock(context, first);
  if (contracts.length <= GROUP_LISTED) {
    const ids = contracts.map((contract) => `- **${codeSpan(contract.id)}** · ${position(context, context.head, contract.file, contract.line)}\n`).join('');
    return `${title}${ids}\n${diff}`;
  }
  // Many: the change first, then the ids, collapsed.
  return `${title}${diff}<details><summary>${contracts.length} contracts: ids and files</summary>\n\n${filesList(context, contracts)}\n</details>\n\n`;
}

/** A group's line without its changes, for a comment too short to hold them all: every id is still named. */
function groupLine(context: RenderContext, group: Group, tenant: string | undefined): string {
  const first = group.contracts[0]!;
  if (group.contracts.length === 1) {
    const where = position(context, context.head, first.file, first.line);
    return `**${codeSpan(first.id)}**${about(tenant)} · ${where} · ${KNOWN_FROM_TEXT[first.knownFrom]}, ${plural(first.ops.length, 'op')}: ${DETAIL_NOT_SHOWN}\n\n`;
  }
  return `${groupTitle(group, tenant).replace(/:$/, '')}: ${DETAIL_NOT_SHOWN}: ${idList(group.contracts)}\n\n`;
}

/** Head, base, contract-sync version and time: `Head [\`1a2b3c4\`](…) · base \`origin/main\` at \`5d6e7f8\` · …`. */
function provenance(context: RenderContext, plan: PlanDocument): string {
  const { ref, commit, base } = plan.source;
  // Commits link only where files do: a plan of the working tree names HEAD, but its files may differ.
  function commitLink(id: string): string {
    const url = context.links === undefined || context.head === undefined ? undefined : commitUrl(context.links, id);
    return linked(inlineCode(shortCommit(id)), url);
  }
  const parts: string[] = [];
  if (ref === null) parts.push(commit === null ? 'Working tree' : `Working tree (uncommitted edits included) at ${inlineCode(shortCommit(commit))}`);
  else if (commit === null) parts.push(`Ref ${inlineCode(ref)}`);
  else parts.push(`Head ${commitLink(commit)}${ref === 'HEAD' || commit.startsWith(ref) ? '' : ` (${inlineCode(ref)})`}`);
  if (base !== undefined) {
    const mergeBase = base.mergeBase === base.commit ? '' : `, merge base ${commitLink(base.mergeBase)}`;
    parts.push(`base ${inlineCode(base.ref)} at ${commitLink(base.commit)}${mergeBase}`);
  }
  if (plan.madeWith !== undefined) parts.push(`contract-sync ${escapeInline(plan.madeWith.version)}`);
  parts.push(`planned ${escapeInline(formatUtc(plan.createdAt))}`);
  return parts.join(' · ');
}

function heading(context: RenderContext, plan: PlanDocument): string {
  let out = `### contract-sync plan\n\n${provenance(context, plan)}\n\n${escapeInline(headline(plan))}\n\n`;
  const change = changeSummary(plan, inlineCode);
  if (change !== undefined) out += `${change}\n\n`;
  const incremental = incrementalNote(plan.source, { code: (text) => `\`${text}\``, text: escapeInline });
  if (incremental !== undefined) out += `${incremental}\n\n`;
  const unknown = unknownCount(plan);
  if (unknown > 0) {
    const apply = unknownApplyNote(plan);
    out += `> [!${apply.level === 'warning' ? 'WARNING' : 'NOTE'}]\n> ${escapeInline(unknownNote(unknown))}\n>\n> ${apply.text}\n\n`;
  }
  return out;
}

/** The summary table, appended to `out`; with a base it has a column for the contracts the change touches. */
function summaryTable(plan: PlanDocument, out: string, maxLength: number): string {
  if (plan.tenants.length === 0) return out;
  const withBase = plan.source.base !== undefined;
  out += withBase
    ? '| Tenant | Contracts | Changed in this PR | To update | Unchanged | Ops | Known state unknown |\n|---|--:|--:|--:|--:|--:|--:|\n'
    : '| Tenant | Contracts | To update | Unchanged | Ops | Known state unknown |\n|---|--:|--:|--:|--:|--:|\n';
  const tableLimit = out.length + maxLength * TABLE_SHARE;
  for (const [index, tenant] of plan.tenants.entries()) {
    const c = tenantCounts(tenant);
    const touched = withBase ? ` ${tenant.contracts.filter((contract) => contract.touched === true).length} |` : '';
    const row = `| ${escapeInline(tenant.tenant)} | ${c.contracts} |${touched} ${c.changed} | ${c.contracts - c.changed} | ${c.ops} | ${c.unknown} |\n`;
    if (out.length + row.length > tableLimit) {
      out += `| … ${plural(plan.tenants.length - index, 'more tenant')} | | | | | |${withBase ? ' |' : ''}\n`;
      break;
    }
    out += row;
  }
  return `${out}\n`;
}

/** Where the whole plan is, as the shortened note says it. */
function fullPlanSentence(context: RenderContext): string {
  const { artifact } = context;
  if (artifact === undefined) return 'The full plan is in the job log and in the plan file (`--out PLAN.json`).';
  return `The whole plan, as text and as JSON, is in the artifact \`${escapeHtml(artifact.name.replaceAll('`', ''))}\` of [this workflow run](${artifact.url}).`;
}

/** `omitted` undefined: what was cut is not itemised. */
function shortenedNote(context: RenderContext, omitted: string | undefined): string {
  const what = omitted === undefined ? '' : `: ${omitted} not shown`;
  return `> [!WARNING]\n> Shortened to stay under ${context.maxLength.toLocaleString('en-US')} characters${what}. ${fullPlanSentence(context)}\n`;
}

/** What both layouts open with: the heading, the summary table, then sections about the whole plan (the removal guard's warning). */
function opening(context: RenderContext, plan: PlanDocument): string {
  // Sections about the whole plan: after the summary, before the contracts.
  return summaryTable(plan, heading(context, plan), context.maxLength) + renderFindingsMarkdown(plan.findings) + renderRemovalsMarkdown(plan);
}

/** A group as the fitting sees it: whole, as its line, or by id in the closing list. */
interface Unit {
  readonly group: Group;
  readonly full: string;
  readonly short: string;
  /** Undefined: never named by id in the closing list (contracts counted elsewhere). */
  readonly listed: number | undefined;
}

/** A tenant's groups within a section, with the collapsible wrapper it gets ('' when shown inline). */
interface TenantPart {
  readonly tenant: string;
  readonly open: string;
  readonly close: string;
  readonly units: readonly Unit[];
}

/** The length of naming a group's contracts in the closing list: `` `1001`, `` each (its tenant's name: listHeads). */
function listedLength(group: Group): number {
  return group.contracts.reduce((sum, contract) => sum + codeSpan(contract.id).length + 2, 0);
}

/** The room the closing list needs besides the ids: its heading, and each tenant's name. */
function listHeads(parts: readonly TenantPart[]): number {
  const tenants = new Set(parts.filter((part) => part.units.length > 0).map((part) => part.tenant));
  return 200 + [...tenants].reduce((sum, tenant) => sum + escapeInline(tenant).length + 4, 0);
}

function unitOf(context: RenderContext, group: Group, titleTenant: string | undefined): Unit {
  return { group, full: groupBlock(context, group, titleTenant), short: groupLine(context, group, titleTenant), listed: listedLength(group) };
}

/** A unit of a section whose contracts are counted per tenant above it: shown whole where room is left, else not at all. */
function countedUnitOf(context: RenderContext, group: Group, titleTenant: string | undefined): Unit {
  const full = groupBlock(context, group, titleTenant);
  return { group, full, short: full, listed: undefined };
}

/**
 * The parts of a section of the pull-request layout: per tenant in plan order, its contracts in
 * groups; a tenant with more than TENANT_SECTION contracts is wrapped in a <details> of its own.
 */
function sectionParts(context: RenderContext, items: readonly TenantContract[], make: typeof unitOf = unitOf, wrap = true): TenantPart[] {
  const byTenant = new Map<string, PlanContract[]>();
  for (const { tenant, contract } of items) {
    const list = byTenant.get(tenant) ?? [];
    byTenant.set(tenant, list);
    list.push(contract);
  }
  return [...byTenant].map(([tenant, contracts]) => {
    const groups = groupsOf(tenant, contracts);
    if (!wrap || contracts.length <= TENANT_SECTION) return { tenant, open: '', close: '', units: groups.map((group) => make(context, group, tenant)) };
    const ops = contracts.reduce((sum, contract) => sum + contract.ops.length, 0);
    const distinct = groups.length === 1 ? 'all the same' : `${groups.length} different change lists`;
    const open = `<details><summary><b>${escapeHtml(tenant)}</b>: ${plural(contracts.length, 'contract')}, ${plural(ops, 'op')} (${distinct})</summary>\n\n`;
    return { tenant, open, close: '</details>\n\n', units: groups.map((group) => make(context, group, undefined)) };
  });
}

/** What was left out or named by id only, collected while writing. */
interface Shortening {
  /** Groups named by id only, in the closing list. */
  readonly listed: Group[];
  /** Groups not even named (the list did not fit). */
  readonly omitted: Group[];
  /** Groups shown as their line, without their changes. */
  readonly short: Group[];
}

function newShortening(): Shortening {
  return { listed: [], omitted: [], short: [] };
}

/** The fitting's choice for each unit, in the order given. */
function choose(units: readonly Unit[], budget: number): Map<Unit, FitChoice> {
  const choices = fitBlocks(units, budget);
  return new Map(units.map((unit, index) => [unit, choices[index]!]));
}

/** The length the choices give the units: what fitBlocks counted against its budget. */
function chosenLength(choices: ReadonlyMap<Unit, FitChoice>): number {
  let length = 0;
  for (const [unit, choice] of choices)
    length += choice === 'full' ? unit.full.length : choice === 'short' ? unit.short.length : choice === 'listed' ? (unit.listed ?? 0) : 0;
  return length;
}

/** Whether a choice shows the unit in its section (whole or as its line). */
function shows(choice: FitChoice | undefined): boolean {
  return choice === 'full' || choice === 'short';
}

/** A part whose contracts are not shown in it: each is named in the closing list, or counted there. */
function nameOnly(part: TenantPart, choices: ReadonlyMap<Unit, FitChoice>, shortening: Shortening): void {
  for (const unit of part.units) (choices.get(unit) === 'omitted' ? shortening.omitted : shortening.listed).push(unit.group);
}

/**
 * Writes a unit as chosen, appended to `out` when it fits (`room`: what may still be written); what
 * does not fit is named by id in the closing list. Returns the text to append.
 */
function writeUnit(unit: Unit, choice: FitChoice, room: number, shortening: Shortening): string {
  if (choice === 'full' && unit.full.length <= room) return unit.full;
  if ((choice === 'full' || choice === 'short') && unit.short.length <= room) {
    shortening.short.push(unit.group);
    return unit.short;
  }
  if (choice === 'omitted') shortening.omitted.push(unit.group);
  else shortening.listed.push(unit.group);
  return '';
}

/**
 * The closing note of a shortened comment: what was left out and where the whole plan is, then
 * every contract left out named by id, per tenant, as far as `room` allows (the rest counted).
 */
function closingNote(
  context: RenderContext,
  shortening: Shortening,
  unmanaged: number,
  room: number,
  counted: readonly Group[] = [],
  countedAbove = true,
): string {
  const { listed, omitted, short } = shortening;
  const parts: string[] = [];
  const left = [...listed, ...omitted];
  if (left.length > 0) {
    const contracts = left.reduce((sum, group) => sum + group.contracts.length, 0);
    const ops = left.reduce((sum, group) => sum + opsOf(group), 0);
    parts.push(`${plural(contracts, 'contract')} (${plural(ops, 'op')})`);
  }
  if (short.length > 0) {
    const contracts = short.reduce((sum, group) => sum + group.contracts.length, 0);
    const ops = short.reduce((sum, group) => sum + opsOf(group), 0);
    parts.push(`the changes of ${plural(contracts, 'contract')} (${plural(ops, 'op')}, the largest first)`);
  }
  if (unmanaged > 0) parts.push(`${plural(unmanaged, 'contract')} no longer managed`);
  if (counted.length > 0) {
    const contracts = counted.reduce((sum, group) => sum + group.contracts.length, 0);
    const ops = counted.reduce((sum, group) => sum + opsOf(group), 0);
    parts.push(
      countedAbove
        ? `the details of ${plural(contracts, 'other contract')} (${plural(ops, 'op')}; counted above)`
        : `${plural(contracts, 'other contract')} with changes (${plural(ops, 'op')})`,
    );
  }
  if (parts.length === 0) return '';
  let note = shortenedNote(context, parts.join(' and '));
  if (listed.length === 0 && omitted.length === 0) return note;

  // The ids, tenant by tenant, as far as they fit; what does not is counted.
  const byTenant = new Map<string, string[]>();
  for (const group of listed) {
    const ids = byTenant.get(group.tenant) ?? [];
    byTenant.set(group.tenant, ids);
    ids.push(...group.contracts.map((contract) => codeSpan(contract.id)));
  }
  let list = '\n**Not shown here**, by id:';
  let uncounted = omitted.reduce((sum, group) => sum + group.contracts.length, 0);
  const limit = room - note.length - 150;
  let separator = ' ';
  for (const [tenant, ids] of byTenant) {
    const start = `${separator}${escapeInline(tenant)}: `;
    if (list.length + start.length + ids[0]!.length > limit) {
      uncounted += ids.length;
      continue;
    }
    separator = '; ';
    list += start;
    for (const [index, id] of ids.entries()) {
      const piece = `${index === 0 ? '' : ', '}${id}`;
      if (list.length + piece.length > limit) {
        uncounted += ids.length - index;
        break;
      }
      list += piece;
    }
  }
  const rest = `${plural(uncounted, 'more contract')}, not named for want of room: ${fullPlanPlace(context)} lists every one`;
  if (separator === ' ') note += `\n**Not shown here**: ${rest.replace(/^(\d+) more /, '$1 ')}.\n`;
  else note += `${list}${uncounted === 0 ? '' : `; and ${rest}`}.\n`;
  return note;
}

function renderByTenant(context: RenderContext, plan: PlanDocument): string {
  const { maxLength } = context;
  let out = opening(context, plan);
  const flaggedIds = flaggedKeys(plan.findings);
  const flagged = withoutFlagged(
    plan.tenants.flatMap((tenant) => changedContracts(tenant).map((contract) => ({ tenant: tenant.tenant, contract }))),
    flaggedIds,
  ).flagged;
  const parts = plan.tenants.map((tenant) => {
    const c = tenantCounts(tenant);
    const changed = changedContracts(tenant).filter((contract) => !flaggedIds.has(`${tenant.tenant}\n${contract.id}`));
    const summary = c.changed === 0 ? `no changes (${plural(c.contracts, 'contract')})` : `${c.changed} to update, ${plural(c.ops, 'op')}`;
    const open =
      `<details><summary><b>${escapeHtml(tenant.tenant)}</b>: ${summary}</summary>\n\n` +
      (changed.length === 0 ? `${c.contracts === 1 ? 'Its contract matches' : `All ${c.contracts} contracts match`} the desired state.\n\n` : '');
    return { tenant: tenant.tenant, open, close: '</details>\n\n', units: groupsOf(tenant.tenant, changed).map((group) => unitOf(context, group, undefined)) };
  });
  const units = parts.flatMap((part) => part.units);
  const fixed = parts.reduce((sum, part) => sum + part.open.length + part.close.length, 0) + listHeads(parts);
  // Every removal is named before the tenants' sections, and never cut.
  out += removalsSection(context, plan, maxLength - RESERVE - out.length - fixed);
  // So is every change a finding names.
  out += flaggedSection(context, flagged, maxLength - RESERVE - out.length - fixed);
  const choices = choose(units, maxLength - RESERVE - out.length - fixed);
  const shortening = newShortening();
  let full = false;
  for (const part of parts) {
    if (full || out.length + part.open.length + part.close.length + RESERVE > maxLength) {
      // Not even the tenant's section fits: its contracts are named in the closing list.
      full = true;
      nameOnly(part, choices, shortening);
      continue;
    }
    if (part.units.length > 0 && !part.units.some((unit) => shows(choices.get(unit)))) {
      nameOnly(part, choices, shortening);
      continue;
    }
    out += part.open;
    for (const unit of part.units) out += writeUnit(unit, choices.get(unit)!, maxLength - RESERVE - part.close.length - out.length, shortening);
    out += part.close;
  }
  return out + closingNote(context, shortening, 0, maxLength - out.length);
}

/** The length of renderPullRequest's text other than the contracts' blocks: headings, notes, the no-longer-managed list, the wrappers. */
function fixedLength(context: RenderContext, plan: PlanDocument, touched: readonly TenantPart[], others: readonly TenantPart[], notes: string): number {
  let length = `#### Contracts this pull request changes (${touched.length})\n\n`.length + 10 + notes.length;
  if (touched.length === 0) length += 'None: this pull request changes no contract of the desired state.\n\n'.length;
  const dropped = plan.noLongerManaged ?? [];
  if (dropped.length > 0) {
    length += 300;
    for (const contract of dropped)
      length +=
        `- **${codeSpan(contract.id)}** · ${escapeInline(contract.tenant)} · was at ${position(context, plan.source.base?.mergeBase, contract.file, contract.line)}\n`
          .length;
  }
  if (others.length > 0) length += 400;
  for (const part of [...touched, ...others]) length += part.open.length + part.close.length;
  return length + listHeads(touched);
}

/**
 * Above the pull request's contracts whose known state is unknown: their diffs are the pull
 * request's own (base -> head), and an apply sets every desired field of them. '' when none is shown so.
 */
function desiredNote(touched: readonly TenantContract[]): string {
  const shown = touched.filter(({ contract }) => desiredOf(contract) !== undefined);
  if (shown.length === 0) return '';
  const ops = shown.reduce((sum, { contract }) => sum + contract.ops.length, 0);
  return `> [!NOTE]\n> ${desiredNoteText(touched.length, shown.length, ops)}\n\n`;
}

/**
 * Every collection member the plan removes, named (tenant, contract, member), in one diff block:
 * never cut. When the list alone does not fit in `room`, the removals are counted per tenant and
 * the note says where the whole plan is. '' when nothing is removed.
 */
function removalsSection(context: RenderContext, plan: PlanDocument, room: number): string {
  const lines: string[] = [];
  const perTenant: string[] = [];
  for (const tenant of plan.tenants) {
    let count = 0;
    for (const contract of tenant.contracts) {
      for (const view of removedMembers(contract)) {
        count += 1;
        lines.push(`- ${escapeForTerminal(`${tenant.tenant} · ${contract.id} · ${clipValue(context, view.label)}`)}`);
      }
    }
    if (count > 0) perTenant.push(`${escapeInline(tenant.tenant)} ${count}`);
  }
  if (lines.length === 0) return '';
  const heading = `#### Members removed (${lines.length} in ${plural(perTenant.length, 'tenant')})\n\n`;
  const body = lines.join('\n');
  const fence = fenceFor(body);
  const listed = `${heading}Every collection member this plan removes (tenant · contract · member):\n\n${fence}diff\n${body}\n${fence}\n\n`;
  if (listed.length <= room) return listed;
  const shown =
    perTenant.length > REMOVAL_TENANTS_COUNTED
      ? [...perTenant.slice(0, REMOVAL_TENANTS_COUNTED), `${perTenant.length - REMOVAL_TENANTS_COUNTED} more tenants`]
      : perTenant;
  return `${heading}Too many to name here (${shown.join(', ')}). ${fullPlanSentence(context)}\n\n`;
}

/** `items` without the contracts a finding names (shown in their own section), and those contracts with ops. */
function withoutFlagged(items: readonly TenantContract[], flagged: ReadonlySet<string>): { rest: TenantContract[]; flagged: TenantContract[] } {
  const rest: TenantContract[] = [];
  const named: TenantContract[] = [];
  for (const item of items) (flagged.has(`${item.tenant}\n${item.contract.id}`) && item.contract.ops.length > 0 ? named : rest).push(item);
  return { rest, flagged: named };
}

/** `items` split into the contracts whose change no other of their tenant shares, and those in groups of identical changes. */
function singlesAndGroups(items: readonly TenantContract[]): { singles: TenantContract[]; grouped: TenantContract[] } {
  const byTenant = new Map<string, PlanContract[]>();
  for (const { tenant, contract } of items) byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), contract]);
  const inGroups = new Set<PlanContract>();
  for (const [tenant, contracts] of byTenant)
    for (const group of groupsOf(tenant, contracts)) if (group.contracts.length > 1) for (const c of group.contracts) inGroups.add(c);
  return { singles: items.filter((item) => !inGroups.has(item.contract)), grouped: items.filter((item) => inGroups.has(item.contract)) };
}

/**
 * Every change to a contract a finding names, each with its diff: never cut. When they alone do not
 * fit in `room`, they are counted per tenant and the note says where the whole plan is. '' when none.
 */
function flaggedSection(context: RenderContext, flagged: readonly TenantContract[], room: number): string {
  if (flagged.length === 0) return '';
  const heading = `#### Changes the findings name (${flagged.length})\n\n`;
  const blocks = flagged.map(({ tenant, contract }) => groupBlock(context, { tenant, contracts: [contract] }, tenant)).join('');
  const whole = `${heading}Each contract a finding above names, with its changes (never cut):\n\n${blocks}`;
  if (whole.length <= room) return whole;
  const perTenant = new Map<string, number>();
  for (const { tenant } of flagged) perTenant.set(tenant, (perTenant.get(tenant) ?? 0) + 1);
  const counts = [...perTenant].map(([tenant, count]) => `${escapeInline(tenant)} ${count}`);
  const shown =
    counts.length > REMOVAL_TENANTS_COUNTED ? [...counts.slice(0, REMOVAL_TENANTS_COUNTED), `${counts.length - REMOVAL_TENANTS_COUNTED} more tenants`] : counts;
  return `${heading}Too many to show here (${shown.join(', ')}). ${fullPlanSentence(context)}\n\n`;
}

/** A removals section too long to list counts this many tenants by name. */
const REMOVAL_TENANTS_COUNTED = 20;

/** Per tenant, the other contracts with changes and their ops: said before any of their details, whatever room is left. */
function otherCounts(others: readonly TenantContract[]): string {
  const byTenant = new Map<string, OtherCounts>();
  for (const { tenant, contract } of others)
    byTenant.set(tenant, countOther(byTenant.get(tenant), { ops: contract.ops.length, knownFrom: contract.knownFrom }));
  const entries = [...byTenant];
  let out = '';
  for (const [tenant, counts] of entries.slice(0, OTHER_TENANTS_COUNTED)) out += `- **${escapeInline(tenant)}**: ${otherCountsText(counts)}\n`;
  const rest = entries.slice(OTHER_TENANTS_COUNTED);
  if (rest.length > 0) {
    const contracts = rest.reduce((sum, [, counts]) => sum + counts.contracts, 0);
    const ops = rest.reduce((sum, [, counts]) => sum + counts.ops, 0);
    out += `- ${plural(rest.length, 'more tenant')}: ${plural(contracts, 'contract')}, ${plural(ops, 'op')}\n`;
  }
  return `${out}\n`;
}

/** The heading of the pull request's groups of identical changes: how many groups and contracts. */
function groupsHeadingOf(parts: readonly TenantPart[], contracts: number): string {
  const groups = parts.reduce((sum, part) => sum + part.units.length, 0);
  return `#### Identical changes (${plural(groups, 'group')}, ${plural(contracts, 'contract')})\n\nEach change once, then the contracts it is made to.\n\n`;
}

/** Under the pull request's heading: where its contracts shown in other sections are. '' when none is. */
function elsewhereNote(grouped: number, flagged: number): string {
  const places = [
    ...(flagged > 0 ? [`${plural(flagged, 'contract')} under "Changes the findings name"`] : []),
    ...(grouped > 0 ? [`${plural(grouped, 'contract')} under "Identical changes"`] : []),
  ];
  return places.length === 0 ? '' : `Below: ${places.join(', ')}.\n\n`;
}

/** The pull-request comment as it is written: the text so far, and whether it is full (once a piece does not fit, no later one does). */
interface Comment {
  out: string;
  full: boolean;
  readonly maxLength: number;
}

/** Whether `text` fits, with `closing` characters still to come after it. */
function fits(comment: Comment, text: string, closing = 0): boolean {
  comment.full ||= comment.out.length + text.length + closing + RESERVE > comment.maxLength;
  return !comment.full;
}

/** Appends `text` when it fits; says whether it did. */
function put(comment: Comment, text: string): boolean {
  if (!fits(comment, text)) return false;
  comment.out += text;
  return true;
}

/** A section's tenants, each inline or in its own <details>; what does not fit is named in the closing list (or counted, `into`). */
function writeParts(comment: Comment, parts: readonly TenantPart[], choices: ReadonlyMap<Unit, FitChoice>, closing: number, into: Shortening): void {
  for (const part of parts) {
    // A tenant none of whose contracts is shown gets no section: its ids are in the closing list.
    if (!part.units.some((unit) => shows(choices.get(unit))) || !fits(comment, `${part.open}${part.close}`, closing)) {
      nameOnly(part, choices, into);
      continue;
    }
    comment.out += part.open;
    for (const unit of part.units)
      comment.out += writeUnit(unit, choices.get(unit)!, comment.maxLength - RESERVE - closing - part.close.length - comment.out.length, into);
    comment.out += part.close;
  }
}

/** The contracts this pull request changes alone (not flagged, not in a group), each with its diff, under `notes` (where its others are; what their diffs show). */
function writeOwn(
  comment: Comment,
  touched: number,
  notes: readonly string[],
  parts: readonly TenantPart[],
  choices: ReadonlyMap<Unit, FitChoice>,
  into: Shortening,
): void {
  put(comment, `#### Contracts this pull request changes (${touched})\n\n`);
  if (touched === 0) put(comment, 'None: this pull request changes no contract of the desired state.\n\n');
  for (const note of notes) if (note !== '') put(comment, note);
  writeParts(comment, parts, choices, 0, into);
}

/** The contracts the pull request no longer manages, one line each while they fit; returns how many did not. */
function writeUnmanaged(comment: Comment, context: RenderContext, plan: PlanDocument): number {
  const dropped = plan.noLongerManaged ?? [];
  if (dropped.length === 0) return 0;
  put(
    comment,
    `#### No longer managed (${dropped.length})\n\n` +
      'Removed from the desired state by this pull request. contract-sync never deletes a contract: ' +
      `${dropped.length === 1 ? 'it is' : 'they are'} left unchanged on the service.\n\n`,
  );
  let omitted = 0;
  for (const contract of dropped) {
    // Declared at the merge base: the change is counted from there.
    const line = `- **${codeSpan(contract.id)}** · ${escapeInline(contract.tenant)} · was at ${position(context, plan.source.base?.mergeBase, contract.file, contract.line)}\n`;
    if (!put(comment, line)) omitted += 1;
  }
  if (!comment.out.endsWith('\n\n')) comment.out += '\n';
  return omitted;
}

/** The pull request's groups of identical changes under their heading, or, when none is shown, named in the closing list. */
function writeGroups(comment: Comment, heading: string, parts: readonly TenantPart[], choices: ReadonlyMap<Unit, FitChoice>, into: Shortening): void {
  if (heading !== '' && parts.some((part) => part.units.some((unit) => shows(choices.get(unit)))) && fits(comment, heading)) {
    comment.out += heading;
    writeParts(comment, parts, choices, 0, into);
  } else {
    for (const part of parts) nameOnly(part, choices, into);
  }
}

/**
 * The other contracts with changes: counted per tenant whatever the room (in one bounded line when
 * that is all that fits), then their details where room is left. Returns whether they were counted
 * here (else the closing note counts them).
 */
function writeOthers(
  comment: Comment,
  others: readonly TenantContract[],
  parts: readonly TenantPart[],
  choices: ReadonlyMap<Unit, FitChoice>,
  into: Shortening,
): boolean {
  if (others.length === 0) return true;
  let counted = true;
  const ops = others.reduce((sum, { contract }) => sum + contract.ops.length, 0);
  const heading = `#### Other contracts with changes (${others.length})\n\n`;
  const counts = `${heading}Not changed by this pull request, but their known state differs from the desired state (drift, or not applied yet).\n\n${otherCounts(others)}`;
  // Counted whatever the room: per tenant where it fits, else in one bounded line (numbers only).
  const oneLine = `${heading}${plural(others.length, 'contract')}, ${plural(ops, 'op')}, not changed by this pull request (drift, or not applied yet).\n\n`;
  if (fits(comment, counts)) comment.out += counts;
  // The reserve holds it once the comment is full (like the closing note: numbers and fixed text), unless
  // even the section above could not start: the closing note then counts them.
  else if (comment.out.length + oneLine.length + RESERVE / 2 <= comment.maxLength) comment.out += oneLine;
  else counted = false;
  const open = `<details><summary>${plural(others.length, 'contract')}, ${plural(ops, 'op')}</summary>\n\n`;
  const close = '</details>\n\n';
  const shown = parts.some((part) => part.units.some((unit) => shows(choices.get(unit))));
  if (shown && fits(comment, open, close.length)) {
    comment.out += open;
    writeParts(comment, parts, choices, close.length, into);
    comment.out += close;
  } else {
    for (const part of parts) nameOnly(part, choices, into);
  }
  return counted;
}

/**
 * Sections in the order a reviewer needs them (engine/plan/render-order.ts; docs/architecture.md
 * section 5, "The pull-request comment"): the contracts this pull request changes, each with its
 * diff; every removal and every change a finding names (never cut, so given their room first);
 * those it no longer manages; its groups of identical changes; then the other contracts with
 * changes, counted per tenant, with their details only where room is left (never named one by one:
 * the pull request did not change them); then how many match, and what was cut.
 */
function renderPullRequest(context: RenderContext, plan: PlanDocument): string {
  const { maxLength } = context;
  const comment: Comment = { out: opening(context, plan), full: false, maxLength };
  const shortening = newShortening();
  const counted = newShortening();

  const flaggedIds = flaggedKeys(plan.findings);
  const touched = touchedContracts(plan);
  const ownUnflagged = withoutFlagged(touched, flaggedIds);
  const othersSplit = withoutFlagged(untouchedChangedContracts(plan), flaggedIds);
  const others = othersSplit.rest;
  const flagged = [...ownUnflagged.flagged, ...othersSplit.flagged];
  const { singles, grouped } = singlesAndGroups(ownUnflagged.rest);
  const singleParts = sectionParts(context, singles);
  // Never a tenant's collapsed section: each group is one diff (its ids collapse), and a reviewer must see it unfolded.
  const groupParts = sectionParts(context, grouped, unitOf, false);
  const otherParts = sectionParts(context, others, countedUnitOf);
  const notes = desiredNote(touched);
  const elsewhere = elsewhereNote(grouped.length, ownUnflagged.flagged.length);
  const groupsHeading = grouped.length === 0 ? '' : groupsHeadingOf(groupParts, grouped.length);
  const fixed =
    fixedLength(context, plan, [...singleParts, ...groupParts], otherParts, notes) + otherCounts(others).length + groupsHeading.length + elsewhere.length;
  const opened = comment.out.length;
  // Never cut, so given their room first: every removal named, every change a finding names.
  const removals = removalsSection(context, plan, maxLength - RESERVE - opened - fixed);
  const flaggedText = flaggedSection(context, flagged, maxLength - RESERVE - opened - fixed - removals.length);
  // Then, in the comment's order, each section gets what the ones above it leave: the pull request's own
  // contracts, its groups of identical changes, then the other contracts' details.
  const budget = maxLength - RESERVE - opened - fixed - removals.length - flaggedText.length;
  const singleChoices = choose(
    singleParts.flatMap((part) => part.units),
    budget,
  );
  const groupChoices = choose(
    groupParts.flatMap((part) => part.units),
    budget - chosenLength(singleChoices),
  );
  const otherChoices = choose(
    otherParts.flatMap((part) => part.units),
    budget - chosenLength(singleChoices) - chosenLength(groupChoices),
  );
  const choices = new Map([...singleChoices, ...groupChoices, ...otherChoices]);

  writeOwn(comment, touched.length, [elsewhere, notes], singleParts, choices, shortening);
  comment.out += removals + flaggedText;
  const omittedUnmanaged = writeUnmanaged(comment, context, plan);
  writeGroups(comment, groupsHeading, groupParts, choices, shortening);
  const othersCounted = writeOthers(comment, others, otherParts, choices, counted);

  const matching = matchingCount(plan);
  // Bounded text (a number): it is written within the reserve, like the truncation note.
  if (matching > 0) comment.out += `${matchingText(matching)}\n`;
  const uncounted = [...counted.listed, ...counted.omitted];
  const room = maxLength - comment.out.length - 2;
  let note = closingNote(context, { ...shortening, short: [...shortening.short, ...counted.short] }, omittedUnmanaged, room, uncounted, othersCounted);
  // A heading and summary that took nearly all the room (a very small limit): what was cut is not itemised.
  if (note.length > room) note = shortenedNote(context, undefined);
  if (note !== '') comment.out += `${matching > 0 ? '\n' : ''}${note}`;
  return comment.out;
}

/**
 * With the artifact known and a value cut but nothing else left out (the shortened note says it
 * then): where the values are whole. Bounded: the name and the URL are checked by planArtifact().
 */
function cutValuesNote(context: RenderContext, out: string): string {
  if (context.artifact === undefined || out.includes('> Shortened to stay under') || !out.includes(`; full value in ${fullPlanPlace(context)})`)) return '';
  return `${out.endsWith('\n\n') ? '' : '\n'}Long values are cut above. ${fullPlanSentence(context)}\n`;
}

export function renderPlanMarkdown(plan: PlanDocument, options: MarkdownRenderOptions = {}): string {
  const maxLength = options.maxLength ?? MARKDOWN_MAX_LENGTH;
  if (!Number.isInteger(maxLength) || maxLength < 2 * RESERVE) {
    throw new TypeError(`options.maxLength: expected an integer >= ${2 * RESERVE}, got ${String(maxLength)}`);
  }
  const { ref, commit } = plan.source;
  const context: RenderContext = {
    maxLength,
    links: options.links,
    head: ref === null || commit === null ? undefined : commit,
    artifact: options.artifact,
  };
  const out = plan.source.base === undefined ? renderByTenant(context, plan) : renderPullRequest(context, plan);
  return out + cutValuesNote(context, out);
}
