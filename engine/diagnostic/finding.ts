/**
 * What a check says of a tenant's run (engine/pipeline/checks.ts): the commit check under the
 * lock, the saved-plan review, the removal guard and the policy rules all speak in findings, so
 * that every output renders them with one renderer per format.
 *
 * - `deny`: the tenant's run is refused (nothing is sent for it); validate and plan fail.
 * - `warn`: shown everywhere, changes no outcome and no exit code.
 * - `override`: a deny that an apply may lift by naming the check (`--override-policy`), recorded.
 */
export type FindingAction = 'deny' | 'warn' | 'override';

export interface Finding {
  /** The check that found it: a built-in check's name (`commit`, `reviewed-plan`, `removal-guard`) or a policy rule's. */
  readonly check: string;
  readonly action: FindingAction;
  readonly tenant: string;
  /** The contract it is about; absent for a finding of the whole tenant. */
  readonly contractId?: string;
  /** Where the contract is declared, when it is declared. */
  readonly file?: string;
  readonly line?: number;
  readonly message: string;
  /** A policy exception that matches it (policyExceptions in the config); absent for every other finding. */
  readonly exception?: FindingException;
  /** An `override` finding lifted for this run (`--override-policy NAME --reason TEXT`): who lifted it, and why. */
  readonly overridden?: FindingOverride;
}

export interface FindingOverride {
  readonly reason: string;
  /** The CI's user (GITHUB_ACTOR, GITLAB_USER_LOGIN), else the OS user. */
  readonly by: string;
}

/**
 * `excepted`: the exception has not expired; the finding is shown and does not fail the run.
 * `expired`: it has; the finding is shown with it and counts as if there were none.
 */
export interface FindingException {
  readonly state: 'excepted' | 'expired';
  readonly owner: string;
  readonly reason: string;
  readonly ticket?: string;
  /** `YYYY-MM-DD` (UTC). */
  readonly expires: string;
}

/** Whether a finding decides the run: every finding but one an unexpired exception covers or an override lifted. */
export function findingCounts(finding: Finding): boolean {
  return finding.exception?.state !== 'excepted' && finding.overridden === undefined;
}
