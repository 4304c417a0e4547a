/**
 * bin/v8-flags.js: the V8 flags the CLI runs under, by V8 version, and when bin/contract-sync.js
 * starts node again with those that work only from node's start (the semi-space size on Node 24).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/contract-sync.js');

/** bin/ is plain JavaScript, without type declarations. */
interface V8FlagsModule {
  cliV8Flags(v8Version: string): string[];
  cliStartFlags(v8Version: string): string[];
  restartOptions(run: { v8Version: string; execArgv: readonly string[]; nodeOptions: string | undefined; command: string }): string[] | undefined;
}
const { cliV8Flags, cliStartFlags, restartOptions } = (await import(pathToFileURL(path.join(ROOT, 'bin/v8-flags.js')).href)) as V8FlagsModule;

const NODE_20 = '11.3.244.8-node.33';
const NODE_24 = '13.6.233.17-node.37';

describe('the flags by V8 version', () => {
  it.each([
    [NODE_20, ['--interrupt-budget=600000'], []],
    [NODE_24, [], ['--max-semi-space-size=8']],
    ['12.4.254.21-node.33', [], []],
    ['14.1.0.0', [], []],
  ])('V8 %s: set while running %j, from the start %j', (v8Version, running, start) => {
    expect(cliV8Flags(v8Version)).toEqual(running);
    expect(cliStartFlags(v8Version)).toEqual(start);
  });
});

describe('restartOptions', () => {
  const run = { v8Version: NODE_24, execArgv: [] as string[], nodeOptions: undefined, command: 'plan' };

  it.each(['validate', 'plan', 'apply', 'drift', 'import'])('starts node again for %s, with the start flags before the options it had', (command) => {
    expect(restartOptions({ ...run, command, execArgv: ['--enable-source-maps'] })).toEqual(['--max-semi-space-size=8', '--enable-source-maps']);
  });

  it.each([
    ['a pull request plan', { command: 'plan-base' }],
    ['--version, --help', { command: 'cli' }],
    ['another command', { command: 'show' }],
    ['a V8 without start flags', { v8Version: NODE_20 }],
    ['the flag on the command line', { execArgv: ['--max-semi-space-size=32'] }],
    ['the flag as V8 also spells it', { execArgv: ['--max_semi_space_size=32'] }],
    ['the flag in NODE_OPTIONS', { nodeOptions: '--enable-source-maps  --max-semi-space-size=16' }],
    ['a debugger', { execArgv: ['--inspect-brk=9229'] }],
    ['a debugger from NODE_OPTIONS', { nodeOptions: '--inspect' }],
  ])('runs as it is with %s', (_, change) => {
    expect(restartOptions({ ...run, ...change })).toBeUndefined();
  });
});

describe('bin/contract-sync.js', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-v8-flags-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  let runs = 0;

  /** Runs the bin under a preload that notes each start of node: its pid, then its options other than the preload. */
  async function starts(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<string[][]> {
    runs += 1;
    const log = path.join(dir, `starts-${runs}.log`);
    const preload = `import { appendFileSync } from 'node:fs';
const options = process.execArgv.filter((arg, index, all) => arg !== '--import' && all[index - 1] !== '--import');
appendFileSync(process.env.STARTS_LOG, JSON.stringify([String(process.pid), ...options]) + '\\n');`;
    // The run's own ending (no repository here, no build in a fresh checkout) does not matter: its starts do.
    await exec(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(preload)}`, BIN, ...args], {
      env: { ...process.env, NODE_OPTIONS: '', ...env, STARTS_LOG: log, NODE_DISABLE_COMPILE_CACHE: '1' },
    }).catch(() => undefined);
    return (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);
  }

  // On the Node running the tests: Node 24 starts again (where process.execve exists), Node 20 does not.
  const restarts = cliStartFlags(process.versions.v8).length > 0 && typeof (process as { execve?: unknown }).execve === 'function';

  it(`${restarts ? 'starts node again, as the same process, with' : 'runs as it is: no'} start flags on this Node (${process.version}) for validate`, async () => {
    const seen = await starts(['validate', '--repo', path.join(dir, 'no-repo')]);

    if (restarts) {
      expect(seen).toEqual([[seen[0]![0]!], [seen[0]![0]!, ...cliStartFlags(process.versions.v8)]]);
    } else {
      expect(seen).toHaveLength(1);
    }
  });

  it('runs --version as it is, and a run whose node was given the flag in NODE_OPTIONS', async () => {
    const version = await starts(['--version']);
    const given = await starts(['validate', '--repo', path.join(dir, 'no-repo')], { NODE_OPTIONS: '--max-semi-space-size=16' });

    expect(version).toHaveLength(1);
    expect(given).toHaveLength(1);
  });
});
