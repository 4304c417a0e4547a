/** The file backend's options: defaults and checks (a bad option is a programming error: TypeError). */
import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { systemClock } from '../io/clock.ts';

/** The interval timers the lock's heartbeat uses; the global ones by default. */
export interface IntervalTimers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface FileStateStoreOptions {
  /** The clock, in epoch milliseconds: lock times, heartbeats, waiting. */
  readonly now?: () => number;
  /** A lock whose heartbeat is older than this is taken for a crashed run's. Default 60 s. */
  readonly staleLockMs?: number;
  /** How often the holder refreshes its lock's heartbeat; less than staleLockMs. Default staleLockMs / 4. */
  readonly heartbeatMs?: number;
  /** How often a waiter looks at the lock again. Default 200 ms. */
  readonly pollMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Written into the lock; a lock of this host is stale as soon as its process is gone. */
  readonly hostname?: string;
  readonly pid?: number;
  readonly isProcessAlive?: (pid: number) => boolean;
  readonly timers?: IntervalTimers;
  /** Unique names for temporary files and lock ids. */
  readonly randomId?: () => string;
  /**
   * A tenant's journal is compacted (by the lock holder, before it lets go, or during a run) once
   * it holds more than this many times the size of its live records; 1 compacts any dead line.
   * Default 2.
   */
  readonly compactRatio?: number;
}

export type FileStoreSettings = Required<FileStateStoreOptions>;

export const DEFAULT_STALE_LOCK_MS = 60_000;
export const DEFAULT_POLL_MS = 200;
export const DEFAULT_COMPACT_RATIO = 2;

/** Signal 0 checks that a process exists without touching it; EPERM means it exists as another user. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function defaultRandomId(): string {
  return randomBytes(12).toString('hex');
}

// Looked up at each call, not captured at import, so that fake timers installed later apply.
const globalTimers: IntervalTimers = {
  setInterval(callback, ms) {
    return globalThis.setInterval(callback, ms);
  },
  clearInterval(handle) {
    globalThis.clearInterval(handle as ReturnType<typeof setInterval>);
  },
};

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'function' ? 'a function' : String(value);
}

function checkFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`options.${name}: expected a function, got ${describe(value)}`);
}

function checkPositive(name: string, value: unknown): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)) {
    throw new TypeError(`options.${name}: expected a finite number > 0, got ${describe(value)}`);
  }
}

export function resolveFileStoreOptions(options: FileStateStoreOptions = {}): FileStoreSettings {
  for (const name of ['now', 'sleep', 'isProcessAlive', 'randomId'] as const) checkFunction(name, options[name]);
  for (const name of ['staleLockMs', 'heartbeatMs', 'pollMs'] as const) checkPositive(name, options[name]);
  if (options.hostname !== undefined && (typeof options.hostname !== 'string' || options.hostname === '')) {
    throw new TypeError(`options.hostname: expected a non-empty string, got ${describe(options.hostname)}`);
  }
  if (options.pid !== undefined && (!Number.isSafeInteger(options.pid) || options.pid <= 0)) {
    throw new TypeError(`options.pid: expected an integer > 0, got ${describe(options.pid)}`);
  }
  const timers = options.timers;
  if (timers !== undefined && (typeof timers?.setInterval !== 'function' || typeof timers.clearInterval !== 'function')) {
    throw new TypeError(`options.timers: expected { setInterval, clearInterval } functions, got ${describe(timers)}`);
  }
  const { compactRatio } = options;
  if (compactRatio !== undefined && (typeof compactRatio !== 'number' || !Number.isFinite(compactRatio) || compactRatio < 1)) {
    throw new TypeError(`options.compactRatio: expected a finite number >= 1, got ${describe(compactRatio)}`);
  }
  const staleLockMs = options.staleLockMs ?? DEFAULT_STALE_LOCK_MS;
  const heartbeatMs = options.heartbeatMs ?? staleLockMs / 4;
  // A heartbeat no more frequent than the stale age would let a live run's lock look stale.
  if (heartbeatMs >= staleLockMs) {
    throw new TypeError(`options.heartbeatMs: expected less than staleLockMs (${staleLockMs}), got ${describe(heartbeatMs)}`);
  }
  return {
    now: options.now ?? systemClock.now,
    staleLockMs,
    heartbeatMs,
    pollMs: options.pollMs ?? DEFAULT_POLL_MS,
    sleep: options.sleep ?? systemClock.sleep,
    hostname: options.hostname ?? osHostname(),
    pid: options.pid ?? process.pid,
    isProcessAlive: options.isProcessAlive ?? isProcessAlive,
    timers: timers ?? globalTimers,
    randomId: options.randomId ?? defaultRandomId,
    compactRatio: compactRatio ?? DEFAULT_COMPACT_RATIO,
  };
}
