/**
 * Start-up cost: `--version`, `--help`, `validate` and `show` must not load the emulator, the OpenID
 * provider, pg or the HTTP client. The CLI runs in a child process (its sources, through tsx)
 * with a resolve hook that records the URL of every module it loads.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_SAVED_PLAN } from '../helpers/files.ts';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const RECORDER = path.join(ROOT, 'test/package/record-module-loads.mjs');
const ENTRY = path.join(ROOT, 'test/package/cli-sources.ts');

/** What a light command must not load, as patterns on URLs relative to the repository root. */
const HEAVY: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: 'the emulator', pattern: /^emulator\// },
  { name: 'the HTTP client', pattern: /^engine\/api\// },
  { name: 'oidc-provider', pattern: /(^|\/)node_modules\/oidc-provider\// },
  { name: 'openid-client', pattern: /(^|\/)node_modules\/openid-client\// },
  { name: 'pg', pattern: /(^|\/)node_modules\/pg\// },
  // Loaded only for a config with policies: (engine/run/config.ts).
  { name: 'the CEL library', pattern: /(^|\/)node_modules\/@bufbuild\// },
];

/** The git adapter: a plan file names its commits, and show reads nothing of git. */
const GIT = /^engine\/git\//;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-loads-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `contract-sync ...args` and returns the exit code and the loaded modules (relative to ROOT where inside it). */
async function loadedBy(args: readonly string[]): Promise<{ code: number; modules: string[] }> {
  const out = path.join(dir, `${args.join('_').replace(/\W/g, '-')}.txt`);
  const rootUrl = pathToFileURL(`${ROOT}/`).href;
  const argv = ['--import', 'tsx', '--import', RECORDER, ENTRY, ...args];
  const run = await exec(process.execPath, argv, { cwd: ROOT, env: { ...process.env, RECORD_MODULE_LOADS: out } }).then(
    () => ({ code: 0 }),
    (error: { code: number }) => ({ code: error.code }),
  );
  const urls = (await readFile(out, 'utf8')).split('\n').filter((url) => url.startsWith('file:'));
  return { code: run.code, modules: [...new Set(urls.map((url) => (url.startsWith(rootUrl) ? url.slice(rootUrl.length) : url)))] };
}

function heavyIn(modules: readonly string[]): string[] {
  return HEAVY.filter(({ pattern }) => modules.some((module) => pattern.test(module))).map(({ name }) => name);
}

describe('commands are loaded lazily', () => {
  it.each(['--version', '--help'])('`contract-sync %s` loads no dependency and no command', { timeout: 30_000 }, async (args) => {
    const { code, modules } = await loadedBy(args.split(' '));

    expect(code).toBe(0);
    expect(modules.filter((module) => /(^|\/)node_modules\//.test(module))).toEqual([]);
    expect(modules.filter((module) => /^engine\/cli\/(validate|plan|apply|drift|import|emulator|show)\.ts$/.test(module))).toEqual([]);
  });

  it.each(['validate --repo examples/demo-repo', 'validate --help'])(
    '`contract-sync %s` loads neither the emulator, the OpenID provider, pg nor the HTTP client',
    { timeout: 30_000 },
    async (args) => {
      const { code, modules } = await loadedBy(args.split(' '));

      expect(code).toBe(0);
      expect(modules).toContain('engine/cli/validate.ts');
      expect(heavyIn(modules)).toEqual([]);
    },
  );

  it('`contract-sync show PLAN.json` loads neither the HTTP client, the OpenID client, pg, the emulator nor the git adapter', { timeout: 30_000 }, async () => {
    const plan = path.join(dir, 'plan.json');
    await writeFile(plan, JSON.stringify(EMPTY_SAVED_PLAN));

    const { code, modules } = await loadedBy(['show', plan]);

    expect(code).toBe(0);
    expect(modules).toContain('engine/cli/show.ts');
    expect(heavyIn(modules)).toEqual([]);
    expect(modules.filter((module) => GIT.test(module))).toEqual([]);
  });

  it('`contract-sync state list` on a file store loads neither pg, the HTTP client, the emulator nor the OpenID provider', { timeout: 30_000 }, async () => {
    const { code, modules } = await loadedBy(['state', 'list', '--repo', 'examples/demo-repo']);

    expect(code).toBe(0);
    expect(modules).toContain('engine/cli/state.ts');
    expect(heavyIn(modules)).toEqual([]);
  });

  it('`contract-sync plan` against the state store loads neither the HTTP client, the OpenID client, pg nor the emulator', { timeout: 30_000 }, async () => {
    const { code, modules } = await loadedBy(['plan', '--repo', 'examples/demo-repo']);

    expect(code).toBe(0);
    expect(modules).toContain('engine/cli/plan.ts');
    expect(heavyIn(modules)).toEqual([]);
  });

  it('sees the heavy modules when a command does load them (the recorder works)', { timeout: 30_000 }, async () => {
    const { code, modules } = await loadedBy(['import', '--help']);

    expect(code).toBe(0);
    expect(heavyIn(modules)).toEqual(expect.arrayContaining(['the HTTP client', 'openid-client']));
  });

  it('`contract-sync apply --help` loads neither the HTTP client nor the OpenID client: the run loads them when it sends', { timeout: 30_000 }, async () => {
    const { code, modules } = await loadedBy(['apply', '--help']);

    expect(code).toBe(0);
    expect(heavyIn(modules)).toEqual([]);
  });
});
