/**
 * The plan as a pull-request comment: title, where it comes from (head, base, contract-sync
 * version, time), headline, a summary table, then the contracts. Without a base: one collapsible
 * section per tenant, a ```diff block per changed contract. With a base (`plan --base`): the
 * contracts the pull request changes first, then those it no longer manages, then the other
 * contracts with ops (drift, or not applied yet), then how many match. With `links` (a CI job's
 * repository, engine/plan/file-links.ts) and a head commit, file paths link to the file there.
 * Never longer than `maxLength` characters: what does not fit is summarised (GitHub refuses
 * comments over 65,536 characters). Pure.
 */
import { escapeHtml, escapeInline } from '../markdown-escape.ts';
import { fitBlocks } from './fit-blocks.ts';
import { commitUrl, fileUrl, type RepositoryLinks } from './file-links.ts';
import {
  ALREADY_MATCHES_TEXT,
  CHANGE_SIGN,
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
  touchedContracts,
  unknownApplyNote,
  unknownCount,
  unknownNote,
  untouchedChangedContracts,
  viewChange,
} from './render-common.ts';
import { incrementalNote } from './incremental-note.ts';
import { renderRemovalsMarkdown } from './render-removals.ts';
import type { PlanContract, PlanDocument } from './types.ts';

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
}

interface RenderContext {
  readonly maxLength: number;
  readonly links: RepositoryLinks | undefined;
  /** The commit the plan's files are at: undefined for the working tree. */
  readonly head: string | undefined;
}

// Room kept for the closing lines and the truncation note; both are bounded (numbers and fixed text).
const RESERVE = 800;
// The summary table stops growing here, so that contract sections always get room.
const TABLE_SHARE = 0.25;

// A ref is shown up to this length: the heading is written before any length check.
const MAX_REF_LENGTH = 100;

/** Inline code for a value from the user (a ref): backticks cannot be escaped inside it, so they are dropped. */
function inlineCode(text: string): string {
  const clipped = text.length > MAX_REF_LENGTH ? `${text.slice(0, MAX_REF_LENGTH - 1)}…` : text;
  return `\`${escapeHtml(clipped.replaceAll('`', ''))}\``;
}

/** Inline code that links to `url` when there is one. */
function linked(code: string, url: string | undefined): string {
  return url === undefined ? code : `[${code}](${url})`;
}

/**
 * Characters that change how the text around them is displayed without being seen (bidirectional
 * overrides, zero-width characters, line and paragraph separators): a value holding one could show
 * a reviewer something other than what is sent. Shown as the JSON escape `\u202e`.
 */
const INVISIBLE = /[\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF]/g;

function visible(text: string): string {
  return text.replace(INVISIBLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
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

/** A contract's line without its changes, for a comment too short to hold them all. */
function contractLine(context: RenderContext, contract: PlanContract, tenant?: string): string {
  const about = tenant === undefined ? '' : ` · ${escapeInline(tenant)}`;
  const where = position(context, context.head, contract.file, contract.line);
  return `**\`${contract.id}\`**${about} · ${where} · ${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')}: ${DETAIL_NOT_SHOWN}\n\n`;
}

const DETAIL_NOT_SHOWN = 'changes not shown here, to keep the comment short';

/** A contract's title and its changes as a diff block; with `tenant`, the title names it (sections that mix tenants). */
function contractBlock(context: RenderContext, contract: PlanContract, tenant?: string): string {
  const about = tenant === undefined ? '' : ` · ${escapeInline(tenant)}`;
  const where = position(context, context.head, contract.file, contract.line);
  if (contract.ops.length === 0) return `**\`${contract.id}\`**${about} · ${where} · ${ALREADY_MATCHES_TEXT}\n\n`;
  const diff: string[] = [];
  for (const change of contract.changes) {
    const view = viewChange(change);
    // Like the text plan: a changed value is one `~` line, old -> new; a member removed and added
    // again (its two ops) too. GitHub colours `+` and `-` lines in a diff block.
    const note = view.kind === 'member-change' ? `  ${MEMBER_CHANGE_NOTE}` : '';
    diff.push(`${CHANGE_SIGN[view.kind]} ${visible(changeText(view))}${note}`);
  }
  const body = diff.join('\n');
  const fence = fenceFor(body);
  const title = `**\`${contract.id}\`**${about} · ${where} · ${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')}`;
  return `${title}\n\n${fence}diff\n${body}\n${fence}\n\n`;
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
  const incremental = incrementalNote(plan.source);
  if (incremental !== undefined) out += `${escapeInline(incremental)}\n\n`;
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

function shortenedNote(maxLength: number, omitted: string): string {
  return (
    `> [!WARNING]\n> Shortened to stay under ${maxLength.toLocaleString('en-US')} characters: ${omitted} not shown. ` +
    'The full plan is in the job log and in the plan file (`--out PLAN.json`).\n'
  );
}

/** What both layouts open with: the heading, the summary table, then sections about the whole plan. */
function opening(context: RenderContext, plan: PlanDocument): string {
  // Sections about the whole plan: after the summary, before the contracts.
  return summaryTable(plan, heading(context, plan), context.maxLength) + renderRemovalsMarkdown(plan);
}

function renderByTenant(context: RenderContext, plan: PlanDocument): string {
  const { maxLength } = context;
  let out = opening(context, plan);

  // Contracts with changes that did not fit, and their ops.
  let omittedContracts = 0;
  let omittedOps = 0;
  let full = false;
  for (const tenant of plan.tenants) {
    const c = tenantCounts(tenant);
    const changed = changedContracts(tenant);
    const summary = c.changed === 0 ? `no changes (${plural(c.contracts, 'contract')})` : `${c.changed} to update, ${plural(c.ops, 'op')}`;
    const open = `<details><summary><b>${escapeHtml(tenant.tenant)}</b>: ${summary}</summary>\n\n`;
    const close = '</details>\n\n';
    if (full || out.length + open.length + close.length + RESERVE > maxLength) {
      full = true;
      omittedContracts += changed.length;
      omittedOps += c.ops;
      continue;
    }
    out += open;
    if (changed.length === 0) out += `${c.contracts === 1 ? 'Its contract matches' : `All ${c.contracts} contracts match`} the desired state.\n\n`;
    for (const [index, contract] of changed.entries()) {
      const block = contractBlock(context, contract);
      if (full || out.length + block.length + close.length + RESERVE > maxLength) {
        if (!full) out += `…and ${plural(changed.length - index, 'more contract')} to update, not shown.\n\n`;
        full = true;
        omittedContracts += 1;
        omittedOps += contract.ops.length;
        continue;
      }
      out += block;
    }
    out += close;
  }
  if (omittedContracts > 0) out += shortenedNote(maxLength, `${plural(omittedContracts, 'contract')} to update (${plural(omittedOps, 'op')})`);
  return out;
}

/** The length of renderPullRequest's text other than the contracts' blocks: headings, the no-longer-managed list, the wrapper of the others. */
function fixedLength(context: RenderContext, plan: PlanDocument, touched: number, others: number): number {
  let length = `#### Contracts this pull request changes (${touched})\n\n`.length;
  if (touched === 0) length += 'None: this pull request changes no contract of the desired state.\n\n'.length;
  const dropped = plan.noLongerManaged ?? [];
  if (dropped.length > 0) {
    length += 300;
    for (const contract of dropped)
      length +=
        `- **\`${contract.id}\`** · ${escapeInline(contract.tenant)} · was at ${position(context, plan.source.base?.mergeBase, contract.file, contract.line)}\n`
          .length;
  }
  if (others > 0) length += 300;
  return length;
}

/** Sections in the order a reviewer needs them: what this pull request changes comes first. */
function renderPullRequest(context: RenderContext, plan: PlanDocument): string {
  const { maxLength } = context;
  let out = opening(context, plan);
  let omittedContracts = 0;
  let omittedOps = 0;
  let omittedUnmanaged = 0;
  let full = false;
  function fits(text: string, closing = 0): boolean {
    full ||= out.length + text.length + closing + RESERVE > maxLength;
    return !full;
  }

  const touched = touchedContracts(plan);
  const others = untouchedChangedContracts(plan);
  // Every contract keeps its line; the longest details go first when all of them do not fit.
  const contracts = [...touched, ...others];
  const blocks = contracts.map(({ tenant, contract }) => ({ full: contractBlock(context, contract, tenant), short: contractLine(context, contract, tenant) }));
  const choices = fitBlocks(blocks, maxLength - RESERVE - out.length - fixedLength(context, plan, touched.length, others.length));
  const shown = new Map(
    contracts.map((item, index) => [item, choices[index] === 'omitted' ? '' : choices[index] === 'short' ? blocks[index]!.short : blocks[index]!.full]),
  );
  const shortened = contracts.filter((_, index) => choices[index] === 'short');

  const changesHere = `#### Contracts this pull request changes (${touched.length})\n\n`;
  if (fits(changesHere)) out += changesHere;
  const none = 'None: this pull request changes no contract of the desired state.\n\n';
  if (touched.length === 0 && fits(none)) out += none;
  for (const item of touched) {
    const { contract } = item;
    const block = shown.get(item)!;
    if (block !== '' && fits(block)) {
      out += block;
      continue;
    }
    omittedContracts += 1;
    omittedOps += contract.ops.length;
  }

  const dropped = plan.noLongerManaged ?? [];
  if (dropped.length > 0) {
    const intro =
      `#### No longer managed (${dropped.length})\n\n` +
      'Removed from the desired state by this pull request. contract-sync never deletes a contract: ' +
      `${dropped.length === 1 ? 'it is' : 'they are'} left unchanged on the service.\n\n`;
    if (fits(intro)) out += intro;
    for (const contract of dropped) {
      // Declared at the merge base: the change is counted from there.
      const line = `- **\`${contract.id}\`** · ${escapeInline(contract.tenant)} · was at ${position(context, plan.source.base?.mergeBase, contract.file, contract.line)}\n`;
      if (fits(line)) out += line;
      else omittedUnmanaged += 1;
    }
    if (!out.endsWith('\n\n')) out += '\n';
  }

  if (others.length > 0) {
    const ops = others.reduce((sum, { contract }) => sum + contract.ops.length, 0);
    const open =
      `#### Other contracts with changes (${others.length})\n\n` +
      'Not changed by this pull request, but their known state differs from the desired state (drift, or not applied yet).\n\n' +
      `<details><summary>${plural(others.length, 'contract')}, ${plural(ops, 'op')}</summary>\n\n`;
    const close = '</details>\n\n';
    if (fits(open, close.length)) {
      out += open;
      for (const item of others) {
        const { contract } = item;
        const block = shown.get(item)!;
        if (block !== '' && fits(block, close.length)) {
          out += block;
          continue;
        }
        omittedContracts += 1;
        omittedOps += contract.ops.length;
      }
      out += close;
    } else {
      omittedContracts += others.length;
      omittedOps += ops;
    }
  }

  const matching = plan.tenants.reduce((sum, tenant) => sum + tenant.contracts.filter((c) => c.action === 'noop' && c.touched !== true).length, 0);
  if (matching > 0) {
    const line = `${plural(matching, 'other contract matches', 'other contracts match')} the desired state: no ops.\n`;
    // Bounded text (a number): it is written within the reserve, like the truncation note.
    out += line;
  }
  const omitted: string[] = [];
  if (omittedContracts > 0) omitted.push(`${plural(omittedContracts, 'contract')} (${plural(omittedOps, 'op')})`);
  if (shortened.length > 0) {
    const ops = shortened.reduce((sum, { contract }) => sum + contract.ops.length, 0);
    omitted.push(`the changes of the ${plural(shortened.length, 'largest contract')} (${plural(ops, 'op')})`);
  }
  if (omittedUnmanaged > 0) omitted.push(`${plural(omittedUnmanaged, 'contract')} no longer managed`);
  if (omitted.length > 0) out += `${matching > 0 ? '\n' : ''}${shortenedNote(maxLength, omitted.join(' and '))}`;
  return out;
}

export function renderPlanMarkdown(plan: PlanDocument, options: MarkdownRenderOptions = {}): string {
  const maxLength = options.maxLength ?? MARKDOWN_MAX_LENGTH;
  if (!Number.isInteger(maxLength) || maxLength < 2 * RESERVE) {
    throw new TypeError(`options.maxLength: expected an integer >= ${2 * RESERVE}, got ${String(maxLength)}`);
  }
  const { ref, commit } = plan.source;
  const context: RenderContext = { maxLength, links: options.links, head: ref === null || commit === null ? undefined : commit };
  return plan.source.base === undefined ? renderByTenant(context, plan) : renderPullRequest(context, plan);
}
