/**
 * No noise: a drift is notified once when it appears and once when it is resolved, however many
 * scheduled runs see it in between (docs/architecture.md section 5). Pure: what was remembered and
 * what this run saw in, what to send and what to remember out. A drift is keyed by its tenant, its
 * contract and the ops that would correct it: the same edit seen again is the same key; an edit that
 * changes what it would take to correct is a new drift. Where the keys are kept (the state store)
 * is the caller's.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../model/fingerprint.ts';
import type { Op } from '../model/types.ts';

/** Remembered drift keys: tenant -> contract id -> key. */
export type DriftMemory = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** A contract this run found drifted, with the ops that would correct it (what `--fix` sends). */
export interface DriftSighting {
  readonly tenant: string;
  readonly contractId: string;
  readonly ops: readonly Op[];
}

export interface DriftDedupeInput {
  readonly previous: DriftMemory;
  /** Drifted contracts as found by this run. */
  readonly drifted: readonly DriftSighting[];
  /**
   * Per tenant, the contracts this run read and compared (drifted or not). A remembered drift of a
   * contract not among them (a read that failed, a contract outside the selection, a tenant not
   * run) is neither resolved nor forgotten. A contract that `drift --fix` corrected counts as
   * checked and not drifted.
   */
  readonly checked: Readonly<Record<string, readonly string[]>>;
  /**
   * Per tenant, drifted contracts this run corrected (`drift --fix`): a new one is notified as drift
   * (someone changed the service) and not remembered; a remembered one is resolved.
   */
  readonly corrected?: Readonly<Record<string, readonly string[]>>;
}

export interface DriftDedupeDecision {
  /** Drift not notified before (new, or changed since): send `drift`. */
  readonly notify: readonly DriftSighting[];
  /** Drift notified before and seen again unchanged: send nothing. */
  readonly repeated: readonly DriftSighting[];
  /** Contracts remembered as drifted and now checked and equal to git: send `drift-resolved`. */
  readonly resolved: readonly { readonly tenant: string; readonly contractId: string }[];
  /** What to remember for the next run. */
  readonly next: DriftMemory;
}

/** The key of a drift: a hash of (tenant, contract, ops), so that the memory holds no contract data. */
export function driftKey(sighting: DriftSighting): string {
  return createHash('sha256')
    .update(canonicalJson({ tenant: sighting.tenant, contractId: sighting.contractId, ops: sighting.ops }), 'utf8')
    .digest('hex');
}

export function decideDriftNotifications(input: DriftDedupeInput): DriftDedupeDecision {
  const next: Record<string, Record<string, string>> = Object.fromEntries(Object.entries(input.previous).map(([tenant, keys]) => [tenant, { ...keys }]));
  const notify: DriftSighting[] = [];
  const repeated: DriftSighting[] = [];
  const drifted = new Set<string>();
  const corrected = new Set(Object.entries(input.corrected ?? {}).flatMap(([tenant, ids]) => ids.map((id) => JSON.stringify([tenant, id]))));
  for (const sighting of input.drifted) {
    const key = driftKey(sighting);
    const at = JSON.stringify([sighting.tenant, sighting.contractId]);
    if (input.previous[sighting.tenant]?.[sighting.contractId] === key) repeated.push(sighting);
    else notify.push(sighting);
    if (corrected.has(at)) continue;
    drifted.add(at);
    (next[sighting.tenant] ??= {})[sighting.contractId] = key;
  }
  const resolved: { tenant: string; contractId: string }[] = [];
  for (const [tenant, contractIds] of Object.entries(input.checked)) {
    for (const contractId of contractIds) {
      if (drifted.has(JSON.stringify([tenant, contractId])) || input.previous[tenant]?.[contractId] === undefined) continue;
      resolved.push({ tenant, contractId });
      delete next[tenant]![contractId];
    }
  }
  for (const [tenant, keys] of Object.entries(next)) if (Object.keys(keys).length === 0) delete next[tenant];
  return { notify, repeated, resolved, next };
}
