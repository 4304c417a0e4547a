/**
 * The CLI as a real child process (bin/contract-sync-dev.js, the sources), for tests that need
 * what only a process has: signals, a death, two runs at once, locks held by a pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));

export interface CliFinished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliChild {
  readonly child: ChildProcess;
  readonly finished: Promise<CliFinished>;
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once what it printed to `stream` so far matches `pattern`. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<void>;
}

export interface CliChildOptions {
  readonly cwd: string;
  /** The child's whole environment (the caller decides what of the test's own it passes on). */
  readonly env: NodeJS.ProcessEnv;
  /** Flags for the child's Node, before the CLI (e.g. `--import` of a preload). */
  readonly nodeArgs?: readonly string[];
  /** Called with each child as it starts and as it ends: for a test's clean-up of children left running. */
  readonly running?: Set<ChildProcess>;
}

/** Starts `contract-sync ARGS`: Node itself, not a wrapper, so a signal reaches the run and its pid is the one its locks record. */
export function startCli(args: readonly string[], options: CliChildOptions): CliChild {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  options.running?.add(child);
  const printed = { stdout: '', stderr: '' };
  const waiters: { stream: 'stdout' | 'stderr'; pattern: RegExp; resolve: () => void }[] = [];
  function gather(stream: 'stdout' | 'stderr', chunk: string): void {
    printed[stream] += chunk;
    for (const waiter of waiters.splice(0)) {
      if (waiter.stream === stream && waiter.pattern.test(printed[stream])) waiter.resolve();
      else waiters.push(waiter);
    }
  }
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => gather('stdout', chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => gather('stderr', chunk));
  const finished = new Promise<CliFinished>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      options.running?.delete(child);
      resolve({ code, signal, ...printed });
    });
  });
  return {
    child,
    finished,
    stdout: () => printed.stdout,
    stderr: () => printed.stderr,
    waitFor: (stream, pattern) => (pattern.test(printed[stream]) ? Promise.resolve() : new Promise((resolve) => waiters.push({ stream, pattern, resolve }))),
  };
}
