/**
 * Issue 21, item 12: a 429 that publishes the service's quota (RateLimit-Policy, RateLimit) teaches
 * the lane's pacer, as a success carrying them does. The emulator's 429s carry only Retry-After, so
 * a tiny local HTTP server answers here: the first PATCH gets 429 with a policy of 10 requests per
 * second and nothing left, every later one 204 with no rate headers. Real ApiClient, real lane.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import PQueue from 'p-queue';
import { afterEach, expect, it } from 'vitest';
import { createApiClient } from '../../engine/api/client.ts';
import { retryBudget } from '../../engine/apply/retry-policy.ts';
import { TenantLane } from '../../engine/apply/tenant-lane.ts';
import type { TenantTokens } from '../../engine/auth/index.ts';
import { systemClock } from '../../engine/io/clock.ts';
import { silentLogger } from '../../engine/log/logger.ts';
import type { Op } from '../../engine/model/types.ts';

let server: Server | undefined;

afterEach(async () => {
  server?.close();
  server = undefined;
});

const tokens: TenantTokens = { get: async () => 'token', invalidate: () => undefined };

it('spaces the requests after a 429 by the quota the 429 publishes, instead of sending them at once into the next one', { timeout: 20_000 }, async () => {
  const arrivals: number[] = [];
  server = createServer((request, response) => {
    request.resume();
    arrivals.push(performance.now());
    if (arrivals.length === 1) {
      response.writeHead(429, { 'RateLimit-Policy': '"default";q=10;w=1', RateLimit: '"default";r=0;t=1', 'Retry-After': '1' });
      response.end();
      return;
    }
    response.writeHead(204);
    response.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const api = createApiClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    timeoutMs: 5000,
    userAgent: 'contract-sync/test',
    correlationId: 'run-429',
  });
  const lane = new TenantLane({
    tenant: 'acme',
    requestsPerSecond: 1000,
    concurrency: 1,
    budget: retryBudget(5),
    inFlight: new PQueue({ concurrency: 8 }),
    tokens,
    clock: systemClock,
    random: () => 0.5,
    logger: silentLogger(),
  });

  const ops: Op[] = [{ op: 'Replace', path: '/Contract/Name', value: 'x' }];
  await Promise.all(
    ['C-1', 'C-2', 'C-3', 'C-4', 'C-5'].map((id) => lane.call({ kind: 'patch', contractId: id, resendable: true }, (token) => api.patch(id, ops, token))),
  );
  lane.close();

  // 429, then 5 sends (the first one again); after the pause, a policy of 10/s spaces them 100 ms apart.
  // Judged over the four gaps together: on a busy machine one send may leave late and the next on
  // time (a gap of 50 ms after one of 150 ms), while sent at once all five would arrive within a few ms.
  expect(arrivals).toHaveLength(6);
  expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(950);
  expect(arrivals[5]! - arrivals[1]!).toBeGreaterThanOrEqual(4 * 80);
  expect(lane.counters).toEqual({ requests: 6, retries: 1, throttles: 1 });
});
