/**
 * What a command runs with besides its own arguments: the flags CI sets most, read from
 * environment variables (a flag on the command line wins), and without `--config` or `--repo` the
 * repository found by looking for contract-sync.yaml from the working directory upward
 * (engine/config/find.ts). Both become ordinary arguments, so each command parses and checks them
 * as if they had been typed.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { findConfig } from '../config/find.ts';
import { LOG_FORMATS, LOG_LEVELS } from '../log/settings.ts';
import { escapeForTerminal, hasActiveCharacter } from '../text/text-escape.ts';
import { UsageError } from './io.ts';

export interface EnvironmentOption {
  readonly env: string;
  readonly flag: string;
  /** The commands that take the flag. */
  readonly commands: readonly string[];
  /** A repeatable flag: the variable holds a comma-separated list, one flag per item. */
  readonly list?: true;
}

/** The commands that read a repository's config (and take --config and --repo). */
const REPOSITORY_COMMANDS = ['validate', 'plan', 'apply', 'drift', 'import', 'state', 'policy'] as const;
const PLANNING_COMMANDS = ['plan', 'apply', 'drift'] as const;

export const ENVIRONMENT_OPTIONS: readonly EnvironmentOption[] = [
  { env: 'CONTRACT_SYNC_CONFIG', flag: '--config', commands: REPOSITORY_COMMANDS },
  { env: 'CONTRACT_SYNC_REPO', flag: '--repo', commands: REPOSITORY_COMMANDS },
  { env: 'CONTRACT_SYNC_TENANT', flag: '--tenant', commands: PLANNING_COMMANDS, list: true },
  { env: 'CONTRACT_SYNC_SHARD', flag: '--shard', commands: PLANNING_COMMANDS },
  { env: 'CONTRACT_SYNC_LOCK_TIMEOUT', flag: '--lock-timeout', commands: ['apply', 'drift'] },
];

/** The flags given before `--` (which ends the options), by name: `--tenant` for `--tenant x` and `--tenant=x`. */
function givenFlags(args: readonly string[]): Set<string> {
  const end = args.indexOf('--');
  return new Set((end === -1 ? args : args.slice(0, end)).filter((arg) => arg.startsWith('--')).map((arg) => arg.replace(/=.*$/, '')));
}

/** `args` and before any `--`, `extra`. */
function withArgs(args: readonly string[], extra: readonly string[]): string[] {
  if (extra.length === 0) return [...args];
  const end = args.indexOf('--');
  return end === -1 ? [...args, ...extra] : [...args.slice(0, end), ...extra, ...args.slice(end)];
}

/** The options whose variable is set (not blank) and taken by `command`, and not given as flags. */
function fromEnvironment(command: string, args: readonly string[], env: Readonly<Record<string, string | undefined>>): [EnvironmentOption, string][] {
  const given = givenFlags(args);
  const taken: [EnvironmentOption, string][] = [];
  for (const option of ENVIRONMENT_OPTIONS) {
    const value = env[option.env];
    // Blank is unset: CI systems expand an unset variable to ''.
    if (value === undefined || value.trim() === '' || !option.commands.includes(command) || given.has(option.flag)) continue;
    taken.push([option, value]);
  }
  return taken;
}

/**
 * The arguments with the environment's flags added, for those the command takes and its arguments
 * do not give. Each value is then checked by the command as its flag's is (errors name the
 * variable: namedForEnvironment); a list with an empty item (`,,,`, `acme,,globex`) is refused here,
 * as `--tenant ''` is, rather than read as no selection at all. Pure.
 */
export function argsWithEnvironment(command: string, args: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  const extra: string[] = [];
  for (const [option, value] of fromEnvironment(command, args, env)) {
    const values = option.list ? value.split(',').map((item) => item.trim()) : [value];
    if (values.includes('')) {
      throw new UsageError(`${option.env} "${escapeForTerminal(value)}" holds an empty item; name each value once, separated by commas (e.g. acme,globex)`);
    }
    // `--flag=value`: a value starting with "-" stays the flag's value instead of reading as another option.
    for (const item of values) extra.push(...(item.startsWith('-') ? [`${option.flag}=${item}`] : [option.flag, item]));
  }
  return withArgs(args, extra);
}

/**
 * `message` (a usage error of the command) with the flags that came from the environment named by
 * their variable: `--lock-timeout must be a number of seconds; got "-1"` becomes
 * `CONTRACT_SYNC_LOCK_TIMEOUT must be a number of seconds; got "-1"` when the flag was never passed.
 */
export function namedForEnvironment(message: string, command: string, args: readonly string[], env: Readonly<Record<string, string | undefined>>): string {
  let named = message;
  for (const [option] of fromEnvironment(command, args, env)) {
    named = named.replace(new RegExp(`(^|[\\s'"(])${option.flag}(?=[\\s'"=:,)]|$)`), `$1${option.env}`);
  }
  return named;
}

/**
 * The CONTRACT_SYNC_* variables the engine reads itself. Others (a `CONTRACT_SYNC_DATABASE_URL` that a
 * config names in `{ env }`) may be secrets: never checked here, never quoted.
 */
const ENGINE_VARIABLES: readonly string[] = [
  ...ENVIRONMENT_OPTIONS.map((option) => option.env),
  'CONTRACT_SYNC_CHDIR',
  'CONTRACT_SYNC_LOG_FORMAT',
  'CONTRACT_SYNC_LOG_LEVEL',
  'CONTRACT_SYNC_RUN',
  'CONTRACT_SYNC_WORKER',
  'CONTRACT_SYNC_PLAN_ARTIFACT',
];

/**
 * The variables that have no flag to check them, checked as strictly as a flag would be: each of
 * ENGINE_VARIABLES free of control, bidi and zero-width characters (they name runs and workers in
 * the history and in output, or stand for a flag), and CONTRACT_SYNC_LOG_FORMAT (unless --log-format is given)
 * and CONTRACT_SYNC_LOG_LEVEL one of their values. Blank is unset. Throws a UsageError naming the variable.
 */
export function checkEnvironment(env: Readonly<Record<string, string | undefined>>, given: { readonly logFormat?: string }): void {
  for (const name of ENGINE_VARIABLES) {
    const value = env[name];
    if (value === undefined || !hasActiveCharacter(value)) continue;
    throw new UsageError(`${name} "${escapeForTerminal(value)}" holds a control, invisible or bidirectional character`);
  }
  const format = env.CONTRACT_SYNC_LOG_FORMAT;
  if (given.logFormat === undefined && format !== undefined && format.trim() !== '' && !(LOG_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`CONTRACT_SYNC_LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}; got ${JSON.stringify(format)}`);
  }
  const level = env.CONTRACT_SYNC_LOG_LEVEL;
  if (level !== undefined && level.trim() !== '' && !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(`CONTRACT_SYNC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(level)}`);
  }
}

/**
 * Without `--config` and `--repo`, a command that reads a repository runs in the nearest directory
 * at or above `cwd` (up to the git repository's root) that holds contract-sync.yaml, as `--repo DIR`
 * relative to `cwd`. Nothing found: the arguments are left alone, and the command's "not found"
 * message says where contract-sync looked.
 */
export async function argsWithRepository(command: string, args: readonly string[], cwd: string): Promise<string[]> {
  const given = givenFlags(args);
  if (!(REPOSITORY_COMMANDS as readonly string[]).includes(command) || given.has('--config') || given.has('--repo')) return [...args];
  const search = await findConfig(cwd);
  if (search.found === undefined) return [...args];
  const dir = path.dirname(search.found);
  return dir === path.resolve(cwd) ? [...args] : withArgs(args, ['--repo', path.relative(cwd, dir)]);
}

/** `--chdir DIR` (or CONTRACT_SYNC_CHDIR): the working directory every path of the command is relative to. */
export async function workingDirectory(cwd: string, chdir: string | undefined, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const given = chdir ?? (env.CONTRACT_SYNC_CHDIR?.trim() === '' ? undefined : env.CONTRACT_SYNC_CHDIR);
  if (given === undefined) return cwd;
  const dir = path.resolve(cwd, given);
  const flag = chdir === undefined ? 'CONTRACT_SYNC_CHDIR' : '--chdir';
  try {
    if ((await stat(dir)).isDirectory()) return dir;
  } catch {
    throw new UsageError(`${flag} ${given}: no such directory`);
  }
  throw new UsageError(`${flag} ${given}: not a directory`);
}

/** The list of the variables, for the README and the help. */
export function environmentHelp(): string {
  return ENVIRONMENT_OPTIONS.map(
    (option) => `  ${option.env.padEnd(28)}${option.flag}${option.list ? ' (comma-separated)' : ''}: ${option.commands.join(', ')}\n`,
  ).join('');
}
