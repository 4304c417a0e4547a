import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import type { ContractFields } from '../model/types.ts';

/** One contract as declared in a desired-state file. */
export interface DesiredContract {
  readonly id: string;
  /** Position of its ContractId key, 1-based. */
  readonly line: number;
  readonly column: number;
  readonly fields: ContractFields;
}

/** The contracts one file declares for its tenant. */
export interface ContractSet {
  readonly tenant: string;
  /** Repository-relative, `/`-separated. */
  readonly file: string;
  readonly contracts: readonly DesiredContract[];
}

/** A desired-state file as read from the working tree or a git ref. */
export interface DesiredFile {
  readonly path: string;
  readonly content: Uint8Array | string;
  /**
   * A path the patterns select that is not read: what it is (`a symbolic link`, `a FIFO (named
   * pipe)`). Its content is empty; parsing reports it as a warning naming the file.
   */
  readonly skipped?: string;
}

/**
 * Desired-state files listed, their contents read when asked: a run one tenant at a time reads a
 * tenant's files when it gets to that tenant, and lets them go after, instead of holding every
 * file's content from the start (engine/desired/by-tenant.ts).
 */
export interface DesiredFileList {
  /** Every selected path. */
  readonly paths: readonly string[];
  /** The files at `paths` (some of this list's paths), in that order. */
  read(paths: readonly string[]): Promise<DesiredFile[]>;
}

export interface DesiredStateResult {
  /** Only what is valid; a contract with an error is left out, and `errors` says why. */
  readonly contractSets: ContractSet[];
  readonly errors: Diagnostic[];
  readonly warnings: Diagnostic[];
}
