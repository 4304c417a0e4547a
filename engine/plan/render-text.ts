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
  changeLine,
  type ChangeKind,
  type NotPlanned,
} from './render-common.ts';
import { escapeForTerminal } from '../text-escape.ts';
import { incrementalNote } from './incremental-note.ts';
import { PLAN_VERSION, type PlanDocument, type PlanTenant, type PlanUnmanagedContract } from './types.ts';

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

type Paint = (style: Style, text: string) => string;

function painter(options: TextRenderOptions): Paint {
  return (style, text) => (options.color ? `\u001b[${SGR[style]}m${text}\u001b[0m` : text);
}

export function renderPlanText(plan: PlanDocument, options: TextRenderOptions = {}): string {
  return [
    renderPlanTextHead(plan, options),
    ...plan.tenants.map((tenant) => renderPlanTextTenant(tenant, options)),
    renderPlanTextTail(plan.noLongerManaged ?? [], unknownCount(plan), options),
  ].join('');
}

/**
 * The text plan's first lines: the headline and, with a base, what the change touches. Reads only
 * the plan's source, summary and noLongerManaged (its tenants may be left out).
 */
export function renderPlanTextHead(plan: Pick<PlanDocument, 'source' | 'summary' | 'noLongerManaged'>, options: TextRenderOptions = {}): string {
  const paint = painter(options);
  // headline and changeSummary read nothing else.
  const whole: PlanDocument = { version: PLAN_VERSION, createdAt: '', tenants: [], ...plan };
  const changeLine = changeSummary(whole);
  const incremental = incrementalNote(plan.source);
  return (
    `${paint('bold', headline(whole, options.notPlanned))}\n${changeLine === undefined ? '' : `${changeLine}\n`}` +
    (incremental === undefined ? '' : `${paint('dim', incremental)}\n`)
  );
}

/** One tenant's section of the text plan, its blank line before it included. */
export function renderPlanTextTenant(tenant: PlanTenant, options: TextRenderOptions = {}): string {
  const paint = painter(options);
  const counts = tenantCounts(tenant);
  // With a base, a touched contract is shown even without ops: the change is about it.
  const shown = tenant.contracts.filter((contract) => contract.action === 'update' || contract.touched === true);
  const lines: string[] = [''];
  if (shown.length === 0) {
    lines.push(`${paint('bold', `tenant ${tenant.tenant}`)}: no changes (${plural(counts.contracts, 'contract')})`);
    return `${lines.join('\n')}\n`;
  }
  const unchanged = counts.contracts - counts.changed;
  lines.push(`${paint('bold', `tenant ${tenant.tenant}`)}: ${counts.changed} to update, ${unchanged} unchanged, ${plural(counts.ops, 'op')}`);
  // The file's escaped name, once per file: escaping works character by character.
  let file: string | undefined;
  let escapedFile = '';
  for (const contract of shown) {
    if (contract.file !== file) {
      file = contract.file;
      escapedFile = escapeForTerminal(file);
    }
    const where = `${escapedFile}:${contract.line}`;
    const mark = contract.touched === true ? `  ${paint('bold', '[touched]')}` : '';
    if (contract.action === 'noop') {
      lines.push(`  ${paint('dim', '=')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${ALREADY_MATCHES_TEXT})`)}${mark}`);
      continue;
    }
    lines.push(
      `  ${paint('yellow', '~')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')})`)}${mark}`,
    );
    for (const change of contract.changes) {
      // What viewChange and changeText make of it, without the view: every change of every contract comes here.
      const { kind, text } = changeLine(change);
      const { sign, style } = MARK[kind];
      const note = kind === 'member-change' ? paint('dim', '  (removed and added again)') : '';
      lines.push(`      ${paint(style, `${sign} ${text}`)}${note}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The text plan's last lines: the contracts no longer managed and the note on unknown known state. */
export function renderPlanTextTail(noLongerManaged: readonly PlanUnmanagedContract[], unknown: number, options: TextRenderOptions = {}): string {
  const paint = painter(options);
  const lines: string[] = [];
  if (noLongerManaged.length > 0) {
    lines.push('', `${paint('bold', 'no longer managed')} (${NO_LONGER_MANAGED_TEXT}):`);
    for (const contract of noLongerManaged)
      lines.push(`  ${paint('red', '-')} ${paint('bold', contract.id)}  tenant ${contract.tenant}  (was ${escapeForTerminal(contract.file)}:${contract.line})`);
  }
  if (unknown > 0) lines.push('', paint('yellow', unknownNote(unknown)));
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
