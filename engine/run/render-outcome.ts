/**
 * What apply, drift and import say once their run is over, in the order said: text for stdout
 * (the plan, the report, the summary) and for stderr (warnings, why nothing was done), and where
 * the JSON report goes; and whether the run failed. Pure: the command writes it (the report into
 * its --report file) and turns `exit` into its exit code.
 */
import { renderRunSummary } from '../apply/run-report.ts';
import { formatDiagnostics } from '../diagnostic/diagnostic-format.ts';
import { driftFailed, driftRemains } from '../drift/create-report.ts';
import { renderDriftJson } from '../drift/render-json.ts';
import { renderDriftMarkdown } from '../drift/render-markdown.ts';
import { renderDriftText } from '../drift/render-text.ts';
import { failingSentence } from '../plan/render-findings.ts';
import { plural } from '../text/plural.ts';
import type { ApplyRunOutcome } from './apply.ts';
import type { DriftRunOutcome } from './drift.ts';
import type { ImportRunOutcome } from './import.ts';
import { renderDesiredProblems, renderUnread } from './render-problems.ts';
import { interruptedLine, renderTargetedNote } from './render-run.ts';
import type { RunInvalid, RunRefused, RunUnread } from './types.ts';
import { packageVersion } from './version.ts';

/** One thing said: text on stdout or stderr, or the JSON report (`report`), written where --report names. */
export interface Said {
  readonly on: 'stdout' | 'stderr' | 'report';
  readonly text: string;
}

/** A run's outcome as said; `exit`: `error` when anything failed, `changes` for drift --detailed-exitcode. */
export interface OutcomeView {
  readonly said: readonly Said[];
  readonly exit: 'ok' | 'error' | 'changes';
}

/** A usage mistake (`bad-request`) is the command's to say, as every usage error. */
type WithoutUsage<T> = Exclude<T, { readonly kind: 'bad-request' }>;

function out(text: string): Said {
  return { on: 'stdout', text };
}

function err(text: string): Said {
  return { on: 'stderr', text };
}

/** A run that did nothing (its input unread, the desired state invalid, refused as a whole): why, on stderr. */
function notRun(command: string, outcome: string, result: WithoutUsage<RunUnread> | RunInvalid | RunRefused): OutcomeView {
  if (result.kind === 'invalid-desired') return { said: [err(renderDesiredProblems(command, outcome, result.problems).text)], exit: 'error' };
  return { said: [err(result.kind === 'refused' ? `contract-sync ${command}: ${result.message}\n` : renderUnread(command, outcome, result))], exit: 'error' };
}

const INCREMENTAL_NOTE =
  'Incremental run: contracts unchanged since the last applied commit were not planned; contract-sync drift (or apply --full) checks them against the service.\n';

/** apply's outcome; `report`: the JSON run report is wanted (--report). */
export function renderApplyOutcome(result: WithoutUsage<ApplyRunOutcome>, report: boolean): OutcomeView {
  if (result.kind !== 'applied' && result.kind !== 'empty-shard') return notRun('apply', 'nothing applied', result);
  if (result.kind === 'empty-shard') return { said: [], exit: 'ok' };
  const said = result.warnings.map((warning) => err(`contract-sync apply: ${warning}`));
  const json: Said[] = report ? [{ on: 'report', text: `${JSON.stringify(result.report, null, 2)}\n` }] : [];
  if (result.interrupted) return { said: [...said, ...json, out(`\n${interruptedLine(result.interrupted, 'apply')}\n`)], exit: 'error' };
  if (result.cancelled) return { said: [...said, out('\nApply cancelled.\n')], exit: 'error' };
  const run = result.report;
  said.push(out(`\n${renderRunSummary(run)}`), ...(result.incremental ? [out(INCREMENTAL_NOTE)] : []), ...json);
  const failed = result.behind.length > 0 || run.summary.failed > 0 || run.tenants.some((tenant) => tenant.error !== undefined);
  // A dry run fails where the apply would: a check's deny (a policy rule's) stops the real run.
  const denied = run.dryRun ? failingSentence(run.findings ?? []) : undefined;
  if (denied !== undefined) said.push(err(`contract-sync apply: ${denied}\n`));
  return { said, exit: failed || denied !== undefined ? 'error' : 'ok' };
}

export interface DriftOutcomeFlags {
  readonly format: 'text' | 'markdown' | 'json';
  readonly fix: boolean;
  readonly detailedExitcode: boolean;
  /** The JSON drift report is wanted (--report). */
  readonly report: boolean;
  readonly color: boolean;
  /** The run was stopped by a signal (before it could say so itself). */
  readonly aborted: boolean;
}

/** drift's outcome: the drift report in its format, with --fix the run summary of what it sent. */
export function renderDriftOutcome(result: WithoutUsage<DriftRunOutcome>, flags: DriftOutcomeFlags): OutcomeView {
  const { format, fix } = flags;
  if (result.kind !== 'checked') return notRun('drift', fix ? 'nothing read or fixed' : 'nothing read', result);
  const said = result.warnings.map((warning) => err(`contract-sync drift: ${warning}`));
  // Stopped by a signal: a report of part of the contracts would read as no drift for the others.
  if (result.interrupted !== undefined || flags.aborted) {
    const line = result.interrupted
      ? interruptedLine(result.interrupted, 'drift --fix')
      : 'Interrupted: not every contract was read; no report written; run drift again';
    return { said: [...said, out(`\n${line}\n`)], exit: 'error' };
  }
  if (result.cancelled) return { said: [...said, out('\nFix cancelled.\n')], exit: 'error' };
  const { drift } = result;
  // Said first, like Terraform's targeting warning; json stays one document on stdout.
  const targeted = result.targeting?.description;
  if (targeted !== undefined) said.push(format === 'json' ? err(`contract-sync drift: ${targeted}\n`) : out(renderTargetedNote(targeted, format, 'checked')));
  const json = format === 'json' || flags.report ? renderDriftJson(drift) : '';
  said.push(
    out(
      format === 'json'
        ? json
        : format === 'markdown'
          ? renderDriftMarkdown(drift, { version: packageVersion() })
          : renderDriftText(drift, { color: flags.color }),
    ),
  );
  // The run summary says what the fix sent (the findings are in the drift report above); markdown and json carry the same per contract, and json stays one document.
  if (fix && format === 'text') said.push(out(`\n${renderRunSummary({ ...result.run, findings: [] })}`));
  if (flags.report) said.push({ on: 'report', text: json });
  const denied = failingSentence(drift.findings ?? []);
  if (denied !== undefined) said.push(err(`contract-sync drift: ${denied}\n`));
  // An error (a deny included) is 1 before drift's 2, as Terraform's plan -detailed-exitcode.
  return { said, exit: driftFailed(drift) ? 'error' : flags.detailedExitcode && driftRemains(drift) ? 'changes' : 'ok' };
}

/** import's outcome: the file on stdout (or where it was written), warnings and why nothing was imported on stderr. */
export function renderImportOutcome(result: WithoutUsage<ImportRunOutcome>, request: { readonly tenant: string; readonly ids: number }): OutcomeView {
  if (result.kind === 'git-error') return { said: [err(`contract-sync import: ${result.message}\n`)], exit: 'error' };
  if (result.kind === 'invalid-config') {
    return { said: [err(formatDiagnostics(result.diagnostics, 'text')), err('contract-sync import: invalid config: nothing imported\n')], exit: 'error' };
  }
  const said = result.warnings.map((warning) => err(`contract-sync import: ${warning}\n`));
  if (result.kind === 'refused') {
    const detail = result.detail === undefined ? [] : [err(result.detail.text ?? formatDiagnostics(result.detail.diagnostics, 'text'))];
    return { said: [...said, ...detail, err(`contract-sync import: ${result.message}\n`)], exit: 'error' };
  }
  said.push(out(result.text ?? `Imported ${plural(request.ids, 'contract')} of tenant ${request.tenant} into ${result.written}.\n`));
  return { said, exit: 'ok' };
}
