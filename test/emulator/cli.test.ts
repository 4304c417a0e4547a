import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../engine/cli/main.ts';
import type { CliIo } from '../../engine/cli/io.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'bin/contract-sync-dev.js');

function captureIo(): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    env: {},
    cwd: ROOT,
    out: () => out,
    err: () => err,
  };
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the real CLI; `whenReady` gets the ready line and may talk to the server before SIGTERM. */
function runCli(args: string[], whenReady?: (urls: Record<string, string>) => Promise<void>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let started = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (started || !stdout.includes('\n') || !whenReady) return;
      started = true;
      whenReady(JSON.parse(stdout.split('\n')[0]!) as Record<string, string>)
        .then(() => child.kill('SIGTERM'))
        .catch((error: unknown) => {
          child.kill('SIGKILL');
          reject(error instanceof Error ? error : new Error(String(error)));
        });
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('contract-sync emulator', () => {
  it('prints one ready line, serves, logs requests on stderr without secrets, and stops cleanly on SIGTERM', async () => {
    let discovery: Record<string, unknown> = {};

    const run = await runCli(['emulator', '--seed', 'emulator/seed.example.yaml'], async (urls) => {
      discovery = (await (await fetch(`${urls.authUrl}/realms/${urls.realm}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      await fetch(String(discovery.token_endpoint), {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'contract-sync-acme', client_secret: 'dev-secret-acme', scope: 'core:write' }),
      });
    });

    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const urls = JSON.parse(lines[0]!) as Record<string, string>;
    expect(Object.keys(urls)).toEqual(['baseUrl', 'authUrl', 'realm', 'adminUrl']);
    expect(urls.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(urls.adminUrl).toBe(`${urls.baseUrl}/__admin`);
    expect(discovery.issuer).toBe(`${urls.authUrl}/realms/cms`);
    const logLines = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logLines).toContainEqual(expect.objectContaining({ msg: 'request', kind: 'token', status: 200, tenant: 'acme' }));
    expect(logLines).toContainEqual(expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }));
    expect(run.stderr).not.toContain('dev-secret-acme');
    // One "time" per line (pino's), the request's start as startedAt; no oidc-provider runtime warning on Node 20.
    const requestLine = run.stderr.split('\n').find((line) => line.includes('"msg":"request"'))!;
    expect(requestLine.match(/"time":/g)).toHaveLength(1);
    expect(JSON.parse(requestLine)).toMatchObject({ time: expect.any(Number), startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(run.stderr).not.toContain('Unsupported runtime');
  });

  it('refuses a bad seed with a clear error and exit code 1', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'emulator-seed-'));
    const seed = path.join(dir, 'seed.yaml');
    await writeFile(seed, 'realm: cms\ntenants:\n  acme:\n    contracts:\n      "1": { Area: big }\n');

    const run = await runCli(['emulator', '--seed', seed]);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`${seed}:5:20 tenants.acme.contracts.1.Area: expected an integer, got "big"`);
  });

  it.each([
    [['emulator'], /--seed FILE is required/],
    [['emulator', '--seed', 's.yaml', '--port', 'http'], /--port must be an integer/],
    [['emulator', '--seed', 'missing.yaml'], /missing\.yaml: file not found/],
  ])('answers %j with exit code 1', async (args, message) => {
    const io = captureIo();

    const code = await main(args, io);

    expect(code).toBe(1);
    expect(io.err()).toMatch(message);
  });

  it('prints its help', async () => {
    const io = captureIo();

    const code = await main(['emulator', '--help'], io);

    expect(code).toBe(0);
    expect(io.out()).toContain('Usage: contract-sync emulator --seed FILE');
  });
});
