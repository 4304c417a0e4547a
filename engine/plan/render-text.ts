/**
 * The plan as a terminal diff, in the order of the pull-request comment (engine/plan/render-order.ts,
 * docs/architecture.md section 5), for a plan document (renderPlanText) and for a plan written one
 * tenant at a time (engine/output/plan-spools.ts), which write the same bytes: both assemble it with
 * textPlan. Colour is the caller's decision (TTY, NO_COLOR). Pure.
 */
import {
  ALREADY_MATCHES_TEXT,
  changeSummary,
  changeText,
  headline,
  KNOWN_FROM_TEXT,
  MEMBER_CHANGE_NOTE,
  NO_LONGER_MANAGED_TEXT,
  plural,
  unknownCount,
  unknownNote,
  changeLine,
  addedLine,
  addedMemberLine,
  viewChange,
  type ChangeKind,
  type NotPlanned,
} from './render-common.ts';
import {
  countOther,
  DESIRED_DIFF_TEXT,
  desiredNoteText,
  desiredOf,
  matchingText,
  otherCountsText,
  placeOf,
  removedMembers,
  UNMANAGED_NOTE,
  type ContractPlace,
  type OtherCounts,
} from './render-order.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import { incrementalNote } from './incremental-note.ts';
import { forEachUnknownOp } from './diff.ts';
import { isCollectionField } from '../model/fields.ts';
import { renderFindingsText } from './render-findings.ts';
import type { PlanContractText } from './plan-contract.ts';
import type { ContractFields } from '../model/types.ts';
import { PLAN_VERSION, type DesiredChange, type KnownFrom, type PlanContract, type PlanDocument, type PlanUnmanagedContract } from './types.ts';

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

/** What a body of the text plan holds: the pull request's own contracts, the members removed, or a tenant's (other) contracts. */
export type TextBody = 'own' | 'removals' | 'contracts';

/** A piece of the text plan: text, or the body of `body` written for `tenant` (in its place, whole). */
export type TextPart = string | { readonly body: TextBody; readonly tenant: string };

/** Where textPlan writes a tenant's contracts' lines as they come: each to its body, in the order given. */
export type TextBodyWriter = (body: TextBody, text: string) => void;

/** One tenant of the text plan: every contract of it, in plan order, as planned or (nothing known) as declared. */
export interface TextPlanTenant {
  contract(contract: PlanContractText): void;
  unknown(contract: UnknownTextContract, touched: boolean | undefined): void;
}

/** What the text plan says around its contracts, known once every tenant is planned. */
export type TextPlanEnd = Pick<PlanDocument, 'source' | 'summary' | 'noLongerManaged' | 'findings'> & {
  /** Contracts planned with their known state unknown. */
  readonly unknown: number;
};

export interface TextPlan {
  /** A tenant's contracts follow, each written to its body by `write`; tenants come one at a time, in plan order. */
  tenant(tenant: string, write: TextBodyWriter): TextPlanTenant;
  /** The whole text plan, in the order of engine/plan/render-order.ts: text, and the bodies in their places. */
  parts(end: TextPlanEnd): TextPart[];
}

/** What textPlan keeps of a tenant: counts, never its contracts. */
interface TenantTally {
  readonly tenant: string;
  contracts: number;
  changed: number;
  ops: number;
  shown: number;
  own: number;
  removals: number;
  other: OtherCounts | undefined;
  /** Bodies written for the tenant. */
  readonly bodies: Set<TextBody>;
}

/**
 * The text plan assembled as its contracts come, tenant by tenant, keeping only counts (the lines go
 * to `write`, in memory for a plan document, to spools for a plan written one tenant at a time):
 * with a base, the headline and what the change touches; the findings; the contracts this pull
 * request changes (a contract with its known state unknown showing what the pull request changed in
 * its desired YAML, under a note); every member removed, named; the contracts no longer managed;
 * the other contracts with changes, counted per tenant, then per tenant in detail; how many match;
 * the note on unknown known state. Without a base: the headline, findings, members removed, then
 * each tenant's contracts under its counts. Nothing is cut and identical changes are not grouped:
 * the text has no length limit, and each contract keeps its file and line.
 */
export function textPlan(withBase: boolean, options: TextRenderOptions = {}): TextPlan {
  const paint = painter(options);
  const tenants: TenantTally[] = [];
  let desiredShown = 0;
  let desiredOps = 0;

  function tenant(name: string, write: TextBodyWriter): TextPlanTenant {
    const tally: TenantTally = { tenant: name, contracts: 0, changed: 0, ops: 0, shown: 0, own: 0, removals: 0, other: undefined, bodies: new Set() };
    tenants.push(tally);
    function out(body: TextBody, text: string): void {
      if (text === '') return;
      tally.bodies.add(body);
      write(body, text);
    }
    /** Counts a contract placed at `listed` (placeOf) and says where its lines go (undefined: not listed). */
    function place(listed: ContractPlace | undefined, contract: { readonly ops: number; readonly knownFrom: KnownFrom }): TextBody | undefined {
      tally.contracts += 1;
      tally.ops += contract.ops;
      if (contract.ops > 0) tally.changed += 1;
      if (listed === undefined) return undefined;
      tally.shown += 1;
      if (!withBase) return 'contracts';
      if (listed === 'own') {
        tally.own += 1;
        return 'own';
      }
      tally.other = countOther(tally.other, contract);
      return 'contracts';
    }
    return {
      contract(contract) {
        const body = place(placeOf(contract), { ops: contract.ops.length, knownFrom: contract.knownFrom });
        if (body === undefined) return;
        if (body === 'own' && desiredOf(contract) !== undefined) {
          desiredShown += 1;
          desiredOps += contract.ops.length;
        }
        out(body, renderPlanTextContract(contract, options, body === 'own' ? name : undefined));
        let removed = '';
        for (const view of removedMembers(contract)) {
          tally.removals += 1;
          removed += `  ${paint('red', `- ${escapeForTerminal(`${name} · ${contract.id} · ${view.label}`)}`)}\n`;
        }
        out('removals', removed);
      },
      unknown(contract, touched) {
        const { text, ops } = unknownContractText(contract, touched, options, withBase && touched === true ? name : undefined);
        const body = place(placeOf({ action: ops > 0 ? 'update' : 'noop', touched: touched === true }), { ops, knownFrom: 'unknown' });
        if (body !== undefined) out(body, text);
      },
    };
  }

  function parts(end: TextPlanEnd): TextPart[] {
    const out: TextPart[] = [renderPlanTextHead(end, options), renderFindingsText(end.findings, options)];
    const removals = tenants.filter((tally) => tally.removals > 0);
    function bodies(body: TextBody, of: readonly TenantTally[] = tenants): void {
      for (const tally of of) if (tally.bodies.has(body)) out.push({ body, tenant: tally.tenant });
    }
    function removalParts(): void {
      if (removals.length === 0) return;
      const count = removals.reduce((sum, tally) => sum + tally.removals, 0);
      out.push(`\n${paint('bold', 'members removed')} (${count} in ${plural(removals.length, 'tenant')}; tenant · contract · member):\n`);
      bodies('removals', removals);
    }
    if (!withBase) {
      removalParts();
      for (const tally of tenants) {
        out.push(renderPlanTextTenantHead(tally.tenant, tally, options));
        bodies('contracts', [tally]);
      }
      out.push(unknownText(paint, end.unknown));
      return out;
    }
    const own = tenants.reduce((sum, tally) => sum + tally.own, 0);
    const ownHeading = paint('bold', 'contracts this pull request changes');
    if (own === 0) out.push(`\n${ownHeading}: none, it changes no contract of the desired state\n`);
    else out.push(`\n${ownHeading} (${own}):\n${desiredShown === 0 ? '' : `${desiredNoteText(own, desiredShown, desiredOps)}\n`}`);
    bodies('own');
    removalParts();
    out.push(unmanagedText(paint, end.noLongerManaged ?? []));
    const others = tenants.filter((tally) => tally.other !== undefined);
    if (others.length > 0) {
      const count = others.reduce((sum, tally) => sum + tally.other!.contracts, 0);
      let counts = `\n${paint('bold', 'other contracts with changes')} (${count}): not changed by this pull request (drift, or not applied yet)\n`;
      for (const tally of others) counts += `  ${escapeForTerminal(tally.tenant)}: ${otherCountsText(tally.other!)}\n`;
      out.push(counts);
      for (const tally of others) {
        out.push(`\n${paint('bold', `tenant ${escapeForTerminal(tally.tenant)}`)}: ${plural(tally.other!.contracts, 'other contract')} with changes\n`);
        bodies('contracts', [tally]);
      }
    }
    const matching = tenants.reduce((sum, tally) => sum + tally.contracts - tally.shown, 0);
    if (matching > 0) out.push(`\n${matchingText(matching)}\n`);
    out.push(unknownText(paint, end.unknown));
    return out;
  }

  return { tenant, parts };
}

/** textPlan with its bodies in memory: the text plan of a plan held whole. */
export function textPlanInMemory(
  withBase: boolean,
  options: TextRenderOptions = {},
): { tenant(tenant: string): TextPlanTenant; text(end: TextPlanEnd): string } {
  const layout = textPlan(withBase, options);
  const bodies = new Map<string, string>();
  return {
    tenant(tenant) {
      return layout.tenant(tenant, (body, text) => {
        const key = `${body}\n${tenant}`;
        bodies.set(key, (bodies.get(key) ?? '') + text);
      });
    },
    text(end) {
      let text = '';
      for (const part of layout.parts(end)) text += typeof part === 'string' ? part : (bodies.get(`${part.body}\n${part.tenant}`) ?? '');
      return text;
    },
  };
}

/** The text plan of a plan document (a terminal, a job log, `show`). */
export function renderPlanText(plan: PlanDocument, options: TextRenderOptions = {}): string {
  const layout = textPlanInMemory(plan.source.base !== undefined, options);
  for (const { tenant, contracts } of plan.tenants) {
    const sink = layout.tenant(tenant);
    for (const contract of contracts) sink.contract(contract);
  }
  return layout.text({
    source: plan.source,
    summary: plan.summary,
    noLongerManaged: plan.noLongerManaged,
    findings: plan.findings,
    unknown: unknownCount(plan),
  });
}

/**
 * The text plan's first lines: the headline and, with a base, what the change touches. Reads only
 * the plan's source, summary and noLongerManaged (its tenants may be left out).
 */
function renderPlanTextHead(plan: Pick<PlanDocument, 'source' | 'summary' | 'noLongerManaged'>, options: TextRenderOptions = {}): string {
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

/** A tenant's first lines in the text plan of a plan without a base (its blank line before them included), from its counts. */
function renderPlanTextTenantHead(tenant: string, counts: Pick<TenantTally, 'contracts' | 'changed' | 'ops' | 'shown'>, options: TextRenderOptions): string {
  const paint = painter(options);
  if (counts.shown === 0) return `\n${paint('bold', `tenant ${tenant}`)}: no changes (${plural(counts.contracts, 'contract')})\n`;
  const unchanged = counts.contracts - counts.changed;
  return `\n${paint('bold', `tenant ${tenant}`)}: ${counts.changed} to update, ${unchanged} unchanged, ${plural(counts.ops, 'op')}\n`;
}

function where(file: string, line: number): string {
  return `${escapeForTerminal(file)}:${line}`;
}

/** `4711  ` and, in a section that mixes tenants (`tenant` given), `tenant acme  `. */
function named(paint: Paint, id: string, tenant: string | undefined): string {
  return `${paint('bold', escapeForTerminal(id))}  ${tenant === undefined ? '' : `tenant ${escapeForTerminal(tenant)}  `}`;
}

/** A contract's first line in the text plan, when it has ops; `desired`: its lines are what the pull request changed. */
function updateLine(paint: Paint, contract: Pick<PlanContract, 'id' | 'file' | 'line' | 'knownFrom'>, ops: number, tenant?: string, desired = false): string {
  const about = `${KNOWN_FROM_TEXT[contract.knownFrom]}, ${plural(ops, 'op')}${desired ? `; ${DESIRED_DIFF_TEXT}` : ''}`;
  return `  ${paint('yellow', '~')} ${named(paint, contract.id, tenant)}${where(contract.file, contract.line)}  ${paint('dim', `(${about})`)}\n`;
}

/** A contract of the pull request's own without ops. */
function noopLine(paint: Paint, contract: Pick<PlanContract, 'id' | 'file' | 'line'>, tenant?: string): string {
  return `  ${paint('dim', '=')} ${named(paint, contract.id, tenant)}${where(contract.file, contract.line)}  ${paint('dim', `(${ALREADY_MATCHES_TEXT})`)}\n`;
}

/** A change's line under its contract. */
function changeRow(paint: Paint, line: { readonly kind: ChangeKind; readonly text: string }): string {
  const { sign, style } = MARK[line.kind];
  const note = line.kind === 'member-change' ? paint('dim', `  ${MEMBER_CHANGE_NOTE}`) : '';
  return `      ${paint(style, `${sign} ${line.text}`)}${note}\n`;
}

/** What the pull request changed in a contract's desired YAML (base -> head), as the comment shows it. */
function desiredRows(paint: Paint, changes: readonly DesiredChange[]): string {
  let text = '';
  for (const change of changes) {
    const view = viewChange(change);
    if (change.unmanaged === true) text += `      ${paint('red', `- ${view.label}: ${view.before}`)}${paint('dim', `  ${UNMANAGED_NOTE}`)}\n`;
    else text += changeRow(paint, { kind: view.kind, text: changeText(view) });
  }
  return text;
}

/**
 * A contract's lines in the text plan; '' for a contract it does not list (no ops, and not touched
 * by the change). `tenant`: named on its first line, in a section that mixes tenants (the pull
 * request's own contracts), where one whose known state is unknown shows what the pull request
 * changed in its desired YAML.
 */
export function renderPlanTextContract(contract: PlanContractText, options: TextRenderOptions = {}, tenant?: string): string {
  // With a base, a touched contract is shown even without ops: the change is about it.
  if (contract.action !== 'update' && contract.touched !== true) return '';
  const paint = painter(options);
  if (contract.action === 'noop') return noopLine(paint, contract, tenant);
  const desired = desiredOf(contract);
  if (desired !== undefined) return `${updateLine(paint, contract, contract.ops.length, tenant, true)}${desiredRows(paint, desired)}`;
  let text = updateLine(paint, contract, contract.ops.length, tenant);
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

/** renderUnknownContractText, and the ops of the contract's plan. */
function unknownContractText(
  contract: UnknownTextContract,
  touched: boolean | undefined,
  options: TextRenderOptions,
  tenant?: string,
): { text: string; ops: number } {
  let changes = '';
  let ops = 0;
  const paint = painter(options);
  forEachUnknownOp(contract.fields, 'as-desired', (field, value) => {
    ops += 1;
    changes += changeRow(paint, isCollectionField(field) ? addedMemberLine(field, value) : addedLine(field, value));
  });
  if (ops === 0) return { text: touched === true ? noopLine(paint, contract, tenant) : '', ops };
  return { text: `${updateLine(paint, { id: contract.id, file: contract.file, line: contract.line, knownFrom: 'unknown' }, ops, tenant)}${changes}`, ops };
}

/**
 * renderPlanTextContract of planContract(contract) with nothing known, from the desired fields:
 * the same lines without the plan's ops and changes (a first plan's text, the most common).
 * `touched`: as the plan would mark it (only in a plan made with a base); such a contract is shown
 * so only without what the change did to its desired fields (planTenantContracts hands it on planned).
 */
export function renderUnknownContractText(
  contract: UnknownTextContract,
  touched: boolean | undefined,
  options: TextRenderOptions = {},
  tenant?: string,
): string {
  return unknownContractText(contract, touched, options, tenant).text;
}

/** The contracts a pull request no longer manages, after the members removed. */
function unmanagedText(paint: Paint, noLongerManaged: readonly PlanUnmanagedContract[]): string {
  if (noLongerManaged.length === 0) return '';
  let text = `\n${paint('bold', 'no longer managed')} (${NO_LONGER_MANAGED_TEXT}):\n`;
  for (const contract of noLongerManaged)
    text += `  ${paint('red', '-')} ${named(paint, contract.id, contract.tenant)}(was ${where(contract.file, contract.line)})\n`;
  return text;
}

/** The text plan's last lines: the note on unknown known state. */
function unknownText(paint: Paint, unknown: number): string {
  return unknown === 0 ? '' : `\n${paint('yellow', unknownNote(unknown))}\n`;
}
