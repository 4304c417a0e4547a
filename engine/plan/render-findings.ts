/**
 * What the checks found (engine/pipeline/checks.ts: policy rules, a library caller's checks), one
 * renderer per format, the same wherever findings are shown: the text and markdown plans, `show`,
 * and the apply report's summary. The JSON plan and the run report carry them as data. Pure.
 */
import { findingCounts, type Finding, type FindingAction } from '../diagnostic/finding.ts';
import { describeException } from '../policy/finding-diagnostic.ts';
import { escapeInline } from '../text/markdown-escape.ts';
import { plural } from '../text/plural.ts';
import { escapeForTerminal } from '../text/text-escape.ts';

/** How a finding counts: its action, or `excepted` when an unexpired policy exception covers it. */
type Verdict = FindingAction | 'excepted' | 'overridden';

const ORDER: readonly Verdict[] = ['deny', 'override', 'warn', 'overridden', 'excepted'];

const WORD: Readonly<Record<Verdict, string>> = { deny: 'denied', override: 'needs override', warn: 'warning', overridden: 'overridden', excepted: 'excepted' };

function verdictOf(finding: Finding): Verdict {
  if (finding.overridden !== undefined) return 'overridden';
  return findingCounts(finding) ? finding.action : 'excepted';
}

/** Denials first, then those needing an override, warnings, and the excepted; within each, as found (tenant order). */
function ordered(findings: readonly Finding[]): Finding[] {
  return ORDER.flatMap((verdict) => findings.filter((finding) => verdictOf(finding) === verdict));
}

/** What a finding says: its message, and the exception that matches it. */
function said(finding: Finding): string {
  const lifted = finding.overridden === undefined ? '' : ` (overridden by ${finding.overridden.by}: ${finding.overridden.reason})`;
  return finding.message + describeException(finding) + lifted;
}

/** `acme/4711 (contracts/acme.yaml:3)`, `acme`. */
function subject(finding: Finding, escape: (text: string) => string): string {
  const what = finding.contractId === undefined ? finding.tenant : `${finding.tenant}/${finding.contractId}`;
  const where = finding.file === undefined ? '' : ` (${finding.file}${finding.line === undefined ? '' : `:${finding.line}`})`;
  return escape(what + where);
}

/** `2 findings: 1 denied, 1 warning`. */
export function findingsHeadline(findings: readonly Finding[]): string {
  const counts = ORDER.flatMap((verdict) => {
    const count = findings.filter((finding) => verdictOf(finding) === verdict).length;
    return count === 0 ? [] : [`${count} ${WORD[verdict]}`];
  });
  return `${plural(findings.length, 'finding')}: ${counts.join(', ')}`;
}

/** The text block: a blank line, the headline, one line a finding; '' when there is none. */
export function renderFindingsText(findings: readonly Finding[] | undefined, options: { readonly color?: boolean } = {}): string {
  if (findings === undefined || findings.length === 0) return '';
  function paint(sgr: string, text: string): string {
    return options.color ? `\u001b[${sgr}m${text}\u001b[0m` : text;
  }
  const style: Readonly<Record<Verdict, string>> = { deny: '31', override: '33', warn: '33', overridden: '2', excepted: '2' };
  const lines = ordered(findings).map(
    (finding) =>
      `  ${paint(style[verdictOf(finding)], WORD[verdictOf(finding)].padEnd(14))} ${escapeForTerminal(finding.check)}  ${subject(finding, escapeForTerminal)}: ${escapeForTerminal(said(finding))}`,
  );
  return `\n${paint('1', findingsHeadline(findings))}\n${lines.join('\n')}\n`;
}

/** What the findings that still count stop: said first, where a reviewer looks. */
export function failingSentence(findings: readonly Finding[]): string | undefined {
  const failing = findings.filter((finding) => finding.action !== 'warn' && findingCounts(finding));
  if (failing.length === 0) return undefined;
  const overrides = failing.some((finding) => finding.action === 'override');
  return (
    `${plural(failing.length, 'finding denies', 'findings deny')} this change: an apply sends nothing while ${failing.length === 1 ? 'it stands' : 'they stand'} ` +
    `(change the contracts, or add a policy exception${overrides ? '; a rule of action override is lifted by apply --override-policy NAME --reason TEXT' : ''})`
  );
}

function failingAlert(findings: readonly Finding[]): string {
  const sentence = failingSentence(findings);
  return sentence === undefined ? '' : `> [!CAUTION]\n> ${sentence}.\n\n`;
}

/** The markdown section, before the contracts: a heading and one list item a finding; '' when there is none. */
export function renderFindingsMarkdown(findings: readonly Finding[] | undefined): string {
  if (findings === undefined || findings.length === 0) return '';
  const mark: Readonly<Record<Verdict, string>> = { deny: '⛔', override: '🔒', warn: '⚠️', overridden: '🔓', excepted: '☑️' };
  const items = ordered(findings).map(
    (finding) =>
      `- ${mark[verdictOf(finding)]} **${WORD[verdictOf(finding)]}** · ${escapeInline(finding.check)} · ${subject(finding, escapeInline)}: ${escapeInline(said(finding))}\n`,
  );
  return `#### Findings\n\n${failingAlert(findings)}${findingsHeadline(findings)}.\n\n${items.join('')}\n`;
}
