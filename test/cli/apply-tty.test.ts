/**
 * The confirmation on a real terminal: bin/contract-sync-dev.js run under a pseudo-terminal by
 * util-linux `script` (stdin and stdout are TTYs for the CLI), answered through script's stdin,
 * against the emulator. The PATCHes the emulator received say whether anything was sent.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog } from '../helpers/fleet.ts';

const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));
// util-linux script (Debian's bsdutils): -q quiet, -e the child's exit code, -f flush, -c the command.
const SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' });
const HAS_SCRIPT = SCRIPT.status === 0 && SCRIPT.stdout.includes('util-linux');

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * `contract-sync ...args` on a pseudo-terminal; `answer` is typed in (undefined: the input ends at
 * once); `rows`: the terminal's height.
 */
function onPty(
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  answer: string | undefined,
  rows?: number,
  /** Shell text after the command, e.g. `| tee log` (stdout piped, stdin and stderr still the terminal). */
  after = '',
  cols = 200,
): Promise<{ code: number | null; output: string }> {
  const command = `${rows === undefined ? '' : `stty rows ${rows} cols ${cols}; `}${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}${after}`;
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: '1', CONTRACT_SYNC_LOG_LEVEL: 'warn' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  // Typed ahead: the terminal holds the line until the CLI reads it. script passes the end of its input on as Ctrl-D.
  child.stdin.end(answer);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.replaceAll('\r\n', '\n') }));
  });
}

async function setup() {
  const fleet = createFleet(2, 6);
  emulator = await startEmulator(fleetSeed(fleet));
  const { dir, cleanup } = await writeTree(fleetRepoFiles(fleet, emulator, { read: true }));
  cleanups.push(cleanup);
  return { fleet, dir };
}

async function patches(): Promise<number> {
  return (await requestLog(emulator!)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').length;
}

const QUESTION = /\nApply \d+ ops to 8 contracts in 2 tenants\? Only 'yes' is accepted: /;

describe.runIf(HAS_SCRIPT)('apply on a pseudo-terminal', () => {
  it('prints the plan, asks, and sends on yes', { timeout: 60_000 }, async () => {
    const { fleet, dir } = await setup();

    const run = await onPty(['apply'], dir, fleet.env, 'yes\n');

    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(QUESTION);
    expect(run.output.indexOf('tenant tenant-a: 4 to update')).toBeLessThan(run.output.search(QUESTION));
    expect(run.output).toContain('Apply: 8 contracts changed');
    expect(await patches()).toBe(8);
  });

  it.each([
    ['no', 'no\n'],
    ['the end of input', undefined],
  ])('sends nothing and exits 1 on %s', { timeout: 60_000 }, async (_name, answer) => {
    const { fleet, dir } = await setup();

    const run = await onPty(['apply'], dir, fleet.env, answer);

    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(QUESTION);
    expect(run.output).toMatch(/\nApply cancelled\.\n$/);
    expect(await patches()).toBe(0);
  });

  it(
    "repeats the plan's per-tenant summary just above the question when the plan is taller than the terminal, and draws the reads' progress line",
    { timeout: 60_000 },
    async () => {
      const { fleet, dir } = await setup();

      const short = await onPty(['apply'], dir, fleet.env, 'no\n', 10);
      const tall = await onPty(['apply'], dir, fleet.env, 'no\n', 500);

      const headline = /^8 of 12 contracts in 2 tenants to update, \d+ ops\.$/m;
      const repeated =
        /\n\n(8 of 12 contracts in 2 tenants to update, \d+ ops\.)\n {2}tenant-a: 4 to update, \d+ ops, 2 members removed\n {2}tenant-b: 4 to update, \d+ ops, 2 members removed\nThe whole plan is above\.\n\nApply \d+ ops/;
      expect(short.output).toMatch(repeated);
      expect(short.output.match(repeated)![1]).toBe(headline.exec(short.output)![0]);
      expect(tall.output).toMatch(headline);
      expect(tall.output).not.toMatch(repeated);
      // One line redrawn in place: the bar, done/total, rate, time left, failures.
      expect(short.output).toContain('\r\u001b[Kreading [########################] 12/12  ');
      expect(short.output).toMatch(/reading \[#{24}\] 12\/12 {2}[\d.]+\/s {2}done in \d+s {2}0 failed\n/);
    },
  );

  it.each([
    [
      50,
      // The summary's lines fit; the question is broken between its sentences.
      /\n\n8 of 12 contracts in 2 tenants to update, \d+ ops\.\n {2}tenant-a: 4 to update, \d+ ops, 2 members removed\n {2}tenant-b: 4 to update, \d+ ops, 2 members removed\nThe whole plan is above\.\n\nApply \d+ ops to 8 contracts in 2 tenants\?\nOnly 'yes' is accepted: /,
    ],
    [
      40,
      // A tenant's line is broken after a part, what follows hanging under it; a part wider than the terminal between words.
      /\n\n8 of 12 contracts in 2 tenants to\nupdate, \d+ ops\.\n {2}tenant-a: 4 to update, \d+ ops,\n {4}2 members removed\n {2}tenant-b: 4 to update, \d+ ops,\n {4}2 members removed\nThe whole plan is above\.\n\nApply \d+ ops to 8 contracts in 2\ntenants\? Only 'yes' is accepted: /,
    ],
  ])(
    'on a narrow terminal (%i columns) the summary above the question and the question fit the width, broken at sensible places, never wrapped or cut',
    { timeout: 60_000 },
    async (columns, screen) => {
      const { fleet, dir } = await setup();

      const run = await onPty(['apply'], dir, fleet.env, 'no\n', 10, '', columns);

      expect(run.output).toMatch(screen);
      const said = run.output.slice(run.output.search(/\n\n8 of 12 contracts/), run.output.indexOf('accepted: ') + 'accepted: '.length);
      for (const line of said.split('\n')) expect(line.length).toBeLessThan(columns);
      expect(said).not.toContain('…');
      expect(run.output).toContain('Apply cancelled.');
    },
  );

  it.each([
    ['no', 'no\n', 'Apply cancelled.', 0],
    ['yes', 'yes\n', 'Apply: 8 contracts changed', 8],
  ])(
    'apply | tee log at a terminal asks (as Terraform does), the summary and question on the terminal: %s',
    { timeout: 60_000 },
    async (_name, answer, outcome, sent) => {
      const { fleet, dir } = await setup();

      const run = await onPty(['apply'], dir, fleet.env, answer, undefined, ' | tee log.txt');

      // The pipeline's exit code is tee's.
      expect(run.output).toContain(outcome);
      expect(run.output).toMatch(
        /The whole plan was written to standard output \(not this terminal\)\.\n\nApply \d+ ops to 8 contracts in 2 tenants\? Only 'yes' is accepted: /,
      );
      expect(run.output.indexOf('tenant tenant-a: 4 to update')).toBeLessThan(run.output.search(QUESTION));
      expect(await patches()).toBe(sent);
    },
  );

  it('Ctrl-C at the question sends nothing, says so, and exits 130', { timeout: 60_000 }, async () => {
    const { fleet, dir } = await setup();
    const command = [process.execPath, BIN, 'apply'].map(shellQuote).join(' ');
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: dir,
      env: { ...process.env, ...fleet.env, NO_COLOR: '1', CONTRACT_SYNC_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let typed = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      // The terminal turns Ctrl-C into SIGINT for the program in the foreground.
      if (!typed && QUESTION.test(output.replaceAll('\r\n', '\n'))) {
        typed = true;
        child.stdin.write('\u0003');
      }
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    const shown = output.replaceAll('\r\n', '\n');

    expect(code, shown).toBe(130);
    expect(shown).toContain('contract-sync: SIGINT: stopping: no new request starts');
    expect(shown).toMatch(/\nInterrupted: 0 contracts sent, 8 not sent; run apply again to finish\n/);
    expect(await patches()).toBe(0);
  });

  it('asks drift --fix its own question', { timeout: 60_000 }, async () => {
    const { fleet, dir } = await setup();

    const run = await onPty(['drift', '--fix'], dir, fleet.env, 'no\n');

    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/\nCorrect \d+ ops on 8 contracts in 2 tenants\? Only 'yes' is accepted: /);
    expect(run.output).toMatch(/\nFix cancelled\.\n$/);
    expect(await patches()).toBe(0);
  });
});

describe.runIf(!HAS_SCRIPT)('apply on a pseudo-terminal', () => {
  it.skip('needs util-linux script (Debian: bsdutils) to run the CLI under a pseudo-terminal', () => undefined);
});
