/**
 * Ctrl-C and CI cancellation for commands that send (apply, drift): the first SIGINT or SIGTERM
 * aborts the run's signal (no new request starts; requests in flight are answered and recorded;
 * every lock is released) and the command ends with 130 (SIGINT) or 143 (SIGTERM). Requests that
 * do not finish within the grace period, or a second signal, end the process at once: the state
 * store stays crash-safe (contracts in flight stay pending as interrupted, and their locks, naming
 * a process that is gone, are recovered by the next run on this host).
 */
import { setMaxListeners } from 'node:events';

/** How long requests in flight may take to finish after the first signal. */
export const GRACE_MS = 10_000;

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** The shell's convention: 128 + the signal's number. */
export const SIGNAL_EXIT: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** The part of `process` this needs: injected, so that tests drive it without signals. */
export interface SignalSource {
  on(event: StopSignal, listener: () => void): unknown;
  off(event: StopSignal, listener: () => void): unknown;
}

export interface InterruptOptions {
  readonly source: SignalSource;
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  /** Ends the process now (process.exit). */
  readonly exit: (code: number) => void;
  readonly graceMs?: number;
  readonly setTimer?: (run: () => void, ms: number) => { unref?(): unknown };
}

export interface Interrupt {
  readonly signal: AbortSignal;
  /** The exit code the first signal asks for, once one came. */
  exitCode(): number | undefined;
  /** Stops listening (the command is over). */
  dispose(): void;
}

export function interruptOnSignals(options: InterruptOptions): Interrupt {
  const graceMs = options.graceMs ?? GRACE_MS;
  const controller = new AbortController();
  // Every tenant's lane and lock wait listens to it: a fleet has hundreds.
  setMaxListeners(0, controller.signal);
  let code: number | undefined;
  const listeners = new Map<StopSignal, () => void>();
  // A progress line may be drawn on a terminal: the message starts a line of its own.
  const lineStart = options.stderr.isTTY === true ? '\n' : '';
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    function listener(): void {
      if (code !== undefined) {
        options.stderr.write(`${lineStart}contract-sync: ${name} again: exiting now; requests in flight may be unrecorded: the next run reads them\n`);
        options.exit(code);
        return;
      }
      code = SIGNAL_EXIT[name];
      options.stderr.write(
        `${lineStart}contract-sync: ${name}: stopping: no new request starts; waiting up to ${graceMs / 1000} s for requests in flight (${name === 'SIGINT' ? 'Ctrl-C' : 'the signal'} again exits at once)\n`,
      );
      controller.abort();
      const timer = (options.setTimer ?? setTimeout)(() => {
        options.stderr.write(
          `${lineStart}contract-sync: requests in flight did not finish within ${graceMs / 1000} s: exiting; the next run reads the contracts left in flight\n`,
        );
        options.exit(code!);
      }, graceMs);
      // The run ending sooner ends the process; the timer does not hold it.
      timer.unref?.();
    }
    listeners.set(name, listener);
    options.source.on(name, listener);
  }
  return {
    signal: controller.signal,
    exitCode: () => code,
    dispose() {
      for (const [name, listener] of listeners) options.source.off(name, listener);
    },
  };
}
