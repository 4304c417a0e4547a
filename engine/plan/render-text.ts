/** The plan as a terminal diff, per tenant and contract. Colour is the caller's decision (TTY, NO_COLOR). Pure. */
import { changedContracts, headline, KNOWN_FROM_TEXT, plural, tenantCounts, unknownCount, unknownNote, viewChange, type ChangeKind } from './render-common.ts';
import type { PlanDocument } from './types.ts';

export interface TextRenderOptions {
  readonly color?: boolean;
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

  const lines: string[] = [paint('bold', headline(plan))];
  for (const tenant of plan.tenants) {
    const counts = tenantCounts(tenant);
    lines.push('');
    if (counts.changed === 0) {
      lines.push(`${paint('bold', `tenant ${tenant.tenant}`)}: no changes (${plural(counts.contracts, 'contract')})`);
      continue;
    }
    const unchanged = counts.contracts - counts.changed;
    lines.push(`${paint('bold', `tenant ${tenant.tenant}`)}: ${counts.changed} to update, ${unchanged} unchanged, ${plural(counts.ops, 'op')}`);
    for (const contract of changedContracts(tenant)) {
      const where = `${contract.file}:${contract.line}`;
      lines.push(`  ${paint('yellow', '~')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')})`)}`);
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
  const unknown = unknownCount(plan);
  if (unknown > 0) lines.push('', paint('yellow', unknownNote(unknown)));
  return `${lines.join('\n')}\n`;
}
