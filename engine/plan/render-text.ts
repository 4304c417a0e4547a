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
  addedLine,
  addedMemberLine,
  type ChangeKind,
  type NotPlanned,
  type TenantCounts,
} from './render-common.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import { incrementalNote } from './incremental-note.ts';
import { forEachUnknownOp } from './diff.ts';
import { isCollectionField } from '../model/fields.ts';
import { renderFindingsText } from './render-findings.ts';
import type { PlanContractText } from './plan-contract.ts';
import type { ContractFields } from '../model/types.ts';
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
    renderFindingsText(plan.findings, options),
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

function where(file: string, line: number): string {
  return `${escapeForTerminal(file)}:${line}`;
}

/** A contract's first line in the text plan, when it has ops. */
function updateLine(paint: Paint, contract: Pick<PlanContract, 'id' | 'file' | 'line' | 'knownFrom' | 'touched'>, ops: number): string {
  const mark = contract.touched === true ? `  ${paint('bold', '[touched]')}` : '';
  return `  ${paint('yellow', '~')} ${paint('bold', escapeForTerminal(contract.id))}  ${where(contract.file, contract.line)}  ${paint('dim', `(${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(ops, 'op')})`)}${mark}\n`;
}

/** A touched contract's line when it has no ops. */
function noopLine(paint: Paint, contract: Pick<PlanContract, 'id' | 'file' | 'line'>): string {
  return `  ${paint('dim', '=')} ${paint('bold', escapeForTerminal(contract.id))}  ${where(contract.file, contract.line)}  ${paint('dim', `(${ALREADY_MATCHES_TEXT})`)}  ${paint('bold', '[touched]')}\n`;
}

/** A change's line under its contract. */
function changeRow(paint: Paint, line: { readonly kind: ChangeKind; readonly text: string }): string {
  const { sign, style } = MARK[line.kind];
  const note = line.kind === 'member-change' ? paint('dim', '  (removed and added again)') : '';
  return `      ${paint(style, `${sign} ${line.text}`)}${note}\n`;
}

/** A contract's lines in the text plan; '' for a contract it does not list (no ops, and not touched by the change). */
export function renderPlanTextContract(contract: PlanContractText, options: TextRenderOptions = {}): string {
  // With a base, a touched contract is shown even without ops: the change is about it.
  if (contract.action !== 'update' && contract.touched !== true) return '';
  const paint = painter(options);
  if (contract.action === 'noop') return noopLine(paint, contract);
  let text = updateLine(paint, contract, contract.ops.length);
  // What viewChange and changeText make of each change, without the view: every change of every contract comes here.
  for (const change of contract.changes) text += changeRow(paint, changeLine(change));
  return text;
}

/** A contract with nothing known, as planByTenant hands it to a sink that writes only text: where it is, its desired fields. */
export interface UnknownTextContract {
  readonly id: string;
  readonly file: string;
  readonly line: number;
  readonly fields: ContractFields;
}

/**
 * renderPlanTextContract of planContract(contract) with nothing known, from the desired fields:
 * the same lines without the plan's ops and changes (a first plan's text, the most common).
 * `touched`: as the plan would mark it (only in a plan made with a base).
 */
export function renderUnknownContractText(contract: UnknownTextContract, touched: boolean | undefined, options: TextRenderOptions = {}): string {
  let changes = '';
  let ops = 0;
  const paint = painter(options);
  forEachUnknownOp(contract.fields, 'as-desired', (field, value) => {
    ops += 1;
    changes += changeRow(paint, isCollectionField(field) ? addedMemberLine(field, value) : addedLine(field, value));
  });
  if (ops === 0) return touched === true ? noopLine(paint, contract) : '';
  return `${updateLine(paint, { id: contract.id, file: contract.file, line: contract.line, knownFrom: 'unknown', ...(touched === undefined ? {} : { touched }) }, ops)}${changes}`;
}

/** The text plan's last lines: the contracts no longer managed and the note on unknown known state. */
export function renderPlanTextTail(noLongerManaged: readonly PlanUnmanagedContract[], unknown: number, options: TextRenderOptions = {}): string {
  const paint = painter(options);
  const lines: string[] = [];
  if (noLongerManaged.length > 0) {
    lines.push('', `${paint('bold', 'no longer managed')} (${NO_LONGER_MANAGED_TEXT}):`);
    for (const contract of noLongerManaged)
      lines.push(
        `  ${paint('red', '-')} ${paint('bold', escapeForTerminal(contract.id))}  tenant ${contract.tenant}  (was ${escapeForTerminal(contract.file)}:${contract.line})`,
      );
  }
  if (unknown > 0) lines.push('', paint('yellow', unknownNote(unknown)));
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
