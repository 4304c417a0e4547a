/**
 * A run's counters, in one explicit object the stages share: contracts read live and sent so far,
 * each against its own total, and the PATCHes answered (what an interrupted run says it sent).
 * The stages of all tenants run side by side, so the counts are over every tenant.
 */
import type { ContractResult } from '../apply/run-report.ts';
import type { ApplyProgress, PhaseDetail, StagePhase } from './types.ts';

export class RunProgress {
  readonly #onProgress: ((progress: ApplyProgress) => void) | undefined;
  readonly #onPhase: ((phase: StagePhase, detail?: PhaseDetail) => void) | undefined;
  readonly #phases = new Set<StagePhase>();
  #read = { done: 0, total: 0 };
  #send = { done: 0, total: 0 };
  /** PATCHes sent (answered, applied or not) and not read first. */
  #sent = 0;

  constructor(events: { readonly onProgress?: (progress: ApplyProgress) => void; readonly onPhase?: (phase: StagePhase, detail?: PhaseDetail) => void }) {
    this.#onProgress = events.onProgress;
    this.#onPhase = events.onPhase;
  }

  /** A stage begins: said once per run, however many tenants go through it. */
  phase(phase: StagePhase, detail?: PhaseDetail): void {
    if (this.#phases.has(phase)) return;
    this.#phases.add(phase);
    if (detail === undefined) this.#onPhase?.(phase);
    else this.#onPhase?.(phase, detail);
  }

  readsExpected(total: number): void {
    this.#read = { done: 0, total };
  }

  sendsExpected(total: number): void {
    this.#send = { done: 0, total };
  }

  read(tenant: string, contractId: string, outcome: 'read' | 'failed' | 'not-on-service'): void {
    this.#read.done += 1;
    this.#onProgress?.({ step: 'read', tenant, contractId, outcome, done: this.#read.done, total: this.#read.total });
  }

  sent(tenant: string, contractId: string, outcome: ContractResult['outcome']): void {
    this.#send.done += 1;
    this.#sent += 1;
    this.#onProgress?.({ step: 'send', tenant, contractId, outcome, done: this.#send.done, total: this.#send.total });
  }

  /** PATCHes answered so far. */
  get patchesSent(): number {
    return this.#sent;
  }
}
