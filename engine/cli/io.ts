import { parseArgs, type ParseArgsConfig } from 'node:util';
import { systemClock, type Clock } from '../io/clock.ts';
import type { LogFormat } from '../log/settings.ts';
import type { Drainable } from '../output/stream.ts';

/** What a command may touch of its process: passed in, so that commands run in tests unchanged. */
export interface CliIo {
  /** Where answers come from (apply's and drift --fix's confirmation); left out, nothing is ever asked. */
  readonly stdin?: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  /**
   * `rows`: a terminal's height (apply repeats the plan's summary line before its question when the plan is taller).
   * A stream's `once`/`off`/`destroyed` (process.stdout has them): writeOut waits for 'drain' when write() returns false.
   */
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean; readonly rows?: number; readonly columns?: number } & Drainable;
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean; readonly columns?: number };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The clock (plan's createdAt); the system clock when left out. */
  readonly now?: () => Date;
  /** `--no-color` (a global option, taken out of the arguments by main). */
  readonly noColor?: boolean;
  /** `--log-format` (a global option); else CONTRACT_SYNC_LOG_FORMAT, else decided by whether stderr is a terminal. */
  readonly logFormat?: LogFormat;
  /** Aborted on the first SIGINT/SIGTERM (engine/cli/interrupt.ts) for commands that send: the run stops starting requests. */
  readonly signal?: AbortSignal;
}

/** Exit codes of docs/architecture.md section 5. */
export const EXIT = { ok: 0, error: 1, changes: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake in how the command was called: printed with a hint to --help, exit 1. */
export class UsageError extends Error {
  readonly code = 'usage';
}

/**
 * A command's arguments, parsed strictly: every option must be one of `options`; positionals only
 * when `allowPositionals`. `-h`/`--help` writes the command's `help` (`helped`: the command is
 * done); main answers them before a command runs, a command called on its own answers them too.
 */
/** What parseCommand returns: parseArgs' values and positionals for `O` (and -h/--help), and whether help was asked for. */
type ParsedCommand<O extends NonNullable<ParseArgsConfig['options']>, P extends boolean> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O & { help: { type: 'boolean'; short: 'h' } }; strict: true; allowPositionals: P }>
> & { readonly helped: boolean };

export function parseCommand<const O extends NonNullable<ParseArgsConfig['options']>, const P extends boolean>(
  io: Pick<CliIo, 'stdout'>,
  help: string,
  args: readonly string[],
  allowPositionals: P,
  options: O,
): ParsedCommand<O, P> {
  const parsed = parseArgs({ args: [...args], options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals });
  const helped = 'help' in parsed.values && parsed.values.help === true;
  if (helped) io.stdout.write(help);
  return { ...parsed, helped };
}

/** Says `message` as the command's one line on stderr: exit 1. */
export function failWith(io: Pick<CliIo, 'stderr'>, command: string, message: string): ExitCode {
  io.stderr.write(`contract-sync ${command}: ${message}\n`);
  return EXIT.error;
}

/** A `--format` value, checked against the formats a command supports. */
export function parseFormat<F extends string>(value: string | undefined, allowed: readonly F[], fallback: F): F {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as F;
  throw new UsageError(`--format must be one of ${allowed.join(', ')}; got "${value}"`);
}

/**
 * A person can answer: stdin is a terminal, whatever stdout is (`apply > out.txt` and `apply | tee
 * log` at a terminal still ask, as Terraform asks whenever it can read an answer). In CI (no
 * terminal) nothing is asked.
 */
export function isInteractive(io: CliIo): boolean {
  return io.stdin?.isTTY === true;
}

/** Colour on stdout: only on a terminal; --no-color, and NO_COLOR (https://no-color.org) with any non-empty value, turn it off. */
export function wantsColor(io: CliIo): boolean {
  return io.stdout.isTTY === true && io.noColor !== true && !io.env.NO_COLOR;
}

/** The clock a command runs on: the system clock, with `io.now` (tests) for the time of day. */
export function clockOf(io: CliIo): Clock {
  const now = io.now;
  return now ? { ...systemClock, now: () => now().getTime() } : systemClock;
}
