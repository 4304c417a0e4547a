/**
 * What the checks found (engine/pipeline/checks.ts: policy rules, a library caller's checks), one
 * renderer per format, the same wherever findings are shown: the text and markdown plans, `show`,
 * and the apply report's summary. The JSON plan and the run report carry them as data. Pure.
 */
import type { Finding, FindingAction } from '../diagnostic/finding.ts';
import { escapeInline } from '../text/markdown-escape.ts';
import { plural } from '../text/plural.ts';
import { escapeForTerminal } from '../text/text-escape.ts';

const ORDER: readonly FindingAction[] = ['deny', 'override', 'warn'];

const WORD: Readonly<Record<FindingAction, string>> = { deny: 'denied', override: 'needs override', warn: 'warning' };

/** Denials first, then those needing an override, then warnings; within each, as found (tenant order). */
function ordered(findings: readonly Finding[]): Finding[] {
  return ORDER.flatMap((action) => findings.filter((finding) => finding.action === action));
}

/** `acme/4711 (contracts/acme.yaml:3)`, `acme`. */
function subject(finding: Finding, escape: (text: string) => string): string {
  const what = finding.contractId === undefined ? finding.tenant : `${finding.tenant}/${finding.contractId}`;
  const where = finding.file === undefined ? '' : ` (${finding.file}${finding.line === undefined ? '' : `:${finding.line}`})`;
  return escape(what + where);
}

/** `2 findings: 1 denied, 1 warning`. */
export function findingsHeadline(findings: readonly Finding[]): string {
  const counts = ORDER.flatMap((action) => {
    const count = findings.filter((finding) => finding.action === action).length;
    return count === 0 ? [] : [`${count} ${WORD[action]}`];
  });
  return `${plural(findings.length, 'finding')}: ${counts.join(', ')}`;
}

/** The text block: a blank line, the headline, one line a finding; '' when there is none. */
export function renderFindingsText(findings: readonly Finding[] | undefined, options: { readonly color?: boolean } = {}): string {
  if (findings === undefined || findings.length === 0) return '';
  function paint(sgr: string, text: string): string {
    return options.color ? `\u001b[${sgr}m${text}\u001b[0m` : text;
  }
  const style: Readonly<Record<FindingAction, string>> = { deny: '31', override: '33', warn: '33' };
  const lines = ordered(findings).map(
    (finding) =>
      `  ${paint(style[finding.action], WORD[finding.action].padEnd(14))} ${escapeForTerminal(finding.check)}  ${subject(finding, escapeForTerminal)}: ${escapeForTerminal(finding.message)}`,
  );
  return `\n${paint('1', findingsHeadline(findings))}\n${lines.join('\n')}\n`;
}

/** The markdown section, before the contracts: a heading and one list item a finding; '' when there is none. */
export function renderFindingsMarkdown(findings: readonly Finding[] | undefined): string {
  if (findings === undefined || findings.length === 0) return '';
  const mark: Readonly<Record<FindingAction, string>> = { deny: '⛔', override: '🔒', warn: '⚠️' };
  const items = ordered(findings).map(
    (finding) =>
      `- ${mark[finding.action]} **${WORD[finding.action]}** · ${escapeInline(finding.check)} · ${subject(finding, escapeInline)}: ${escapeInline(finding.message)}\n`,
  );
  return `#### Findings\n\n${findingsHeadline(findings)}.\n\n${items.join('')}\n`;
}
