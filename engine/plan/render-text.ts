/** The plan as a terminal diff, per tenant and contract. Colour is the caller's decision (TTY, NO_COLOR). Pure. */
import {
  ALREADY_MATCHES_TEXT,
  changeSummary,
  headline,
  KNOWN_FROM_TEXT,
  NO_LONGER_MANAGED_TEXT,
  plural,
  tenantCounts,
  unknownCount,
  unknownNote,
  viewChange,
  type ChangeKind,
  type NotPlanned,
} from './render-common.ts';
import { incrementalNote } from './incremental-note.ts';
import type { PlanDocument } from './types.ts';

export interface TextRenderOptions {
  readonly color?: boolean;
  /** Contracts the run could not plan (apply): the headline says so instead of "No changes". */
  readonly notPlanned?: NotPlanned;
}

type Style = 'green' | 'red' | 'yellow' | 'bold' | 'dim';

const SGR: Readonly<Record<Style, string>> = { green: '32', red: '31', yellow: '33', bold: '1', dim: '2' };

const MARK: Readonly<Record<ChangeKind, { sign: string; style: Style }>> = {
  set: { sign: '+', style: 'green' },
  add: { sign: '+', style: 'green' },
  replace: { sign: '~', style: 'yellow' },
  'member-change': { sign: '~', style: 'yellow' },
  remove: { sign: '-', style: 'red' },
};

export function renderPlanText(plan: PlanDocument, options: TextRenderOptions = {}): string {
  function paint(style: Style, text: string): string {
    return options.color ? `\u001b[${SGR[style]}m${text}\u001b[0m` : text;
  }

  const lines: string[] = [paint('bold', headline(plan, options.notPlanned))];
  const changeLine = changeSummary(plan);
  if (changeLine !== undefined) lines.push(changeLine);
  const incremental = incrementalNote(plan.source);
  if (incremental !== undefined) lines.push(paint('dim', incremental));
  for (const tenant of plan.tenants) {
    const counts = tenantCounts(tenant);
    // With a base, a touched contract is shown even without ops: the change is about it.
    const shown = tenant.contracts.filter((contract) => contract.action === 'update' || contract.touched === true);
    lines.push('');
    if (shown.length === 0) {
      lines.push(`${paint('bold', `tenant ${tenant.tenant}`)}: no changes (${plural(counts.contracts, 'contract')})`);
      continue;
    }
    const unchanged = counts.contracts - counts.changed;
    lines.push(`${paint('bold', `tenant ${tenant.tenant}`)}: ${counts.changed} to update, ${unchanged} unchanged, ${plural(counts.ops, 'op')}`);
    for (const contract of shown) {
      const where = `${contract.file}:${contract.line}`;
      const mark = contract.touched === true ? `  ${paint('bold', '[touched]')}` : '';
      if (contract.action === 'noop') {
        lines.push(`  ${paint('dim', '=')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${ALREADY_MATCHES_TEXT})`)}${mark}`);
        continue;
      }
      lines.push(`  ${paint('yellow', '~')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')})`)}${mark}`);
      for (const change of contract.changes) {
        const view = viewChange(change);
        const { sign, style } = MARK[view.kind];
        const value =
          view.kind === 'replace' || view.kind === 'member-change'
            ? `${view.before} -> ${view.after}`
            : view.kind === 'remove'
              ? view.before
              : view.after;
        const note = view.kind === 'member-change' ? paint('dim', '  (removed and added again)') : '';
        lines.push(`      ${paint(style, `${sign} ${view.label}: ${value}`)}${note}`);
      }
    }
  }
  const dropped = plan.noLongerManaged ?? [];
  if (dropped.length > 0) {
    lines.push('', `${paint('bold', 'no longer managed')} (${NO_LONGER_MANAGED_TEXT}):`);
    for (const contract of dropped) lines.push(`  ${paint('red', '-')} ${paint('bold', contract.id)}  tenant ${contract.tenant}  (was ${contract.file}:${contract.line})`);
  }
  const unknown = unknownCount(plan);
  if (unknown > 0) lines.push('', paint('yellow', unknownNote(unknown)));
  return `${lines.join('\n')}\n`;
}
