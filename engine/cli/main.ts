/** The CLI entry point: the only place that reads process.* and sets the exit code. */
import packageJson from '../../package.json' with { type: 'json' };
import { applyCommand } from './apply.ts';
import { driftCommand } from './drift.ts';
import { EXIT, UsageError, type CliIo, type ExitCode } from './io.ts';
import { emulatorCommand } from './emulator.ts';
import { importCommand } from './import.ts';
import { planCommand } from './plan.ts';
import { validateCommand } from './validate.ts';

type Command = (args: readonly string[], io: CliIo) => Promise<ExitCode>;

const COMMANDS: Readonly<Record<string, { summary: string; run: Command }>> = {
  validate: { summary: 'check the config and desired-state files (no network)', run: validateCommand },
  plan: { summary: 'show the ops that would make the service match the desired state (no network unless --refresh)', run: planCommand },
  apply: { summary: 'plan, then send the ops to the service and record what was applied', run: applyCommand },
  drift: { summary: 'read every managed contract live and report (or --fix) what differs from git', run: driftCommand },
  import: { summary: 'write a desired-state file from live contracts, to bring them under management', run: importCommand },
  emulator: { summary: 'serve a reference CMS and identity provider for tests and demos', run: emulatorCommand },
};

const HELP = `contract-sync ${packageJson.version}: keep Contract Management Service contracts equal to git

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

export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP);
    return name === undefined ? EXIT.error : EXIT.ok;
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`${packageJson.version}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`contract-sync: unknown command "${name}"; see contract-sync --help\n`);
    return EXIT.error;
  }
  try {
    return await command.run(args, io);
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
