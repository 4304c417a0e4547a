/** The CLI entry point: the only place that reads process.* and sets the exit code. */
import { EXIT, failWith, UsageError, type CliIo, type ExitCode } from './io.ts';
import { closest } from '../text/suggest.ts';
import { argsWithEnvironment, argsWithRepository, checkEnvironment, environmentHelp, namedForEnvironment, workingDirectory } from './environment-args.ts';
import { fileSystemErrorLine } from '../output/output-file.ts';
import { takeGlobalOptions } from './global-options.ts';
import { GLOBAL_OPTIONS_HELP, MAIN_GLOBAL_OPTIONS_HELP } from '../output/global-options-help.ts';
import { interruptOnSignals } from './interrupt.ts';
import { packageVersion } from '../run/version.ts';

type Command = (args: readonly string[], io: CliIo) => Promise<ExitCode>;

/** A loaded command: what runs, and its --help text (also where "did you mean --flag?" finds its options). */
interface LoadedCommand {
  readonly run: Command;
  readonly help: string;
}

/**
 * Each command's module is imported only when that command runs: --version, --help and validate
 * must not pay for the emulator, the OpenID provider, pg or the HTTP client (a test checks it).
 */
const COMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<LoadedCommand> }>> = {
  validate: {
    summary: 'check the config and desired-state files (no network)',
    load: () => import('./validate.ts').then((module) => ({ run: module.validateCommand, help: module.VALIDATE_HELP })),
  },
  plan: {
    summary: 'show the ops that would make the service match the desired state (no network unless --refresh)',
    load: () => import('./plan.ts').then((module) => ({ run: module.planCommand, help: module.PLAN_HELP })),
  },
  apply: {
    summary: 'plan, then send the ops to the service and record what was applied',
    load: () => import('./apply.ts').then((module) => ({ run: module.applyCommand, help: module.APPLY_HELP })),
  },
  drift: {
    summary: 'read every managed contract live and report (or --fix) what differs from git',
    load: () => import('./drift.ts').then((module) => ({ run: module.driftCommand, help: module.DRIFT_HELP })),
  },
  import: {
    summary: 'write a desired-state file from live contracts, to bring them under management',
    load: () => import('./import.ts').then((module) => ({ run: module.importCommand, help: module.IMPORT_HELP })),
  },
  show: {
    summary: 'print a saved plan (plan --out) for review (no config, credentials or network)',
    load: () => import('./show.ts').then((module) => ({ run: module.showCommand, help: module.SHOW_HELP })),
  },
  emulator: {
    summary: 'serve a reference CMS and identity provider for tests and demos',
    load: () => import('./emulator.ts').then((module) => ({ run: module.emulatorCommand, help: module.EMULATOR_HELP })),
  },
  state: {
    summary: 'inspect and repair the state store: list, show, history, unlock, rm, push, pull',
    load: () => import('./state.ts').then((module) => ({ run: module.stateCommand, help: module.STATE_HELP })),
  },
  notify: {
    summary: 'notify test: send a sample message to each notification channel and say what it answered',
    load: () => import('./notify.ts').then((module) => ({ run: module.notifyCommand, help: module.NOTIFY_HELP })),
  },
  policy: {
    summary: 'test the policy rules of the config against YAML cases: policy test [DIR] (no network)',
    load: () => import('./policy.ts').then((module) => ({ run: module.policyCommand, help: module.POLICY_HELP })),
  },
  init: {
    summary: 'scaffold a config, a first desired-state file and a CI workflow',
    load: () => import('./init.ts').then((module) => ({ run: module.initCommand, help: module.INIT_HELP })),
  },
};

/** The commands' names; bin/code-cache.js keeps a code cache for each. */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

function help(): string {
  return `contract-sync ${packageVersion()}: keep Contract Management Service contracts equal to git

Usage: contract-sync <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(10)} ${summary}`)
  .join('\n')}
  ${'help'.padEnd(10)} show help, or a command's help: contract-sync help <command>
  ${'version'.padEnd(10)} print the version

Options:
  -h, --help      show help (also: contract-sync <command> --help)
  -V, --version   print the version

${MAIN_GLOBAL_OPTIONS_HELP}
Environment variables for the flags CI sets most (a flag given on the command line wins):
${environmentHelp()}
Exit codes: 0 success, 1 error, 2 changes present (with --detailed-exitcode).
`;
}

/** `unknown command "plna" (did you mean plan?)` */
function unknownCommand(name: string): string {
  const suggestion = closest(name, [...Object.keys(COMMANDS), 'help', 'version']);
  return `contract-sync: unknown command "${name}"${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}; see contract-sync --help\n`;
}

/** The long options a command's help names, global options included: the candidates for "did you mean". */
function optionsIn(helpText: string): string[] {
  return [...new Set([...`${helpText}\n${GLOBAL_OPTIONS_HELP}--help`.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]))];
}

/** A usage error as one line. Node's own unknown-option text quotes unevenly and suggests nothing: ours names the closest option. */
function usageMessage(error: Error & { code?: string }, helpText: string | undefined): string {
  const unknown = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']*)'/.exec(error.message)?.[1] : undefined;
  if (unknown !== undefined) {
    const suggestion = helpText === undefined ? undefined : closest(unknown.replace(/=.*$/, ''), optionsIn(helpText));
    return `unknown option ${unknown}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}`;
  }
  return error.message;
}

function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [first, ...afterFirst] = argv;
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout.write(help());
    return first === undefined ? EXIT.error : EXIT.ok;
  }
  if (first === '--version' || first === '-V' || first === 'version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  // `help COMMAND` is `COMMAND --help`; `help` alone (or `help --help`) is --help.
  const helpOnly = first === 'help';
  const name = helpOnly ? afterFirst[0] : first;
  if (name === undefined || (helpOnly && (name === 'help' || name === 'version' || name.startsWith('-')))) {
    io.stdout.write(help());
    return EXIT.ok;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.stderr.write(unknownCommand(name));
    return EXIT.error;
  }
  let loaded: LoadedCommand | undefined;
  // The command's own arguments, once known: a usage error then names a flag that came from the environment by its variable.
  let commandArgs: readonly string[] | undefined;
  try {
    loaded = await command.load();
    if (helpOnly || wantsHelp(afterFirst)) {
      io.stdout.write(`${loaded.help}\n${GLOBAL_OPTIONS_HELP}`);
      return EXIT.ok;
    }
    const { options, rest } = takeGlobalOptions(afterFirst);
    checkEnvironment(io.env, options);
    commandArgs = rest;
    const { chdir, ...global } = options;
    const commandIo: CliIo = { ...io, ...global, cwd: await workingDirectory(io.cwd, chdir, io.env) };
    return await loaded.run(await argsWithRepository(name, argsWithEnvironment(name, rest, io.env), commandIo.cwd), commandIo);
  } catch (error) {
    // parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION.
    const code = (error as { code?: string }).code ?? '';
    if (error instanceof UsageError || code.startsWith('ERR_PARSE_ARGS')) {
      const message = usageMessage(error as Error, loaded?.help);
      const named = commandArgs === undefined ? message : namedForEnvironment(message, name, commandArgs, io.env);
      io.stderr.write(`contract-sync ${name}: ${named}; see contract-sync ${name} --help\n`);
      return EXIT.error;
    }
    // The PostgreSQL state store went away mid-run (stopped, restarted, the session terminated): not
    // a defect, and the run is resumable. One line, no stack.
    if ((error as { code?: unknown } | undefined)?.code === 'state-postgres')
      return failWith(io, name, `${(error as Error).message}; run the same command again once the state store is reachable`);
    const fileError = fileSystemErrorLine(error);
    if (fileError === undefined) throw error;
    return failWith(io, name, fileError);
  }
}

/** Commands that send: the first SIGINT/SIGTERM stops their run gracefully (engine/cli/interrupt.ts); the others end at once. */
const INTERRUPTIBLE = new Set(['apply', 'drift']);

export async function runCli(): Promise<void> {
  const argv = process.argv.slice(2);
  const interrupt = INTERRUPTIBLE.has(argv[0] ?? '')
    ? interruptOnSignals({ source: process, stderr: process.stderr, exit: (code) => process.exit(code) })
    : undefined;
  const io: CliIo = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    ...(interrupt ? { signal: interrupt.signal } : {}),
  };
  try {
    const code = await main(argv, io);
    const interrupted = interrupt?.exitCode();
    // Stopped by a signal: the run is over and recorded; a question left open on stdin must not keep the process.
    if (interrupted !== undefined) process.exit(interrupted);
    process.exitCode = code;
  } catch (error) {
    // The reader of stdout went away (`plan | head`): nobody is left to tell; exit non-zero, as a
    // broken pipe ends a Unix tool, without a message.
    if (brokenStdout(error)) {
      process.exitCode = EXIT.error;
      return;
    }
    // An unexpected failure is a defect: say so plainly, without a secret-bearing dump of state.
    io.stderr.write(`contract-sync: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = EXIT.error;
  }
}

/** A write failed because its reader closed the pipe: stdout's (the engine's own pipes, to git, are wrapped in errors of their own). */
function brokenStdout(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return code === 'EPIPE' && syscall === 'write';
}
