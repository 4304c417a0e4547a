/**
 * The rotation overlap at run time (docs/architecture.md section 7): a token obtained with
 * previousClientSecret after the 30-day overlap ended (or with no secretRotatedAt to tell when it
 * ends) goes on working while the service accepts it, but the run says so, as data: the run report
 * carries the warning, the CLI prints it, the logger logs it.
 */
import { overlapEndsAt, ROTATION_OVERLAP_DAYS } from '../config/secret-age.ts';

export interface RunWarning {
  readonly code: 'secret-overlap-ended';
  readonly tenant: string;
  /** `YYYY-MM-DD`, the last day of the overlap; null when no secretRotatedAt is configured. */
  readonly overlapEndedOn: string | null;
  readonly message: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The warning for a token of `tenant` obtained with previousClientSecret at `now`; undefined while
 * the overlap lasts.
 */
export function previousSecretWarning(tenant: string, rotatedAt: string | undefined, now: number): RunWarning | undefined {
  const advice = 'register the new secret as clientSecret and remove previousClientSecret; the service may refuse the old secret at any time';
  if (rotatedAt === undefined) {
    return {
      code: 'secret-overlap-ended',
      tenant,
      overlapEndedOn: null,
      message: `tenant ${tenant}: the token was obtained with previousClientSecret, and no secretRotatedAt is configured, so the end of the ${ROTATION_OVERLAP_DAYS}-day rotation overlap is unknown: ${advice}`,
    };
  }
  const endsAt = overlapEndsAt(rotatedAt);
  if (endsAt === undefined || now <= endsAt) return undefined;
  const endedOn = new Date(endsAt - DAY_MS).toISOString().slice(0, 10);
  return {
    code: 'secret-overlap-ended',
    tenant,
    overlapEndedOn: endedOn,
    message: `tenant ${tenant}: the token was obtained with previousClientSecret after the ${ROTATION_OVERLAP_DAYS}-day rotation overlap ended on ${endedOn} (secretRotatedAt ${rotatedAt}): ${advice}`,
  };
}
