/**
 * The drift report as markdown, for a scheduled job's issue or step summary: where it comes from
 * (commit, contract-sync version, time, as the plan comment says it), the verdict, a table per
 * tenant, then each drifted contract with a table of its fields (live, desired, cause), then the
 * contracts that could not be checked, then what to run next. Never longer than `maxLength`
 * characters: what does not fit is counted in a closing note (GitHub refuses bodies over 65,536
 * characters). Pure.
 */
import { codeSpan, escapeHtml, escapeInline } from '../text/markdown-escape.ts';
import { formatUtc, plural, shortCommit } from '../plan/render-common.ts';
import { findingsHeadline, renderFindingsMarkdown } from '../plan/render-findings.ts';
import { attributionText } from './attribution.ts';
import { ABSENT, driftSummaryLine, errorStatusText, fixText, nextStep, viewDriftItem } from './render-common.ts';
import type { DriftContract, DriftReport } from './types.ts';
import { withoutTenantPrefix } from '../text/tenant-message.ts';

export const DRIFT_MARKDOWN_MAX_LENGTH = 60_000;

export interface DriftMarkdownOptions {
  /** Upper bound on the output length in characters; default 60,000. */
  readonly maxLength?: number;
  /** The contract-sync version that made the report, named in its header (the report document does not record it). */
  readonly version?: string;
}

// A ref is shown up to this length: the header is written before any length check.
const MAX_REF_LENGTH = 100;

/** Inline code for a ref or commit: backticks cannot be escaped inside it, so they are dropped. */
function inlineCode(text: string): string {
  const clipped = text.length > MAX_REF_LENGTH ? `${text.slice(0, MAX_REF_LENGTH - 1)}…` : text;
  return `\`${escapeHtml(clipped.replaceAll('`', ''))}\``;
}

/** `Commit \`c0ffee0\` · contract-sync 0.1.0 · checked 2027-03-01 06:00:00 UTC`, as the plan comment heads itself. */
function provenance(report: DriftReport, version: string | undefined): string {
  const { ref, commit } = report.source;
  const parts: string[] = [];
  if (ref === null) parts.push(commit === null ? 'Working tree' : `Working tree (uncommitted edits included) at ${inlineCode(shortCommit(commit))}`);
  else if (commit === null) parts.push(`Ref ${inlineCode(ref)}`);
  else parts.push(`Commit ${inlineCode(shortCommit(commit))}${ref === 'HEAD' || commit.startsWith(ref) ? '' : ` (${inlineCode(ref)})`}`);
  if (version !== undefined) parts.push(`contract-sync ${escapeInline(version)}`);
  parts.push(`checked ${escapeInline(formatUtc(report.createdAt))}`);
  return parts.join(' · ');
}

// Room kept for the error list's note and the truncation note; both are bounded.
const RESERVE = 800;

/**
 * A value in a table cell: HTML code, where backticks are plain and a pipe cannot end the cell.
 * Markdown is still parsed inside an HTML element, so the value is escaped as inline text: a live
 * value `[x](https://...)` stays text. (A string value is quoted, so never ABSENT.)
 */
function codeCell(text: string): string {
  if (text === ABSENT) return '*absent*';
  return `<code>${escapeInline(text).replaceAll('\\|', '&#124;')}</code>`;
}

function contractBlock(tenant: string, contract: DriftContract): string {
  const fix = fixText(contract);
  const title =
    `**${codeSpan(contract.id)}** · ${escapeInline(tenant)} · ${escapeInline(`${contract.file}:${contract.line}`)} · ` +
    `${plural(contract.ops.length, 'op')} to fix${fix === undefined ? '' : ` · ${escapeInline(fix)}`}`;
  const rows = contract.drift.map((item) => {
    const view = viewDriftItem(item);
    // With api.audit, who changed it goes with the cause: the table keeps its columns.
    const who = item.attribution === undefined ? '' : ` · ${escapeInline(attributionText(item.attribution))}`;
    return `| ${escapeInline(view.label)} | ${codeCell(view.live)} | ${codeCell(view.desired)} | ${view.cause}${who} |`;
  });
  return `${title}\n\n| Field | Live | Desired | Cause |\n|---|---|---|---|\n${rows.join('\n')}\n\n`;
}

function summaryTable(report: DriftReport): string {
  if (report.tenants.length === 0) return '';
  const rows = report.tenants.map((tenant) => {
    let outside = 0;
    let notYet = 0;
    let never = 0;
    for (const item of tenant.contracts.flatMap((contract) => contract.drift)) {
      if (item.cause === 'changed-outside-git') outside += 1;
      else if (item.cause === 'not-yet-applied') notYet += 1;
      else never += 1;
    }
    const errors = tenant.errors.length + (tenant.error === undefined ? 0 : 1);
    return `| ${escapeInline(tenant.tenant)} | ${tenant.managed} | ${tenant.contracts.length} | ${outside} | ${notYet} | ${never} | ${errors} |`;
  });
  return (
    '| Tenant | Contracts | Drifted | Changed outside git | Not yet applied | Never applied | Errors |\n' +
    `|---|--:|--:|--:|--:|--:|--:|\n${rows.join('\n')}\n\n`
  );
}

export function renderDriftMarkdown(report: DriftReport, options: DriftMarkdownOptions = {}): string {
  const maxLength = options.maxLength ?? DRIFT_MARKDOWN_MAX_LENGTH;
  if (!Number.isInteger(maxLength) || maxLength < 2 * RESERVE) {
    throw new TypeError(`options.maxLength: expected an integer >= ${2 * RESERVE}, got ${String(maxLength)}`);
  }
  let out =
    `### contract-sync drift${report.fix ? ' --fix' : ''}\n\n${provenance(report, options.version)}\n\n` + `**${escapeInline(driftSummaryLine(report))}**\n\n`;
  // The table grows with the tenant count only; a fleet too large for it is summarised by the verdict.
  const table = summaryTable(report);
  if (out.length + table.length + RESERVE < maxLength) out += table;
  // The policy rules' findings before the contracts, as in the plan's comment; when they do not fit, their headline.
  const findings = renderFindingsMarkdown(report.findings);
  if (out.length + findings.length + RESERVE < maxLength) out += findings;
  else if (report.findings !== undefined) out += `**${escapeInline(findingsHeadline(report.findings))}** (the JSON report lists them)\n\n`;

  let omitted = 0;
  for (const tenant of report.tenants) {
    for (const contract of tenant.contracts) {
      const block = contractBlock(tenant.tenant, contract);
      if (omitted > 0 || out.length + block.length + RESERVE > maxLength) {
        omitted += 1;
        continue;
      }
      out += block;
    }
  }

  const problems = report.tenants.flatMap((tenant) => [
    ...(tenant.error === undefined
      ? []
      : [`- ${escapeInline(tenant.tenant)}: not checked: ${escapeInline(withoutTenantPrefix(tenant.tenant, tenant.error))}\n`]),
    ...tenant.errors.map(
      (error) =>
        `- **${codeSpan(error.id)}** · ${escapeInline(tenant.tenant)} · ${escapeInline(`${error.file}:${error.line}`)} · ` +
        `${errorStatusText(error)}: ${escapeInline(error.reason)}\n`,
    ),
  ]);
  let omittedErrors = 0;
  if (problems.length > 0) {
    out += '#### Not checked\n\n';
    for (const line of problems) {
      if (omittedErrors > 0 || out.length + line.length + RESERVE > maxLength) {
        omittedErrors += 1;
        continue;
      }
      out += line;
    }
    out += '\n';
  }
  const warnings = (report.warnings ?? []).map((warning) => `- ${escapeInline(warning.message)}\n`);
  if (warnings.length > 0) {
    const block = `#### Warnings\n\n${warnings.join('')}\n`;
    if (out.length + block.length + RESERVE < maxLength) out += block;
  }
  // Fixed text, written within the reserve.
  out += `**Next:** ${nextStep(report)}\n\n`;
  const notes: string[] = [];
  if (omitted > 0) notes.push(plural(omitted, 'drifted contract'));
  if (omittedErrors > 0) notes.push(plural(omittedErrors, 'error'));
  if (notes.length > 0) {
    out +=
      `> [!WARNING]\n> Shortened to stay under ${maxLength.toLocaleString('en-US')} characters: ${notes.join(' and ')} not shown. ` +
      'The full report is in the job log and in `--format json` (or `--report FILE`).\n';
  }
  return out;
}
