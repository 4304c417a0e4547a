import { cp, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeContractsRepo } from '../../bench/generate-contracts.ts';
import { main } from '../../engine/cli/main.ts';

const DEMO = path.resolve(import.meta.dirname, '../../examples/demo-repo');

let repo: string;

beforeEach(async () => {
  repo = await mkdtemp(path.join(tmpdir(), 'contract-sync-plan-stream-'));
  await cp(DEMO, repo, { recursive: true });
});

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

async function plan(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['plan', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: repo,
    now: () => new Date('2026-11-22T10:00:00Z'),
  });
  return { code, stdout, stderr };
}

describe('plan one tenant at a time', () => {
  it.each([['text'], ['json']])('--format %s: an error in the last tenant, after the first was planned, writes no plan anywhere', async (format) => {
    // globex is planned after acme: acme's piece is spooled by then.
    await writeFile(path.join(repo, 'contracts/globex/bad.yaml'), 'tenant: globex\ncontracts:\n  "9001":\n    Area: 12a\n');

    const run = await plan(['--format', format, '--out', 'plan.json']);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('contracts/globex/bad.yaml:4:11  Area  expected an integer, got "12a"');
    expect(await readdir(repo)).not.toContain('plan.json');
    expect((await readdir(repo)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('--out and --format json write the same document, and no spool is left behind', async () => {
    const run = await plan(['--format', 'json', '--out', 'plan.json']);

    expect(run.code).toBe(0);
    expect(await readFile(path.join(repo, 'plan.json'), 'utf8')).toBe(run.stdout);
    expect(JSON.parse(run.stdout).tenants.map((tenant: { tenant: string }) => tenant.tenant)).toEqual(['acme', 'globex']);
    expect((await readdir(repo)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('plan through a stdout read slowly', () => {
  const HIGH_WATER_MARK = 16 * 1024;
  /** The most writeOut (engine/output/stream.ts) writes at once. */
  const CHUNK = 1024 * 1024;

  it.each([['json'], ['text']])(
    "--format %s: holds at most one chunk beyond what the reader has taken (waits for 'drain'), and writes the whole plan",
    async (format) => {
      const big = path.join(repo, 'big');
      await writeContractsRepo(big, { contracts: 2500, tenants: 2, perFile: 100 });
      // A reader that takes one chunk each time the test lets it: the plan is written only as fast as it is read.
      // A Node stream is given the spool's bytes as they are, and the lines around them as text.
      const taken: Buffer[] = [];
      const waiting: (() => void)[] = [];
      const stdout = new Writable({
        highWaterMark: HIGH_WATER_MARK,
        decodeStrings: false,
        write(chunk: string | Buffer, _encoding, callback) {
          taken.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
          waiting.push(callback);
        },
      });
      let stderr = '';
      let done = false;
      const running = main(['plan', '--repo', big, '--format', format, '--out', path.join(repo, 'plan.json')], {
        stdout,
        stderr: { write: (text: string) => (stderr += text) },
        env: {},
        cwd: repo,
        now: () => new Date('2026-11-22T10:00:00Z'),
      }).finally(() => (done = true));
      let mostHeld = 0;
      // Until the run is over and the reader has taken everything.
      while (!done || waiting.length > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        // What the stream holds for the reader: whatever the writer wrote without waiting.
        mostHeld = Math.max(mostHeld, stdout.writableLength);
        waiting.shift()?.();
      }

      expect(await running, stderr).toBe(0);
      const written = Buffer.concat(taken).toString('utf8');
      const document = await readFile(path.join(repo, 'plan.json'), 'utf8');
      if (format === 'json') expect(written).toBe(document);
      else expect(written).toMatch(/^2500 contracts in 2 tenants to update/);
      // Large enough that a writer not waiting would have left most of it in the stream at once.
      expect(written.length).toBeGreaterThan(2 * (CHUNK + HIGH_WATER_MARK));
      expect(mostHeld).toBeLessThanOrEqual(CHUNK + HIGH_WATER_MARK);
    },
  );
});

describe('plan to stdout as a file and as a pipe (the spool copied as bytes, its buffer filled again once written)', () => {
  const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));

  it.each([['file'], ['pipe']])('stdout a %s: the JSON plan is the --out document, byte for byte', { timeout: 60_000 }, async (kind) => {
    const big = path.join(repo, 'big');
    // Non-ASCII text in every contract: chunks of 64 KiB end inside characters.
    await writeContractsRepo(big, { contracts: 2500, tenants: 2, perFile: 100 });
    for (const tenant of ['tenant-000', 'tenant-001']) {
      const file = path.join(big, 'contracts', tenant, 'part-0.yaml');
      await writeFile(file, (await readFile(file, 'utf8')).replaceAll('Generated contract', 'Généré ✓ 契約 😀'));
    }
    const outFile = path.join(repo, 'stdout.json');
    const handle = kind === 'file' ? await open(outFile, 'w') : undefined;
    const child = spawn(process.execPath, [BIN, 'plan', '--full', '--format', 'json', '--out', path.join(repo, 'plan.json')], {
      cwd: big,
      stdio: ['ignore', handle?.fd ?? 'pipe', 'pipe'],
    });
    const taken: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => taken.push(chunk));
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    await handle?.close();

    expect(code, stderr).toBe(0);
    const written = kind === 'file' ? await readFile(outFile) : Buffer.concat(taken);
    const document = await readFile(path.join(repo, 'plan.json'));
    expect(document.length).toBeGreaterThan(20 * 64 * 1024);
    expect(written.equals(document)).toBe(true);
    expect(written.toString('utf8')).toContain('Généré ✓ 契約 😀');
  });
});

describe('plan through a pipe its reader closes early (plan | head)', () => {
  const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));

  it.each([['text'], ['json']])('--format %s: stops quietly, exit 1, no internal error', { timeout: 60_000 }, async (format) => {
    const big = path.join(repo, 'big');
    await writeContractsRepo(big, { contracts: 2500, tenants: 2, perFile: 100 });
    const child = spawn(process.execPath, [BIN, 'plan', '--full', '--format', format], { cwd: big, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // As head -c does: the first chunk read, then the pipe closed while the plan (megabytes) is still being written.
    let read = 0;
    child.stdout.once('data', (chunk: Buffer) => {
      read = chunk.length;
      child.stdout.destroy();
    });

    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

    expect(read).toBeGreaterThan(0);
    expect(stderr).not.toMatch(/internal error|EPIPE|at /);
    expect(code).toBe(1);
  });
});
