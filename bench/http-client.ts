/**
 * What one PATCH costs the engine's CPU, through the CMS client (engine/api/client.ts) over its
 * node:http transport and over fetch (the `fetch` option), against a loopback server answering
 * 204 after a delay. Each figure is a child process (this file with --client) sending REQUESTS
 * PATCHes, IN_FLIGHT at once, after a warm-up of 50; its CPU (process.cpuUsage: user + system)
 * over those requests, divided by their number. The rounds are interleaved; medians are printed.
 * The server runs in this process, so its CPU is not in the figures.
 *   npx tsx bench/http-client.ts                      --requests 2000 --in-flight 8 --rounds 3
 *   npx tsx bench/http-client.ts --node /path/to/node24/bin/node   (repeatable; default this Node)
 * Prints one JSON line per Node and transport {"bench":"http-client", node, transport, cpuMsPerRequest, wallS}
 * and a table.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createApiClient } from '../engine/api/client.ts';
import type { Op } from '../engine/model/types.ts';
import { median } from './median.ts';

const { values: flags } = parseArgs({
  options: {
    client: { type: 'string' },
    url: { type: 'string' },
    requests: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    node: { type: 'string', multiple: true },
    'latency-ms': { type: 'string', default: '20' },
  },
});
const REQUESTS = Number(flags.requests);
const IN_FLIGHT = Number(flags['in-flight']);
const TRANSPORTS = ['node:http', 'fetch'] as const;
// A token of a realistic size (a signed JWT), throwaway.
const TOKEN = `eyJhbGciOiJSUzI1NiJ9.${'x'.repeat(700)}.signature`;
const OPS: readonly Op[] = [
  { op: 'Replace', path: '/Contract/Name', value: 'Office cleaning, twice a week' },
  { op: 'Replace', path: '/Contract/AnnualExpensesAmount', value: 12_000 },
];

/** The child: sends the PATCHes and prints its CPU per request. */
async function client(transport: string, baseUrl: string): Promise<void> {
  const api = createApiClient({
    baseUrl,
    timeoutMs: 30_000,
    userAgent: 'contract-sync/bench',
    correlationId: 'bench',
    ...(transport === 'fetch' ? { fetch: globalThis.fetch } : {}),
  });
  for (let index = 0; index < 50; index++) await api.patch(`C-${index}`, OPS, TOKEN);
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < REQUESTS) await api.patch(`C-${next++}`, OPS, TOKEN);
    }),
  );
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${JSON.stringify({ cpuMsPerRequest: (used.user + used.system) / 1000 / REQUESTS, wallS: (performance.now() - started) / 1000 })}\n`);
}

async function main(): Promise<void> {
  if (flags.client !== undefined) return client(flags.client, flags.url!);
  const latency = Number(flags['latency-ms']);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => setTimeout(() => response.writeHead(204).end(), latency));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const nodes = flags.node ?? [process.execPath];
  const versions = new Map(nodes.map((node) => [node, version(node)]));
  const figures = new Map<string, { cpu: number[]; wall: number[] }>();
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const node of nodes) {
      for (const transport of TRANSPORTS) {
        // Asynchronous, so that this process's server answers meanwhile.
        const child = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const running = spawn(
            node,
            ['--import', 'tsx', import.meta.filename, '--client', transport, '--url', url, '--requests', String(REQUESTS), '--in-flight', String(IN_FLIGHT)],
            {
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
          let stdout = '';
          let stderr = '';
          running.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          running.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          running.on('close', (status: number | null) => resolve({ status, stdout, stderr }));
        });
        if (child.status !== 0) throw new Error(`${node} ${transport}: exited ${child.status}: ${child.stderr}`);
        const { cpuMsPerRequest, wallS } = JSON.parse(child.stdout) as { cpuMsPerRequest: number; wallS: number };
        const key = `${versions.get(node)!}\t${transport}`;
        const figure = figures.get(key) ?? { cpu: [], wall: [] };
        figure.cpu.push(cpuMsPerRequest);
        figure.wall.push(wallS);
        figures.set(key, figure);
      }
    }
  }
  server.close();
  console.log(`${REQUESTS} PATCHes, ${IN_FLIGHT} in flight, ${latency} ms server latency; medians of ${flags.rounds} rounds`);
  console.log('node       transport   cpu ms/request  wall s');
  for (const [key, { cpu, wall }] of figures) {
    const [node, transport] = key.split('\t') as [string, string];
    console.log(`${node.padEnd(10)} ${transport.padEnd(11)} ${median(cpu).toFixed(3).padStart(14)}  ${median(wall).toFixed(2).padStart(6)}`);
    console.log(
      JSON.stringify({ bench: 'http-client', node, transport, requests: REQUESTS, inFlight: IN_FLIGHT, cpuMsPerRequest: median(cpu), wallS: median(wall) }),
    );
  }
}

function version(node: string): string {
  return spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
}

await main();
