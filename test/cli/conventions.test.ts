/**
 * CLI conventions: help COMMAND, version, "did you mean", exit codes in every help, the global
 * --no-color and --log-format, and how logs look at a terminal and in CI (a real run against the
 * in-process emulator).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { takeGlobalOptions } from '../../engine/cli/global-options.ts';
import { wantsColor, type CliIo } from '../../engine/cli/io.ts';
import { logSettings } from '../../engine/log/settings.ts';
import { main } from '../../engine/cli/main.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed } from '../helpers/fleet.ts';

const COMMANDS = ['validate', 'plan', 'apply', 'drift', 'import', 'emulator', 'init', 'show', 'notify'];

function io(options: { stdoutTTY?: boolean; stderrTTY?: boolean; env?: Record<string, string> } & Pick<CliIo, 'noColor' | 'logFormat'>): CliIo {
  return {
    stdout: { write: () => true, isTTY: options.stdoutTTY ?? false },
    stderr: { write: () => true, isTTY: options.stderrTTY ?? false },
    env: options.env ?? {},
    cwd: process.cwd(),
    ...(options.noColor ? { noColor: true } : {}),
    ...(options.logFormat ? { logFormat: options.logFormat } : {}),
  };
}

describe('help and version', () => {
  it.each(COMMANDS)('`help %s` prints what the command prints for --help, with the exit codes and the global options', async (command) => {
    const viaHelp = await runCli(['help', command], process.cwd());
    const viaFlag = await runCli([command, '--help'], process.cwd());

    expect(viaHelp.code).toBe(0);
    expect(viaHelp).toEqual(viaFlag);
    expect(viaHelp.stdout).toMatch(/\nExit codes: 0 .*1 /s);
    expect(viaHelp.stdout).toContain('--log-format F');
  });

  it('`version` prints what `--version` prints', async () => {
    const version = await runCli(['version'], process.cwd());
    const flag = await runCli(['--version'], process.cwd());

    expect(version).toEqual(flag);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('`help` lists every command, help and version', async () => {
    const run = await runCli(['help'], process.cwd());

    expect(run.code).toBe(0);
    for (const command of [...COMMANDS, 'help', 'version']) expect(run.stdout).toMatch(new RegExp(`\\n {2}${command} +\\S`));
  });

  it("the main help (`--help` too) does not send the reader to itself; a command's help sends to it for the variables", async () => {
    const help = await runCli(['help'], process.cwd());
    const flag = await runCli(['--help'], process.cwd());
    const command = await runCli(['plan', '--help'], process.cwd());

    expect(flag).toEqual(help);
    expect(help.stdout).not.toContain('see contract-sync --help');
    expect(help.stdout).toContain('Environment variables for common flags\n(CONTRACT_SYNC_CONFIG, ...): below.\n');
    expect(help.stdout).toContain('CONTRACT_SYNC_CONFIG');
    expect(command.stdout).toContain('(CONTRACT_SYNC_CONFIG, ...): see contract-sync --help.\n');
  });
});

describe('did you mean', () => {
  it.each([
    [['plan', '--fromat', 'json'], 'contract-sync plan: unknown option --fromat (did you mean --format?); see contract-sync plan --help\n'],
    [
      ['drift', '--detailed-exitcodes'],
      'contract-sync drift: unknown option --detailed-exitcodes (did you mean --detailed-exitcode?); see contract-sync drift --help\n',
    ],
    [
      ['show', 'plan.json', '--log-fromat', 'text'],
      'contract-sync show: unknown option --log-fromat (did you mean --log-format?); see contract-sync show --help\n',
    ],
    [['plan', '--zzzzzzzz'], 'contract-sync plan: unknown option --zzzzzzzz; see contract-sync plan --help\n'],
    [['aply'], 'contract-sync: unknown command "aply" (did you mean apply?); see contract-sync --help\n'],
    [['help', 'shwo'], 'contract-sync: unknown command "shwo" (did you mean show?); see contract-sync --help\n'],
  ])('%j', async (args, stderr) => {
    const run = await runCli(args, process.cwd());

    expect(run).toEqual({ code: 1, stdout: '', stderr });
  });

  // Node's parseArgs says `... as in '-- "--fromat"` for a command that takes positionals: one quote never closed.
  it.each(['apply', 'drift', 'show'])('says an unknown option of %s (which takes positionals) with balanced quotes', async (command) => {
    const run = await runCli([command, '--fromat'], process.cwd());

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^contract-sync ${command}: unknown option --fromat.*; see contract-sync ${command} --help\\n$`));
    expect(run.stderr.split("'").length % 2).toBe(1);
    expect(run.stderr.split('"').length % 2).toBe(1);
  });
});

describe('global options', () => {
  it.each<[string[], ReturnType<typeof takeGlobalOptions>]>([
    [['--repo', '.', '--no-color'], { options: { noColor: true }, rest: ['--repo', '.'] }],
    [['--log-format', 'text', 'plan.json'], { options: { logFormat: 'text' }, rest: ['plan.json'] }],
    [['--log-format=json', '--format', 'markdown'], { options: { logFormat: 'json' }, rest: ['--format', 'markdown'] }],
    [['a', '--', '--no-color'], { options: {}, rest: ['a', '--', '--no-color'] }],
  ])('takes %j apart', (args, expected) => {
    expect(takeGlobalOptions(args)).toEqual(expected);
  });

  it.each([
    [['--log-format'], '--log-format needs a value: json or text'],
    [['--log-format', 'pretty'], '--log-format must be one of json, text; got "pretty"'],
  ])('refuses %j', (args, message) => {
    expect(() => takeGlobalOptions(args)).toThrow(message);
  });

  it.each<[string, Parameters<typeof io>[0], boolean]>([
    ['a terminal', { stdoutTTY: true }, true],
    ['no terminal', { stdoutTTY: false }, false],
    ['a terminal with --no-color', { stdoutTTY: true, noColor: true }, false],
    ['a terminal with NO_COLOR', { stdoutTTY: true, env: { NO_COLOR: '1' } }, false],
  ])('colours stdout on %s: %s', (_name, options, expected) => {
    expect(wantsColor(io(options))).toBe(expected);
  });
});

describe('log settings', () => {
  it.each<[string, Parameters<typeof io>[0], ReturnType<typeof logSettings>]>([
    ['a terminal: text, warnings and errors, coloured', { stderrTTY: true }, { format: 'text', level: 'warn', color: true, terminal: true }],
    ['CI (no terminal): JSON at info', { stderrTTY: false }, { format: 'json', level: 'info', color: false, terminal: false }],
    ['a terminal with --log-format json', { stderrTTY: true, logFormat: 'json' }, { format: 'json', level: 'warn', color: true, terminal: true }],
    ['CI with --log-format text', { logFormat: 'text' }, { format: 'text', level: 'info', color: false, terminal: false }],
    ['CI with CONTRACT_SYNC_LOG_FORMAT=text', { env: { CONTRACT_SYNC_LOG_FORMAT: 'text' } }, { format: 'text', level: 'info', color: false, terminal: false }],
    [
      'a terminal with CONTRACT_SYNC_LOG_FORMAT=json',
      { stderrTTY: true, env: { CONTRACT_SYNC_LOG_FORMAT: 'json' } },
      { format: 'json', level: 'warn', color: true, terminal: true },
    ],
    [
      '--log-format over the env variable',
      { logFormat: 'json', env: { CONTRACT_SYNC_LOG_FORMAT: 'text' } },
      { format: 'json', level: 'info', color: false, terminal: false },
    ],
    [
      'an unknown CONTRACT_SYNC_LOG_FORMAT: the default',
      { env: { CONTRACT_SYNC_LOG_FORMAT: 'xml' } },
      { format: 'json', level: 'info', color: false, terminal: false },
    ],
    [
      'a terminal with CONTRACT_SYNC_LOG_LEVEL=debug',
      { stderrTTY: true, env: { CONTRACT_SYNC_LOG_LEVEL: 'debug' } },
      { format: 'text', level: 'debug', color: true, terminal: true },
    ],
    ['a terminal with --no-color', { stderrTTY: true, noColor: true }, { format: 'text', level: 'warn', color: false, terminal: true }],
    ['a terminal with NO_COLOR', { stderrTTY: true, env: { NO_COLOR: 'yes' } }, { format: 'text', level: 'warn', color: false, terminal: true }],
  ])('%s', (_name, options, expected) => {
    expect(logSettings(io(options))).toEqual(expected);
  });
});

describe('logs of a real run', () => {
  let emulator: Emulator | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** A dry run of apply with one contract that cannot be read (404): it logs, and its summary lists the failure. */
  async function dryRun(args: readonly string[], stderrTTY: boolean, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
    const fleet = createFleet(1, 2);
    const seed = fleetSeed(fleet);
    const tenant = seed.tenants['tenant-a']!;
    const contracts = { ...tenant.contracts };
    delete contracts['tenant-a-0001'];
    emulator = await startEmulator({ ...seed, tenants: { ...seed.tenants, 'tenant-a': { ...tenant, contracts } } });
    const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true }));
    cleanups.push(cleanup);
    let stdout = '';
    let stderr = '';
    await main(['apply', '--dry-run', ...args], {
      stdout: { write: (text: string) => (stdout += text), isTTY: false },
      stderr: { write: (text: string) => (stderr += text), isTTY: stderrTTY },
      env: { ...fleet.env, ...env },
      cwd: dir,
    });
    return { stdout, stderr };
  }

  /**
   * Log lines only: a terminal also gets the progress line on stderr (`reading [###---] 1/2 ...`,
   * redrawn after \r, each log line clearing the line first: ESC [ K), and CI plain progress lines
   * (`contract-sync apply: reading 1/2 contracts ...`).
   */
  function logLines(stderr: string): string[] {
    return stderr
      .split(/[\r\n]/)
      .map((line) => (line.startsWith('\u001b[K') ? line.slice(3) : line))
      .filter((line) => line !== '' && !/^(reading|sending) \[/.test(line) && !/^contract-sync apply: (reading|sending) \d/.test(line));
  }

  it('at a terminal: no log line repeats the failure the summary lists', async () => {
    const run = await dryRun([], true);

    expect(run.stdout).toMatch(/Failures:\n {2}tenant-a tenant-a-0001 .*404/);
    expect(logLines(run.stderr)).toEqual([]);
  });

  it('at a terminal with CONTRACT_SYNC_LOG_LEVEL=info: text lines, not JSON (NO_COLOR: no colour codes)', async () => {
    const run = await dryRun([], true, { CONTRACT_SYNC_LOG_LEVEL: 'info', NO_COLOR: '1' });

    const lines = logLines(run.stderr);
    expect(run.stderr).toContain('\r\u001b[Kinfo   read failed');
    expect(lines).toContainEqual(expect.stringMatching(/^info {3}read failed; contract not planned {2}tenant=tenant-a contractId=tenant-a-0001 status=404$/));
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
  });

  it('in CI: JSON lines at info; --log-format text and CONTRACT_SYNC_LOG_FORMAT=text turn them into text', async () => {
    const json = await dryRun([], false);
    const flag = await dryRun(['--log-format', 'text'], false);
    const env = await dryRun([], false, { CONTRACT_SYNC_LOG_FORMAT: 'text' });

    const parsed = logLines(json.stderr).map((line) => JSON.parse(line) as { msg: string; level: number });
    expect(parsed).toContainEqual(expect.objectContaining({ msg: 'read failed; contract not planned', level: 30 }));
    // Progress without a terminal: plain lines beside the JSON ones (here: the quarters of 2 reads).
    expect(json.stderr).toMatch(/^contract-sync apply: reading 2\/2 contracts \(100%\), [\d.]+\/s, done in \d+s, 1 failed$/m);
    for (const run of [flag, env]) {
      expect(logLines(run.stderr)).toContainEqual(expect.stringMatching(/^info {3}read failed; contract not planned {2}tenant=tenant-a/));
      expect(logLines(run.stderr).filter((line) => line.startsWith('{'))).toEqual([]);
    }
  });
});
