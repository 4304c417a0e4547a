/**
 * What a run reports besides its plan or drift report (plan/ and drift/ render those), as text:
 * the targeting note, the preview before the first PATCH, the question asked then and what is said
 * again above it, a shared run's events, an interrupted run's last line. Pure: the commands
 * (engine/cli/) choose where each goes and write it.
 */
import type { InterruptedCount } from '../apply/interrupted.ts';
import { describeScope } from '../apply/incremental.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import type { SendPreview } from '../pipeline/index.ts';
import type { PlanDocument } from '../plan/types.ts';
import { tenantSummary } from '../plan/render-common.ts';
import { renderPlanText } from '../plan/render-text.ts';
import { plural } from '../text/plural.ts';
import type { ApplyPreview, SharedRunEvent } from './types.ts';

/**
 * Said before a targeted run's plan or drift report, like Terraform's targeting warning (a JSON
 * document stays one document: the command says `description` on stderr instead).
 */
export function renderTargetedNote(description: string, format: 'text' | 'markdown', notDone: 'planned' | 'checked'): string {
  return format === 'markdown'
    ? `> **${description}** Contracts not targeted were not ${notDone}.\n\n`
    : `${description} Contracts not targeted were not ${notDone}.\n\n`;
}

/** Contracts named one by one under "Not planned:"; the rest are counted. */
const NOT_PLANNED_SHOWN = 20;

/**
 * The plan of a preview, its headline counting the contracts whose read failed (not in the plan: it
 * must not say "No changes" then), and those contracts listed under it, each with why: the headline
 * points there, and the preview stands alone (a run that stops before its report, e.g. when its
 * state store goes away, prints no Failures section).
 */
function previewPlanText(plan: PlanDocument, notPlanned: SendPreview['unreadable'], color: boolean): string {
  const notOnService = notPlanned.filter(({ result }) => result.outcome === 'not-on-service').length;
  return renderPlanText(plan, { color, notPlanned: { count: notPlanned.length, notOnService } }) + notPlannedText(notPlanned);
}

function notPlannedText(notPlanned: SendPreview['unreadable']): string {
  if (notPlanned.length === 0) return '';
  const lines = ['', 'Not planned:'];
  for (const { tenant, result } of notPlanned.slice(0, NOT_PLANNED_SHOWN)) {
    const status = result.outcome === 'not-on-service' ? 'not on the service' : result.status === null ? result.outcome : String(result.status);
    lines.push(
      `  ${escapeForTerminal(tenant)} ${escapeForTerminal(result.contractId)} (${escapeForTerminal(result.file)}:${result.line}) ${status}: ${escapeForTerminal(result.reason ?? result.outcome)}`,
    );
  }
  const more = notPlanned.length - NOT_PLANNED_SHOWN;
  if (more > 0) lines.push(`  and ${plural(more, 'contract')} more`);
  return `${lines.join('\n')}\n`;
}

/** apply, before the first PATCH: what was selected (`head`), then the plan (with a saved plan, what was reviewed). */
export function renderApplyPreview(
  preview: ApplyPreview,
  { dryRun, color }: { readonly dryRun: boolean; readonly color: boolean },
): { head: string; plan: string } {
  let head = '';
  const { targeting } = preview;
  if (targeting) {
    const keeps =
      !dryRun && targeting.narrowed.size > 0
        ? ' Contracts not targeted were not planned; the run record keeps its last applied commit.'
        : ' Contracts not targeted were not planned.';
    head += `${targeting.description}${keeps}\n`;
  }
  for (const { scope, contracts } of preview.scopes) head += `${describeScope(scope, contracts)}\n`;
  // Contracts whose read failed are not in the plan: its headline must not say "No changes" then.
  const listed = new Set(preview.shown.tenants.flatMap((tenant) => tenant.contracts.map((contract) => `${tenant.tenant}/${contract.id}`)));
  const notPlanned = preview.unreadable.filter(({ tenant, result }) => !listed.has(`${tenant}/${result.contractId}`));
  return { head, plan: previewPlanText(preview.shown, notPlanned, color) };
}

/** drift --fix, before the question: the plan of the corrections. */
export function renderFixPreview(preview: SendPreview, color: boolean): string {
  return previewPlanText(preview.plan, preview.unreadable, color);
}

/** What a run would send: the question counts it. */
export interface Sending {
  readonly tenants: number;
  readonly contracts: number;
  readonly ops: number;
}

/** A plan as shown before the question: how many lines it took, and its per-tenant summary. */
export interface ShownPlan {
  readonly lines: number;
  readonly summary: string;
}

/** `text`, the plan of `plan` as shown before the question. */
export function shownPlan(text: string, plan: PlanDocument): ShownPlan {
  return { lines: text.split('\n').length - 1, summary: tenantSummary(plan) };
}

/**
 * Said again just above the question: the per-tenant summary when the plan is taller than the
 * terminal (its top scrolled away), or when it went to a file or a pipe (then: where it is).
 */
export function beforeQuestion(shown: ShownPlan | undefined, stdout: { readonly isTTY?: boolean; readonly rows?: number }): string | undefined {
  if (shown === undefined) return undefined;
  if (stdout.isTTY !== true) return `${shown.summary}The whole plan was written to standard output (not this terminal).\n`;
  return stdout.rows !== undefined && shown.lines >= stdout.rows ? `${shown.summary}The whole plan is above.\n` : undefined;
}

/** `Apply 3 ops to 2 contracts in 1 tenant? Only 'yes' is accepted: ` */
export function applyQuestion(sending: Sending): string {
  return `Apply ${plural(sending.ops, 'op')} to ${plural(sending.contracts, 'contract')} in ${plural(sending.tenants, 'tenant')}? Only 'yes' is accepted: `;
}

/** `Correct 3 ops on 2 contracts in 1 tenant? Only 'yes' is accepted: ` */
export function fixQuestion(sending: Sending): string {
  return `Correct ${plural(sending.ops, 'op')} on ${plural(sending.contracts, 'contract')} in ${plural(sending.tenants, 'tenant')}? Only 'yes' is accepted: `;
}

/** E.g. "shared run 5f0c…: worker ci-2 joined (40 tenants, 3 done); …". */
export function describeSharedEvent(event: SharedRunEvent): string {
  if (event.kind === 'joined') {
    const validated =
      event.validated === 'here'
        ? 'it validated the whole desired state'
        : 'a worker that joined before validated the whole desired state; this one reads only the tenants it takes';
    return `shared run ${event.runId}: worker ${event.worker} joined (${event.tenants} tenant${event.tenants === 1 ? '' : 's'}, ${event.done} done); ${validated}`;
  }
  if (event.kind === 'lost' && event.error !== undefined)
    return `worker ${event.worker} lost its claim of tenant ${event.tenant} (its database session ended) after running it; its run ended with: ${escapeForTerminal(event.error)}, so requests in flight may not be recorded: the next run settles them and counts those that landed; another worker of the run marks the tenant done`;
  if (event.kind === 'lost')
    return `worker ${event.worker} lost its claim of tenant ${event.tenant} (its database session ended) after running it: what it applied is recorded and counted in the run's history; another worker of the run marks the tenant done`;
  const over = event.takenOverFrom.length === 0 ? '' : `; taken over from worker ${event.takenOverFrom.join(', then ')}, which did not finish it`;
  return `worker ${event.worker} took tenant ${event.tenant} (${event.size} contract${event.size === 1 ? '' : 's'} to plan${over})`;
}

/** `Interrupted: 500 contracts sent, 1500 not sent; run apply again to finish` */
export function interruptedLine(count: InterruptedCount, command: 'apply' | 'drift --fix'): string {
  return `Interrupted: ${plural(count.sent, 'contract')} sent, ${count.notSent} not sent; run ${command} again to finish`;
}
