/** What a notification says (docs/architecture.md section 5, "Notifications and telemetry"): data in, one message per channel kind out. */
import type { NotifyEvent } from '../config/types.ts';
import type { FieldAttribution } from '../drift/attribution.ts';
import type { StandingDenials } from '../drift/render-common.ts';

/** One field of a contract the notification is about; with `api.audit`, who changed it. */
export interface NotifyField {
  readonly field: string;
  /** Present for drift when the audit events were consulted (attributed, or unattributed with a reason). */
  readonly attribution?: FieldAttribution;
}

export interface NotifyContract {
  readonly id: string;
  /** Desired-state file and line of the ContractId key, when known. */
  readonly file?: string;
  readonly line?: number;
  readonly fields: readonly NotifyField[];
  /** apply-failed: why the contract failed; policy-denied: the finding's message. Never a secret (the run's messages are redacted). */
  readonly reason?: string;
}

/** The CI run that sent it, from the variables GitHub Actions or GitLab CI set. */
export interface CiRun {
  readonly provider: 'github' | 'gitlab';
  readonly url: string;
}

/** One event of one tenant: what every channel's message is built from. */
export interface Notification {
  readonly event: NotifyEvent;
  readonly tenant: string;
  readonly contracts: readonly NotifyContract[];
  /** The commit of the desired state (full id). */
  readonly commit?: string;
  /** The commit's page, when the repository's web address is known. */
  readonly commitUrl?: string;
  readonly run?: CiRun;
  /** ISO 8601: when the run found it. */
  readonly time: string;
  /** `notify test`: a sample, said so in the message. */
  readonly sample?: boolean;
  /**
   * drift: the policy rules whose findings stand in the run, so that `drift --fix` would send
   * nothing; policy-denied: the rules that denied the run. Absent when none.
   */
  readonly denials?: StandingDenials;
  /** policy-denied: the run a rule denied (`contract-sync apply`, `contract-sync drift --fix`), to run again once the rules hold. */
  readonly rerun?: string;
}

/** A message ready to post: its body (sent byte for byte as signed) and its headers. */
export interface OutgoingMessage {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}
