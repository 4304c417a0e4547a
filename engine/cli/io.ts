import { systemClock, type Clock } from '../clock.ts';

/** What a command may touch of its process: passed in, so that commands run in tests unchanged. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The clock (plan's createdAt); the system clock when left out. */
  readonly now?: () => Date;
}

/** Exit codes of DESIGN.md section 5. */
export const EXIT = { ok: 0, error: 1, changes: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake in how the command was called: printed with a hint to --help, exit 1. */
export class UsageError extends Error {
  readonly code = 'usage';
}

/** A `--format` value, checked against the formats a command supports. */
export function parseFormat<F extends string>(value: string | undefined, allowed: readonly F[], fallback: F): F {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as F;
  throw new UsageError(`--format must be one of ${allowed.join(', ')}; got "${value}"`);
}

/** Colour on stdout: only on a terminal, and NO_COLOR (https://no-color.org) with any non-empty value turns it off. */
export function wantsColor(io: CliIo): boolean {
  return io.stdout.isTTY === true && !io.env.NO_COLOR;
}

/** The clock a command runs on: the system clock, with `io.now` (tests) for the time of day. */
export function clockOf(io: CliIo): Clock {
  const now = io.now;
  return now ? { ...systemClock, now: () => now().getTime() } : systemClock;
}
