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
  type TenantCounts,
} from './render-common.ts';
import { escapeForTerminal } from '../text-escape.ts';
import { incrementalNote } from './incremental-note.ts';
import { PLAN_VERSION, type PlanContract, type PlanDocument, type PlanTenant, type PlanUnmanagedContract } from './types.ts';

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
  const counts = tenantCounts(tenant);
  let body = '';
  let shown = 0;
  for (const contract of tenant.contracts) {
    const text = renderPlanTextContract(contract, options);
    if (text !== '') shown += 1;
    body += text;
  }
  return `${renderPlanTextTenantHead(tenant.tenant, { ...counts, shown }, options)}${body}`;
}

/**
 * A tenant's first lines in the text plan (its blank line before them included), from its counts:
 * `shown`, the contracts renderPlanTextContract lists. Its contracts' lines follow.
 */
export function renderPlanTextTenantHead(
  tenant: string,
  counts: Omit<TenantCounts, 'unknown'> & { readonly shown: number },
  options: TextRenderOptions = {},
): string {
  const paint = painter(options);
  if (counts.shown === 0) return `\n${paint('bold', `tenant ${tenant}`)}: no changes (${plural(counts.contracts, 'contract')})\n`;
  const unchanged = counts.contracts - counts.changed;
  return `\n${paint('bold', `tenant ${tenant}`)}: ${counts.changed} to update, ${unchanged} unchanged, ${plural(counts.ops, 'op')}\n`;
}

// The last file's escaped name: a tenant's contracts come file by file, and escaping works character by character.
let lastFile: string | undefined;
let lastEscapedFile = '';

/** A contract's lines in the text plan; '' for a contract it does not list (no ops, and not touched by the change). */
export function renderPlanTextContract(contract: PlanContract, options: TextRenderOptions = {}): string {
  // With a base, a touched contract is shown even without ops: the change is about it.
  if (contract.action !== 'update' && contract.touched !== true) return '';
  const paint = painter(options);
  if (contract.file !== lastFile) {
    lastFile = contract.file;
    lastEscapedFile = escapeForTerminal(contract.file);
  }
  const where = `${lastEscapedFile}:${contract.line}`;
  const mark = contract.touched === true ? `  ${paint('bold', '[touched]')}` : '';
  if (contract.action === 'noop')
    return `  ${paint('dim', '=')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${ALREADY_MATCHES_TEXT})`)}${mark}\n`;
  let text = `  ${paint('yellow', '~')} ${paint('bold', contract.id)}  ${where}  ${paint('dim', `(${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(contract.ops.length, 'op')})`)}${mark}\n`;
  for (const change of contract.changes) {
    // What viewChange and changeText make of it, without the view: every change of every contract comes here.
    const line = changeLine(change);
    const { sign, style } = MARK[line.kind];
    const note = line.kind === 'member-change' ? paint('dim', '  (removed and added again)') : '';
    text += `      ${paint(style, `${sign} ${line.text}`)}${note}\n`;
  }
  return text;
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
