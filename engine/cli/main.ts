/** The CLI entry point: the only place that reads process.* and sets the exit code. */
import { EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';
import { packageVersion } from './version.ts';

type Command = (args: readonly string[], io: CliIo) => Promise<ExitCode>;

/**
 * Each command's module is imported only when that command runs: --version, --help and validate
 * must not pay for the emulator, the OpenID provider, pg or the HTTP client (a test checks it).
 */
const COMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<Command> }>> = {
  validate: {
    summary: 'check the config and desired-state files (no network)',
    load: async () => (await import('./validate.ts')).validateCommand,
  },
  plan: {
    summary: 'show the ops that would make the service match the desired state (no network unless --refresh)',
    load: async () => (await import('./plan.ts')).planCommand,
  },
  apply: {
    summary: 'plan, then send the ops to the service and record what was applied',
    load: async () => (await import('./apply.ts')).applyCommand,
  },
  drift: {
    summary: 'read every managed contract live and report (or --fix) what differs from git',
    load: async () => (await import('./drift.ts')).driftCommand,
  },
  import: {
    summary: 'write a desired-state file from live contracts, to bring them under management',
    load: async () => (await import('./import.ts')).importCommand,
  },
  emulator: {
    summary: 'serve a reference CMS and identity provider for tests and demos',
    load: async () => (await import('./emulator.ts')).emulatorCommand,
  },
  state: {
    summary: 'inspect and repair the state store: list, show, history, unlock, rm',
    load: async () => (await import('./state.ts')).stateCommand,
  },
  init: {
    summary: 'scaffold a config, a first desired-state file and a CI workflow',
    load: async () => (await import('./init.ts')).initCommand,
  },
};

function help(): string {
  return `contract-sync ${packageVersion()}: keep Contract Management Service contracts equal to git

Usage: contract-sync <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(10)} ${summary}`)
  .join('\n')}

Options:
  -h, --help      show help (also: contract-sync <command> --help)
  -V, --version   print the version

Exit codes: 0 success, 1 error, 2 changes present (with --detailed-exitcode).
`;
}

export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(help());
    return name === undefined ? EXIT.error : EXIT.ok;
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.stderr.write(`contract-sync: unknown command "${name}"; see contract-sync --help\n`);
    return EXIT.error;
  }
  try {
    const run = await command.load();
    return await run(args, io);
  } catch (error) {
    // parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION.
    const code = (error as { code?: string }).code ?? '';
    if (error instanceof UsageError || code.startsWith('ERR_PARSE_ARGS')) {
      io.stderr.write(`contract-sync ${name}: ${(error as Error).message}; see contract-sync ${name} --help\n`);
      return EXIT.error;
    }
    throw error;
  }
}

export async function runCli(): Promise<void> {
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
  try {
    process.exitCode = await main(process.argv.slice(2), io);
  } catch (error) {
    // An unexpected failure is a defect: say so plainly, without a secret-bearing dump of state.
    io.stderr.write(`contract-sync: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = EXIT.error;
  }
}
