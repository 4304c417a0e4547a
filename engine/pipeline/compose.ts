/**
 * The tenant pipeline's compositions: the stages (scope and read are the run's, engine/run/input.ts;
 * then lock, learn, plan, check, confirm, send, record) in the order each run needs them.
 *
 *   applyTenants    lock ─► learn ─► plan ─► check ─► confirm ─► send ─► record     apply, drift --fix
 *   previewTenants           learn ─► plan ─► check ─► (shown)                       apply --dry-run,
 *                                                                                    plan --refresh, drift
 *
 * Every tenant is planned and checked before the first PATCH of any, so that `confirm` sees the
 * whole plan; then each tenant (all in parallel, none able to stop another) sends through its
 * lane, records each contract as soon as it is applied, and releases its lock as soon as its own
 * sending is done. A run that does not send composes neither lock, send nor record: it takes no
 * lock and writes nothing.
 */
import PQueue from 'p-queue';
import type { ContractOutcome } from '../apply/apply-contract.ts';
import { messageOf } from '../apply/failure.ts';
import { INTERRUPTED, type InterruptedCount } from '../apply/interrupted.ts';
import { indexPlan } from '../apply/reviewed-plan.ts';
import { RUN_REPORT_VERSION, runWarnings, summarise, type RunReport, type TenantReport } from '../apply/run-report.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { PlanDocument } from '../plan/types.ts';
import { withPlanFindings } from '../plan/policy-findings.ts';
import { checkTenant, judgeLocked } from './check.ts';
import { commitCheck, removalGuardCheck, reviewedPlanCheck, type Check } from './checks.ts';
import { confirmRun, previewOf } from './confirm.ts';
import { failedTenant, learnKnown, readRecord } from './learn.ts';
import { lockTenants, openLane } from './lock.ts';
import { planTenants } from './plan.ts';
import { RunProgress } from './progress.ts';
import { recordRun, recordUnchanged, reportTenant } from './record.ts';
import { markInFlight, sendTenant } from './send.ts';
import type { CheckedTenant, DesiredContract, LearntTenant, RunContext, TenantStart } from './tenant.ts';
import type { ApplyRunDeps, ApplyRunOptions, ApplyRunResult, PipelineOptions } from './types.ts';

/** Why the contracts of a run cancelled at its confirmation were not sent. */
const CANCELLED = 'not sent: the run was cancelled before sending';

/** A tenant the commit check refuses under its lock: its message is the tenant's error. */
class TenantRefused extends Error {
  readonly code = 'refused';
}

/**
 * The library's entry: `options.dryRun` chooses the composition (previewTenants or applyTenants);
 * the stages never see it.
 */
export function runApply(options: ApplyRunOptions, deps: ApplyRunDeps): Promise<ApplyRunResult> {
  const { dryRun, ...pipeline } = options;
  return dryRun ? previewApply(pipeline, deps) : applyTenants(pipeline, deps);
}

/** The run's checks, built-in ones first: the commit check, the saved-plan review, the removal guard, then the caller's. */
export function runChecks(options: PipelineOptions, reviewed: RunContext['reviewed'], canRead: boolean): Check[] {
  return [
    ...(options.checkUnderLock ? [commitCheck(options.checkUnderLock)] : []),
    ...(reviewed ? [reviewedPlanCheck(reviewed, canRead)] : []),
    ...(options.removals ? [removalGuardCheck(options.removals)] : []),
    ...(options.checks ?? []),
  ];
}

function runContext(options: PipelineOptions, deps: ApplyRunDeps): RunContext {
  const desired = new Map<string, Map<string, DesiredContract>>();
  for (const set of options.contractSets) {
    const byId = desired.get(set.tenant) ?? new Map<string, DesiredContract>();
    desired.set(set.tenant, byId);
    for (const contract of set.contracts) byId.set(contract.id, { fields: contract.fields, file: set.file, line: contract.line });
  }
  const reviewed = options.reviewed === undefined ? undefined : indexPlan(options.reviewed);
  const refresh = options.refresh && deps.api.canRead;
  const progress = new RunProgress(deps);
  if (refresh) progress.readsExpected([...desired.values()].reduce((sum, byId) => sum + byId.size, 0));
  return {
    options,
    store: deps.store,
    tokens: deps.tokens,
    ...(deps.readTokens ? { readTokens: deps.readTokens } : {}),
    api: deps.api,
    clock: deps.clock,
    random: deps.random,
    logger: deps.logger,
    ...(deps.signal ? { signal: deps.signal } : {}),
    inFlight: deps.inFlight ?? new PQueue({ concurrency: options.config.rate.maxInFlight }),
    progress,
    source: options.source,
    runId: options.runId,
    startedAt: new Date(deps.clock.now()).toISOString(),
    refresh,
    desired,
    ...(reviewed ? { reviewed } : {}),
    checks: runChecks(options, reviewed, deps.api.canRead),
  };
}

/** The run's tenants in the global lock order; a tenant of a saved plan with no desired state left still runs (its contracts are refused). */
function tenantNames(context: RunContext): string[] {
  return [...new Set([...context.desired.keys(), ...(context.reviewed?.keys() ?? [])])].sort();
}

/** Under the tenant's lock: its run record, the checks judged there, then its known state. Never rejects. */
async function learnUnderLock(context: RunContext, start: TenantStart): Promise<LearntTenant> {
  try {
    const recorded = await readRecord(context, start);
    const refusal = await judgeLocked(context, recorded);
    if (refusal !== undefined) throw new TenantRefused(refusal);
    return await learnKnown(context, recorded);
  } catch (error) {
    // Released now: another run may be waiting for this tenant while this run plans the others.
    await start.lock
      ?.release()
      .catch((failure: unknown) => context.logger.warn({ tenant: start.tenant, code: (failure as { code?: unknown }).code }, 'lock not released'));
    context.logger.info({ tenant: start.tenant, code: (error as { code?: unknown }).code }, 'tenant not applied');
    return failedTenant(start, new Map(), error);
  }
}

/** Learns without a lock (nothing is written): the known state only. Never rejects. */
async function learnUnlocked(context: RunContext, tenant: string): Promise<LearntTenant> {
  const start = { tenant, lane: openLane(context, tenant) };
  try {
    return await learnKnown(context, { ...start, known: new Map(), unreadable: new Map(), uncertain: new Map() });
  } catch (error) {
    // A run that does not send applies nothing: its command reports the tenant's problem itself.
    return failedTenant(start, new Map(), error);
  }
}

/** Lock, learn, plan, check, confirm, send, record: apply and drift --fix. */
export async function applyTenants(options: PipelineOptions, deps: ApplyRunDeps): Promise<ApplyRunResult> {
  const context = runContext(options, deps);
  const learnt = await lockTenants(context, tenantNames(context), (start) => learnUnderLock(context, start));
  const { plan, tenants } = planTenants(context, learnt);
  const checked = denyRun(await Promise.all(tenants.map((tenant) => checkTenant(context, tenant))));
  const preview = previewOf(withFindings(plan, checked), checked);
  context.progress.phase('confirm');
  const answer = await confirmRun(context, deps.confirm, preview);
  const halted = answer !== true;
  // Stopped before or at the question: interrupted; otherwise declined: cancelled.
  const haltReason = context.signal?.aborted === true ? INTERRUPTED : CANCELLED;
  if (!halted) {
    context.progress.sendsExpected(preview.sending.contracts);
    if (preview.sending.contracts > 0) context.progress.phase('send');
  }
  const reports = await Promise.all(checked.map((tenant) => sendAndRecord(context, tenant, haltReason, halted)));
  if (answer instanceof Error) throw answer;
  const report = runReport(context, deps, reports, preview.findings, false);
  if (context.signal?.aborted === true) return { plan: preview.plan, report, interrupted: interruptedCount(report, context.progress.patchesSent) };
  return { plan: preview.plan, report, ...(halted ? { cancelled: true as const } : {}) };
}

/**
 * Why nothing (more) is sent for a tenant, if anything stops it before sending (it could not start,
 * a check refused it, the run was halted at its confirmation), and what its contracts not sent say.
 */
function endingOf(tenant: CheckedTenant, haltReason: string, halted: boolean): { error: string | undefined; notSent: string } {
  const error = tenant.error ?? tenant.refused?.reason ?? (halted ? haltReason : undefined);
  if (tenant.error === INTERRUPTED) return { error, notSent: INTERRUPTED };
  if (tenant.error !== undefined) return { error, notSent: `not sent: tenant ${tenant.tenant} could not start` };
  return { error, notSent: tenant.refused?.notSent ?? haltReason };
}

/** Send, then record; every lock released and every lane closed whatever happens. */
async function sendAndRecord(context: RunContext, tenant: CheckedTenant, haltReason: string, halted: boolean): Promise<TenantReport> {
  // Filled as contracts finish: a run record that cannot be written afterwards leaves them reported as they ended.
  const outcomes = new Map<string, ContractOutcome>();
  let { error, notSent } = endingOf(tenant, haltReason, halted);
  try {
    if (error === undefined) {
      // No PATCH is queued before the token has been checked; a tenant with nothing to send needs none.
      if (tenant.send.length + tenant.work.settle.length > 0) await context.tokens.get(tenant.tenant);
      await recordUnchanged(context, tenant);
      await markInFlight(context, tenant);
      const sent = await sendTenant(context, tenant, outcomes);
      await recordRun(context, tenant, sent);
    }
  } catch (failure) {
    error = messageOf(failure);
    notSent = `not sent: ${error}`;
    context.logger.info({ tenant: tenant.tenant, code: (failure as { code?: unknown }).code }, 'tenant not applied');
  } finally {
    // Every request of the tenant has finished: no pause of its lane may outlive the run.
    tenant.lane.close();
    await tenant.lock?.release();
  }
  return reportTenant(tenant, outcomes, { ...(error === undefined ? {} : { error }), notSent, stopped: context.signal?.aborted === true, previewed: false });
}

/** Learn, plan, check, shown to `confirm` (which is not asked): plan --refresh, drift. No lock, nothing sent or written. */
export function previewTenants(options: PipelineOptions, deps: ApplyRunDeps): Promise<ApplyRunResult> {
  // A deny is among the findings; each tenant's outcome is what was read and compared.
  return previewRun(options, deps, (tenants) => [...tenants]);
}

/**
 * previewTenants for apply --dry-run, which says what the apply would do: the checked
 * tenants are judged together as the apply judges them (a deny anywhere leaves every tenant unsent).
 */
export function previewApply(options: PipelineOptions, deps: ApplyRunDeps): Promise<ApplyRunResult> {
  return previewRun(options, deps, denyRun);
}

/** previewTenants and previewApply: `whole` judges the checked tenants together. */
async function previewRun(
  options: PipelineOptions,
  deps: ApplyRunDeps,
  whole: (tenants: readonly CheckedTenant[]) => CheckedTenant[],
): Promise<ApplyRunResult> {
  const context = runContext(options, deps);
  const learnt = await Promise.all(tenantNames(context).map((tenant) => learnUnlocked(context, tenant)));
  const { plan, tenants } = planTenants(context, learnt);
  const checked = whole(await Promise.all(tenants.map((tenant) => checkTenant(context, tenant))));
  const preview = previewOf(withFindings(plan, checked), checked);
  const answer = await confirmRun(context, deps.confirm, preview);
  const stopped = context.signal?.aborted === true;
  const halt = answer === true ? undefined : stopped ? INTERRUPTED : CANCELLED;
  const reports = checked.map((tenant) => {
    tenant.lane.close();
    const { error, notSent } = endingOf(tenant, stopped ? INTERRUPTED : CANCELLED, halt !== undefined);
    return reportTenant(tenant, new Map(), { ...(error === undefined ? {} : { error }), notSent, stopped, previewed: true });
  });
  if (answer instanceof Error) throw answer;
  return { plan: preview.plan, report: runReport(context, deps, reports, preview.findings, true), ...(halt === undefined ? {} : { cancelled: true as const }) };
}

/**
 * A run some check denies as a whole (`denies: 'run'`, a policy rule's deny) sends nothing: every
 * tenant that could start is refused, naming the first denial and how many there are.
 */
function denyRun(tenants: readonly CheckedTenant[]): CheckedTenant[] {
  const denials = tenants.flatMap((tenant) => tenant.runDenials);
  const [first] = denials;
  if (first === undefined) return [...tenants];
  const where = first.contractId === undefined ? first.tenant : `${first.tenant}/${first.contractId}`;
  const more = denials.length > 1 ? ` and ${denials.length - 1} more (see the findings)` : '';
  const reason = `not applied: ${first.check} denies ${where}: ${first.message}${more}; nothing sent in this run`;
  return tenants.map((tenant) =>
    tenant.error !== undefined || tenant.refused !== undefined
      ? tenant
      : { ...tenant, refused: { check: first.check, reason, notSent: `not sent: denied by ${first.check}` } },
  );
}

/** The plan with what the checks found that no outcome shows (absent when nothing, so that a plan without checks is as it was). */
function withFindings(plan: PlanDocument, tenants: readonly CheckedTenant[]): PlanDocument {
  return withPlanFindings(
    plan,
    tenants.flatMap((tenant) => tenant.shownFindings),
  );
}

function runReport(context: RunContext, deps: ApplyRunDeps, tenants: readonly TenantReport[], findings: readonly Finding[], dryRun: boolean): RunReport {
  return {
    version: RUN_REPORT_VERSION,
    runId: context.runId,
    startedAt: context.startedAt,
    finishedAt: new Date(context.clock.now()).toISOString(),
    dryRun,
    source: context.source,
    tenants,
    ...runWarnings(context.tokens, deps.readTokens),
    ...(findings.length === 0 ? {} : { findings }),
    summary: summarise(tenants),
  };
}

/**
 * An interrupted run's counts: contracts not sent are those reported with the interruption's
 * reason (a tenant whose lock was not waited for out counts every contract it declares, as a tenant
 * that could not start does).
 */
function interruptedCount(report: RunReport, sent: number): InterruptedCount {
  const notSent = report.tenants.reduce(
    (sum, tenant) => sum + tenant.failures.filter((failure) => failure.outcome === 'skipped' && failure.reason === INTERRUPTED).length,
    0,
  );
  return { sent, notSent };
}
