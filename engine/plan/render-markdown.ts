/**
 * The plan as a pull-request comment: headline, a summary table, one collapsible section per
 * tenant, a ```diff block per changed contract. Never longer than `maxLength` characters: what does
 * not fit is summarised (GitHub refuses comments over 65,536 characters). Pure.
 */
import { changedContracts, headline, KNOWN_FROM_TEXT, plural, tenantCounts, unknownCount, unknownNote, viewChange } from './render-common.ts';
import type { PlanContract, PlanDocument } from './types.ts';

export const MARKDOWN_MAX_LENGTH = 60_000;

export interface MarkdownRenderOptions {
  /** Upper bound on the output length in characters; default 60,000. */
  readonly maxLength?: number;
}

// Room kept for the closing lines and the truncation note; both are bounded (numbers and fixed text).
const RESERVE = 800;
// The summary table stops growing here, so that contract sections always get room.
const TABLE_SHARE = 0.25;

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** Markdown table cells and inline text: characters that would end a cell or start markup. */
function escapeInline(text: string): string {
  return escapeHtml(text).replace(/([\\`*_[\]|#~])/g, '\\$1');
}

/** A fence longer than any backtick run in `body`, so a value cannot close the code block. */
function fenceFor(body: string): string {
  let longest = 0;
  for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function contractBlock(contract: PlanContract): string {
  const diff: string[] = [];
  for (const change of contract.changes) {
    const view = viewChange(change);
    // In a diff block GitHub colours `-` red and `+` green: a replaced value is its old and new line.
    if (view.kind !== 'set' && view.kind !== 'add') diff.push(`- ${view.label}: ${view.before}`);
    if (view.kind !== 'remove') diff.push(`+ ${view.label}: ${view.after}`);
  }
  const body = diff.join('\n');
  const fence = fenceFor(body);
  const title = `**\`${contract.id}\`** · ${escapeInline(`${contract.file}:${contract.line}`)} · ${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')}`;
  return `${title}\n\n${fence}diff\n${body}\n${fence}\n\n`;
}

export function renderPlanMarkdown(plan: PlanDocument, options: MarkdownRenderOptions = {}): string {
  const maxLength = options.maxLength ?? MARKDOWN_MAX_LENGTH;
  if (!Number.isInteger(maxLength) || maxLength < 2 * RESERVE) {
    throw new TypeError(`options.maxLength: expected an integer >= ${2 * RESERVE}, got ${String(maxLength)}`);
  }

  let out = `### contract-sync plan\n\n${escapeInline(headline(plan))}\n\n`;
  const unknown = unknownCount(plan);
  if (unknown > 0) out += `> [!NOTE]\n> ${escapeInline(unknownNote(unknown))}\n\n`;

  if (plan.tenants.length > 0) {
    out += '| Tenant | Contracts | To update | Unchanged | Ops | Known state unknown |\n|---|--:|--:|--:|--:|--:|\n';
    const tableLimit = out.length + maxLength * TABLE_SHARE;
    for (const [index, tenant] of plan.tenants.entries()) {
      const c = tenantCounts(tenant);
      const row = `| ${escapeInline(tenant.tenant)} | ${c.contracts} | ${c.changed} | ${c.contracts - c.changed} | ${c.ops} | ${c.unknown} |\n`;
      if (out.length + row.length > tableLimit) {
        out += `| … ${plural(plan.tenants.length - index, 'more tenant')} | | | | | |\n`;
        break;
      }
      out += row;
    }
    out += '\n';
  }

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
      const block = contractBlock(contract);
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
  if (omittedContracts > 0) {
    out +=
      `> [!WARNING]\n> Shortened to stay under ${maxLength.toLocaleString('en-US')} characters: ` +
      `${plural(omittedContracts, 'contract')} to update (${plural(omittedOps, 'op')}) not shown. ` +
      'The full plan is in the job log and in the plan file (`--out PLAN.json`).\n';
  }
  return out;
}
