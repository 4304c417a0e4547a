/** What the text and markdown renderings of a drift report share: causes, values and the summary line. Pure. */
import { getField, type FieldSpec } from '../model/fields.ts';
import type { Finding } from '../diagnostic/finding.ts';
import { formatFieldValue, plural } from '../plan/render-common.ts';
import { findingFails } from '../policy/finding-diagnostic.ts';
import type { DriftCause, DriftContract, DriftError, DriftItem, DriftReport } from './types.ts';

export const CAUSE_TEXT: Readonly<Record<DriftCause, string>> = {
  'changed-outside-git': 'changed outside git',
  'not-yet-applied': 'not yet applied',
  'never-applied': 'never applied',
};

/** A side without a value: a member missing live, or one the desired state does not keep. */
export const ABSENT = '(absent)';

/** As the plan shows a value, with ABSENT for no value. */
function formatDrifted(field: FieldSpec, value: unknown): string {
  return value === null || value === undefined ? ABSENT : formatFieldValue(field, value);
}

export interface DriftItemView {
  /** `Name`, or for a member `Company (Id 12, RelationType "Supplier")`. */
  readonly label: string;
  readonly live: string;
  readonly desired: string;
  readonly cause: string;
}

export function viewDriftItem(item: DriftItem): DriftItemView {
  const field = getField(item.field) as FieldSpec;
  return {
    label: item.member === undefined ? item.field : `${item.field} (${item.member})`,
    live: formatDrifted(field, item.live),
    desired: formatDrifted(field, item.desired),
    cause: CAUSE_TEXT[item.cause],
  };
}

/** `fixed`, or why not, e.g. `not fixed (409): ...`. */
export function fixText(contract: DriftContract): string | undefined {
  const { fix } = contract;
  if (fix === undefined) return undefined;
  if (fix.outcome === 'applied') return 'fixed';
  const status = fix.status === null ? fix.outcome : String(fix.status);
  return `not fixed (${status})${fix.reason === undefined ? '' : `: ${fix.reason}`}`;
}

/**
 * The one-line verdict, e.g. `2 contracts drifted (3 differences): 2 changed outside git, 1 not
 * yet applied.` or `No drift: all 4 contracts match the desired state.`
 */
export function driftSummaryLine(report: DriftReport): string {
  const { summary } = report;
  const missing = report.tenants.reduce((sum, tenant) => sum + tenant.errors.filter((error) => error.notOnService === true).length, 0);
  const others = summary.errors - missing;
  const problems = [...(missing > 0 ? [`${plural(missing, 'contract')} not on the service`] : []), ...(others > 0 ? [plural(others, 'error')] : [])].join(
    ' and ',
  );
  if (summary.drifted === 0) {
    if (summary.errors === 0 && summary.contracts === 0) return 'No drift: no contract to check.';
    if (summary.errors === 0)
      return `No drift: ${summary.contracts === 1 ? 'the contract matches' : `all ${summary.contracts} contracts match`} the desired state.`;
    if (missing === 0) return `No drift found, but ${plural(summary.errors, 'error')} kept contracts from being checked (listed under "Not checked").`;
    return `No drift found in the contracts checked, but ${problems} (listed under "Not checked").`;
  }
  const errors = summary.errors === 0 ? '' : ` ${problems} (listed under "Not checked").`;
  const never = summary.neverApplied > 0 ? `, ${summary.neverApplied} never applied` : '';
  const drifted = `${plural(summary.drifted, 'contract')} drifted (${plural(summary.changes, 'difference')})`;
  const fixed =
    summary.fixed === undefined
      ? ''
      : summary.fixed === summary.drifted
        ? summary.drifted === 1
          ? ' Fixed.'
          : ` All ${summary.drifted} fixed.`
        : ` Fixed ${summary.fixed} of ${summary.drifted}.`;
  return `${drifted}: ${summary.changedOutsideGit} changed outside git, ${summary.notYetApplied} not yet applied${never}.${fixed}${errors}`;
}

/** How a contract that could not be checked is listed: `not on the service`, the status, or `no answer`. */
export function errorStatusText(error: DriftError): string {
  if (error.notOnService === true) return 'not on the service';
  return error.status === null ? 'no answer' : String(error.status);
}

/**
 * What to run next, by what the report found; fixed text. `code` sets a command apart: inline code
 * in markdown, as it is in a terminal.
 */
export function nextStep(report: DriftReport, code: (text: string) => string = (text) => `\`${text}\``): string {
  const { summary } = report;
  const steps: string[] = [];
  const keep =
    'To keep a change made on the service instead, change the YAML to match it in a pull request ' +
    `(${code('contract-sync import --tenant T --id ID')} writes a contract as the service holds it).`;
  const denials = standingDenials(report.findings ?? []);
  if (summary.drifted > 0 && denials.rules.length > 0 && (!report.fix || (summary.fixFailed ?? 0) > 0)) {
    steps.push(`${policyStandsStep(denials, code)} ${keep}`);
  } else if (summary.drifted > 0 && !report.fix) {
    steps.push(`To make the service match git again, run ${code('contract-sync drift --fix')} (or merge a change to the YAML and let apply run). ${keep}`);
  } else if (summary.drifted > 0 && (summary.fixFailed ?? 0) > 0) {
    steps.push(`Each contract not fixed says why: once that is dealt with, run ${code('contract-sync drift --fix')} again.`);
  }
  if (summary.errors > 0) {
    steps.push(
      'The contracts under "Not checked" were not compared: deal with what each line says (a contract not on the service: ' +
        `remove it from the YAML, or correct its ContractId), then run ${code('contract-sync drift')} again.`,
    );
  }
  if (steps.length === 0) return 'Nothing to run: the service matches git.';
  return steps.join(' ');
}

/** The policy rules whose findings stand (a deny, or an override not lifted, that no unexpired exception covers), in order. */
export interface StandingDenials {
  readonly rules: readonly string[];
  /** Some of them are `override` rules, which a run may lift. */
  readonly overridable: boolean;
}

/** What of a run's findings (policy rules' only: the report's findings are theirs) would stop `drift --fix` from sending. */
export function standingDenials(findings: readonly Finding[]): StandingDenials {
  const failing = findings.filter(findingFails);
  return { rules: [...new Set(failing.map((finding) => finding.check))], overridable: failing.some((finding) => finding.action === 'override') };
}

/**
 * The next step while policy findings stand: the run that sends (`drift --fix`, or `apply` after a
 * run a rule denied) would send nothing in the whole run (engine/pipeline/checks.ts policyCheck),
 * so it is not the step; fixing or excepting the finding is.
 */
export function policyStandsStep(
  denials: StandingDenials,
  code: (text: string) => string = (text) => `\`${text}\``,
  command = 'contract-sync drift --fix',
): string {
  const { rules } = denials;
  const named = rules.length === 1 ? `Policy rule ${rules[0]} denies` : `Policy rules ${rules.join(', ')} deny`;
  const lift = denials.overridable
    ? ` A rule whose action is override can instead be lifted for one run: ${code(`${command} --override-policy NAME --reason TEXT`)}.`
    : '';
  return (
    `${named}, so ${code(command)} would send nothing. ` +
    'Change the contract in git so that the rule holds, or add an exception for the finding under policyExceptions in the config ' +
    `(an owner, a reason, an expiry date), then run ${code(command)}.${lift}`
  );
}
