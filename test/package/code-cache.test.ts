/**
 * bin/code-cache.js: the CLI's bundle run as a vm.Script with a code cache that a run writes at its
 * exit. Each case runs a small CommonJS "bundle" in child processes (a cache is written at a
 * process's exit), through a driver that prints what became of the cache and what the bundle
 * answered.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../engine/cli/main.ts';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CODE_CACHE = pathToFileURL(path.join(ROOT, 'bin/code-cache.js')).href;

/** bin/ is plain JavaScript, without type declarations. */
interface CodeCacheModule {
  readonly COMMANDS: ReadonlySet<string>;
  cacheNameOf(argv: readonly string[]): string;
  codeCacheDir(env: Readonly<Record<string, string | undefined>>, uid: number | undefined): string | undefined;
}
const { cacheNameOf, codeCacheDir, COMMANDS } = (await import(CODE_CACHE)) as CodeCacheModule;

/** A bundle with enough functions that its cache holds more than the top level. */
function bundleSource(letter: string): string {
  const functions = Array.from({ length: 40 }, (_, index) => `function f${index}(x) { return x + ${index}; }`).join('\n');
  return `'use strict';\n${functions}\nexports.answer = function answer() { let sum = 0; ${Array.from({ length: 40 }, (_, index) => `sum = f${index}(sum);`).join(' ')} return ${JSON.stringify(letter)} + ':' + sum + ':' + require('node:path').basename(__filename); };\n`;
}

const DRIVER = `
import { runBundle } from ${JSON.stringify(CODE_CACHE)};
const [file, cacheDir, name] = process.argv.slice(2);
const { exports, cache } = runBundle(file, { cacheDir: cacheDir || undefined, name: name || undefined });
process.stdout.write(JSON.stringify({ cache, answer: exports.answer() }));
`;

let work: string;
let driver: string;
let bundle: string;
let cacheDir: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'contract-sync-code-cache-'));
  driver = path.join(work, 'driver.mjs');
  await writeFile(driver, DRIVER);
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

let round = 0;
beforeEach(async () => {
  round += 1;
  bundle = path.join(work, `bundle-${round}.cjs`);
  cacheDir = path.join(work, `cache-${round}`);
  await writeFile(bundle, bundleSource('A'));
});

async function runDriver(options: { dir?: string; name?: string } = {}): Promise<{ cache: string; answer: string }> {
  const { stdout } = await exec(process.execPath, [driver, bundle, options.dir ?? cacheDir, options.name ?? 'plan']);
  return JSON.parse(stdout) as { cache: string; answer: string };
}

/** What the bundle of this test answers: its letter, the sum its 40 functions make, its file's name. */
function answer(letter: string): string {
  return `${letter}:780:${path.basename(bundle)}`;
}

/** Changes the bytes of the one cache file there is. */
async function alterCache(change: (bytes: Buffer) => void): Promise<void> {
  const [file] = await cacheFiles();
  const bytes = await readFile(path.join(cacheDir, file!));
  change(bytes);
  await writeFile(path.join(cacheDir, file!), bytes);
}

async function cacheFiles(dir = cacheDir): Promise<string[]> {
  return (await readdir(dir).catch(() => [])).filter((name) => !name.endsWith('.tmp'));
}

describe('runBundle', () => {
  it('runs the bundle without a cache, writes one at exit, and the next run accepts it', async () => {
    expect(await runDriver()).toEqual({ cache: 'none', answer: answer('A') });
    const files = await cacheFiles();
    expect(files).toEqual([expect.stringMatching(new RegExp(`^plan-${process.version.replaceAll('.', '\\.')}-${process.arch}-[0-9a-f]{8}\\.bin$`))]);
    const written = await stat(path.join(cacheDir, files[0]!));

    expect(await runDriver()).toEqual({ cache: 'accepted', answer: answer('A') });
    // Accepted: not written again.
    expect((await stat(path.join(cacheDir, files[0]!))).mtimeMs).toBe(written.mtimeMs);
    if (process.platform !== 'win32') {
      expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);
      expect(written.mode & 0o777).toBe(0o600);
    }
  });

  it('never runs a cache made from another bundle of the same length: V8 checks only the length, the header the bytes', async () => {
    await runDriver();
    await writeFile(bundle, bundleSource('B'));

    expect(await runDriver()).toEqual({ cache: 'none', answer: answer('B') });
    expect(await runDriver()).toEqual({ cache: 'accepted', answer: answer('B') });
  });

  it('writes a new cache when V8 rejects the one there (made by another V8)', async () => {
    await runDriver();
    await alterCache((bytes) => {
      // After the 20-byte header, V8's own: a magic number, then the hash of the V8 version that
      // made it. The header's last word is the CRC-32 of V8's data, made to match.
      bytes.writeUInt32LE((bytes.readUInt32LE(24) ^ 0xffffffff) >>> 0, 24);
      bytes.writeUInt32LE(crc32(bytes.subarray(20)), 16);
    });

    expect(await runDriver()).toEqual({ cache: 'rejected', answer: answer('A') });
    expect(await runDriver()).toEqual({ cache: 'accepted', answer: answer('A') });
  });

  it('never hands V8 a cache damaged on disk', async () => {
    await runDriver();
    await alterCache((bytes) => {
      // A byte in the middle of V8's data: V8 itself checks its data's checksum only in debug builds.
      bytes[20 + Math.floor((bytes.length - 20) / 2)]! ^= 0xff;
    });

    expect(await runDriver()).toEqual({ cache: 'none', answer: answer('A') });
    expect(await runDriver()).toEqual({ cache: 'accepted', answer: answer('A') });
  });

  it('keeps a cache per name (command)', async () => {
    await runDriver({ name: 'plan' });
    expect(await runDriver({ name: 'apply' })).toEqual({ cache: 'none', answer: answer('A') });
    expect((await cacheFiles()).map((name) => name.split('-')[0])).toEqual(['apply', 'plan']);
  });

  it('uses and writes no cache without a name or a directory', async () => {
    expect(await runDriver({ name: '' })).toEqual({ cache: 'off', answer: answer('A') });
    expect(await runDriver({ dir: '' })).toEqual({ cache: 'off', answer: answer('A') });
    expect(await cacheFiles()).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')('neither reads nor writes a cache in a directory others may write to', async () => {
    await runDriver();
    await chmod(cacheDir, 0o777);
    const [file] = await cacheFiles();
    const before = await stat(path.join(cacheDir, file!));

    expect(await runDriver()).toEqual({ cache: 'off', answer: answer('A') });
    expect(await runDriver({ name: 'apply' })).toEqual({ cache: 'off', answer: answer('A') });
    expect(await cacheFiles()).toEqual([file]);
    expect((await stat(path.join(cacheDir, file!))).mtimeMs).toBe(before.mtimeMs);
  });

  it('runs as without a cache where none can be written', async () => {
    const notADirectory = path.join(work, 'a-file');
    await writeFile(notADirectory, '');

    expect(await runDriver({ dir: path.join(notADirectory, 'cache') })).toEqual({ cache: 'none', answer: answer('A') });
    expect(await runDriver({ dir: notADirectory })).toEqual({ cache: 'off', answer: answer('A') });
  });

  it("keeps the bundle's lines and columns in stack traces, as require() would", async () => {
    await writeFile(bundle, "'use strict';\n\nexports.answer = function answer() { return new Error('here').stack.split('\\n')[1].trim(); };\n");
    await mkdir(cacheDir);
    const required = await exec(process.execPath, ['-e', `process.stdout.write(require(${JSON.stringify(bundle)}).answer())`]);

    expect(required.stdout).toBe(`at Object.answer (${bundle}:3:45)`);
    expect((await runDriver()).answer).toBe(required.stdout);
  });
});

describe('the cache names and directory', () => {
  it("names the cache by the command (a pull request's plan has its own); --version, --help and a mistyped command share one, never a command's", () => {
    expect(cacheNameOf(['plan', '--ref', 'HEAD'])).toBe('plan');
    expect(cacheNameOf(['plan', '--ref', 'HEAD', '--base', 'main'])).toBe('plan-base');
    expect(cacheNameOf(['plan', '--base=origin/main', '--format', 'markdown'])).toBe('plan-base');
    expect(cacheNameOf(['state', 'list'])).toBe('state');
    for (const argv of [[], ['--version'], ['--help'], ['help', 'plan'], ['plan', '--help'], ['apply', '-h'], ['plna']]) expect(cacheNameOf(argv)).toBe('cli');
  });

  it("knows the CLI's commands", () => {
    expect([...COMMANDS].sort()).toEqual([...COMMAND_NAMES].sort());
  });

  it('lives under NODE_COMPILE_CACHE or the temporary directory, one per user, and NODE_DISABLE_COMPILE_CACHE=1 turns it off', () => {
    expect(codeCacheDir({}, 1000)).toBe(path.join(tmpdir(), 'contract-sync-code-cache-1000'));
    expect(codeCacheDir({ NODE_COMPILE_CACHE: path.join(work, 'ncc') }, undefined)).toBe(path.join(work, 'ncc', 'contract-sync-code-cache'));
    expect(codeCacheDir({ NODE_DISABLE_COMPILE_CACHE: '1', NODE_COMPILE_CACHE: work }, 1000)).toBeUndefined();
  });
});
