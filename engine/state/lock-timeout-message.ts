/** The message a run prints when another run kept a tenant's lock for longer than it would wait. */
import { escapeForTerminal } from '../text/text-escape.ts';

/** What is known of the run holding the lock; every part may be missing (an unreadable lock file). */
export interface LockHolder {
  readonly owner?: string;
  readonly pid?: number;
  readonly hostname?: string;
  readonly acquiredAt?: string;
  readonly heartbeatAt?: string;
  /** For a lock file whose content is unreadable: when it was last written. */
  readonly modifiedAt?: string;
}

/**
 * What a lock says of its holder that names it (owner, pid and host, since when), escaped for a
 * terminal: a lock file is anyone's to write. Only for a holder that said who it is (`owner`).
 */
export function holderParts(holder: LockHolder): string[] {
  const parts = [`owner ${escapeForTerminal(JSON.stringify(holder.owner))}`];
  if (holder.pid !== undefined) parts.push(`pid ${holder.pid}${holder.hostname === undefined ? '' : ` on host ${escapeForTerminal(holder.hostname)}`}`);
  if (holder.acquiredAt !== undefined) parts.push(`since ${escapeForTerminal(holder.acquiredAt)}`);
  return parts;
}

function describeHolder(holder: LockHolder): string {
  if (holder.owner === undefined) {
    const modified = holder.modifiedAt === undefined ? '' : `, last modified ${escapeForTerminal(holder.modifiedAt)}`;
    return `a run that did not say who it is (its lock file is empty or unreadable${modified})`;
  }
  const parts = holderParts(holder);
  if (holder.heartbeatAt !== undefined) parts.push(`last heartbeat ${escapeForTerminal(holder.heartbeatAt)}`);
  return `another run (${parts.join(', ')})`;
}

/** `lockFile` is the path to remove by hand, for a backend that has one. */
export function lockTimeoutMessage(tenant: string, holder: LockHolder, waitedMs: number, lockFile?: string): string {
  const remedy = lockFile === undefined ? '' : `, or, if no run is active (it crashed and its lock was not recovered), remove ${lockFile}`;
  return (
    `tenant ${JSON.stringify(tenant)} is locked by ${describeHolder(holder)}; gave up after waiting ${waitedMs} ms. ` +
    `Wait for that run to finish and try again (or allow a longer lock timeout)${remedy}.`
  );
}
