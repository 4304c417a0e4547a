/**
 * A run told to stop (SIGINT or SIGTERM in the CLI, an AbortSignal from a library caller): no new
 * request starts; requests already sent are answered, recorded and reported as usual. A contract
 * whose PATCH never started is "not sent": the next run plans it again (a `failed` pending entry).
 */

/** Why a request was not started: the run's signal was aborted first. Never an ApiError: nothing was sent. */
export class RunInterrupted extends Error {
  readonly code = 'interrupted';
  constructor() {
    super('the run was interrupted');
  }
}

/** The reason a contract of an interrupted run carries in the report and in its pending entry. */
export const INTERRUPTED = 'not sent: the run was interrupted';

/**
 * The reason of the pending entry a run writes, before its first PATCH, for each contract it is
 * about to send (engine/pipeline/send.ts): a later pass of the same run (a shared run's worker
 * taking over) knows from it which contracts that run itself had in flight.
 */
export function inFlightReason(runId: string): string {
  return `run ${runId}`;
}

/** What an interrupted run sent and did not: what the CLI says on its last line. */
export interface InterruptedCount {
  /** Contracts whose PATCH was sent (and answered, applied or not). */
  readonly sent: number;
  /** Contracts the run planned to send and did not. */
  readonly notSent: number;
}

/**
 * `promise`, unless `signal` aborts first: then RunInterrupted, and whatever `promise` resolves to
 * later is handed to `late` (a lock taken after the run stopped waiting is released there).
 */
export async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined, late: (value: T) => void): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.then(late, () => undefined);
    throw new RunInterrupted();
  }
  let onAbort: (() => void) | undefined;
  let stopped = false;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      stopped = true;
      reject(new RunInterrupted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      promise.then((value) => {
        if (stopped) late(value);
        return value;
      }),
      aborted,
    ]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}
