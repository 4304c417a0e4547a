/**
 * The real CLI in a child process exits promptly once its work is done: no pause or timer (a
 * RateLimit reset, a Retry-After that came with the last answer) keeps it alive after the report.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed } from '../helpers/fleet.ts';

const BIN = fileURLToPath(new URL('../../bin/contract-sync-dev.js', import.meta.url));
/** How long after its last output the process may take to exit. */
const EXIT_BOUND_MS = 3000;
/** Beyond this the process is taken to hang and is killed: far below the 300 s the service asks to wait. */
const HANG_MS = 20_000;

let emulator: Emulator | undefined;
let server: Server | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await emulator?.close();
  emulator = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The service's API as a loopback server: each PATCH answered 204, the `last`-th with `headers`. */
async function serveApi(last: number, headers: Record<string, string>): Promise<{ baseUrl: string; patches: string[] }> {
  const patches: string[] = [];
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      patches.push(`${request.method} ${request.url}`);
      response.writeHead(204, patches.length === last ? headers : {}).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, patches };
}

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** ms from the last output (stdout or stderr) to the exit. */
  readonly afterOutputMs: number;
}

function run(args: readonly string[], cwd: string, env: Record<string, string>): Promise<Exit> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, CONTRACT_SYNC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let lastOutputAt = Date.now();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    lastOutputAt = Date.now();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    lastOutputAt = Date.now();
  });
  const hang = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      clearTimeout(hang);
      resolve({ code, stdout, stderr, afterOutputMs: Date.now() - lastOutputAt });
    });
  });
}

describe('the CLI process exits promptly when its work is done', () => {
  it.each<[string, Record<string, string>]>([
    ['a RateLimit quota used up, reset in 300 s', { RateLimit: '"default";r=0;t=300' }],
    ['RateLimit-Remaining 0 and Retry-After 300 s', { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '300', 'Retry-After': '300' }],
  ])('after the last answer brings %s', { timeout: 60_000 }, async (_case, headers) => {
    // One tenant, two contracts; the state store knows neither, so both are sent: two PATCHes,
    // one after the other, the second the last request of the run.
    const fleet = createFleet(1, 2);
    emulator = await startEmulator(fleetSeed(fleet));
    const api = await serveApi(2, headers);
    const files = fleetRepoFiles(fleet, emulator);
    files['contract-sync.yaml'] = files['contract-sync.yaml']!.replace(emulator.urls.baseUrl, api.baseUrl).replace(/concurrency: \d+/, 'concurrency: 1');
    const { dir, cleanup } = await writeTree(files);
    cleanups.push(cleanup);

    const exit = await run(['apply', '--no-refresh'], dir, fleet.env);

    expect(exit.code, exit.stdout + exit.stderr).toBe(0);
    expect(exit.stdout).toMatch(/Apply: 2 contracts changed, \d+ ops, 2 requests, 0 retries\./);
    expect(api.patches).toEqual(['PATCH /contract/tenant-a-0000', 'PATCH /contract/tenant-a-0001']);
    expect(exit.afterOutputMs).toBeLessThan(EXIT_BOUND_MS);
  });
});
