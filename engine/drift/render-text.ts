/** The drift report for a terminal or a job log: per tenant and contract, each drifted field with its cause. Pure. */
import { plural } from '../plan/render-common.ts';
import { renderFindingsText } from '../plan/render-findings.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import { attributionText } from './attribution.ts';
import { driftSummaryLine, errorStatusText, fixText, nextStep, viewDriftItem } from './render-common.ts';
import type { DriftReport } from './types.ts';
import { withoutTenantPrefix } from '../text/tenant-message.ts';

export interface DriftTextOptions {
  readonly color?: boolean;
}

type Style = 'red' | 'yellow' | 'green' | 'bold' | 'dim';

const SGR: Readonly<Record<Style, string>> = { red: '31', yellow: '33', green: '32', bold: '1', dim: '2' };

export function renderDriftText(report: DriftReport, options: DriftTextOptions = {}): string {
  function paint(style: Style, text: string): string {
    return options.color ? `\u001b[${SGR[style]}m${text}\u001b[0m` : text;
  }

  const lines: string[] = [];
  for (const tenant of report.tenants) {
    const name = paint('bold', `tenant ${tenant.tenant}`);
    if (tenant.error !== undefined) lines.push(`${name}: ${paint('red', 'not checked')}`);
    else if (tenant.contracts.length === 0 && tenant.errors.length > 0)
      lines.push(`${name}: no drift in ${tenant.managed - tenant.errors.length} of ${plural(tenant.managed, 'contract')}, ${tenant.errors.length} not checked`);
    else if (tenant.contracts.length === 0) lines.push(`${name}: no drift (${plural(tenant.managed, 'contract')})`);
    else if (tenant.contracts.length === tenant.managed)
      lines.push(`${name}: ${tenant.managed === 1 ? 'its contract' : `all ${tenant.managed} contracts`} drifted`);
    else lines.push(`${name}: ${tenant.contracts.length} of ${plural(tenant.managed, 'contract')} drifted`);
    for (const contract of tenant.contracts) {
      const fix = fixText(contract);
      const outcome = fix === undefined ? '' : `  ${paint(contract.fix?.outcome === 'applied' ? 'green' : 'red', `[${fix}]`)}`;
      lines.push(
        `  ${paint('yellow', '~')} ${paint('bold', escapeForTerminal(contract.id))}  ${escapeForTerminal(contract.file)}:${contract.line}  ${paint('dim', `(${plural(contract.ops.length, 'op')} to fix)`)}${outcome}`,
      );
      for (const item of contract.drift) {
        const view = viewDriftItem(item);
        const style: Style = item.cause === 'changed-outside-git' ? 'red' : 'yellow';
        const who = item.attribution === undefined ? '' : `  ${escapeForTerminal(attributionText(item.attribution))}`;
        lines.push(`      ${view.label}: ${view.live} -> ${view.desired}  ${paint(style, `(${view.cause})`)}${who}`);
      }
    }
    lines.push('');
  }
  // Every error the summary line counts is listed here: it points to this heading.
  const problems = report.tenants.flatMap((tenant) => [
    ...(tenant.error === undefined ? [] : [`  ${tenant.tenant}: ${escapeForTerminal(withoutTenantPrefix(tenant.tenant, tenant.error))}`]),
    ...tenant.errors.map(
      (error) =>
        `  ${tenant.tenant} ${escapeForTerminal(error.id)} (${escapeForTerminal(error.file)}:${error.line}) ${errorStatusText(error)}: ${escapeForTerminal(error.reason)}`,
    ),
  ]);
  if (problems.length > 0) lines.push(paint('red', 'Not checked:'), ...problems, '');
  // The policy rules' findings, as the text plan shows them (one renderer for every run).
  const findings = renderFindingsText(report.findings, options);
  if (findings !== '') lines.push(findings.slice(1));
  if (report.warnings !== undefined && report.warnings.length > 0) {
    lines.push(paint('yellow', 'Warnings:'), ...report.warnings.map((warning) => `  ${escapeForTerminal(warning.message)}`), '');
  }
  lines.push(paint('bold', driftSummaryLine(report)));
  // What to run next, as the markdown report says it; nothing when there is nothing to run.
  if (report.summary.drifted > 0 || report.summary.errors > 0) lines.push(`Next: ${nextStep(report, (command) => command)}`);
  return `${lines.join('\n')}\n`;
}
