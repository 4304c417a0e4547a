/**
 * sendAll: a run's notifications to their channels within one bound, against a local receiver that
 * hangs: however many messages there are, the deliveries end by the deadline, and those that could
 * not start are said not sent. A channel nobody subscribed is not posted to.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotifyChannel } from '../../engine/config/types.ts';
import { systemClock } from '../../engine/io/clock.ts';
import { sendAll } from '../../engine/notify/send-all.ts';
import type { Notification } from '../../engine/notify/types.ts';

let server: Server;
let origin: string;
const paths: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    if (req.url === '/hang') return;
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function notification(tenant: string): Notification {
  return { event: 'drift', tenant, time: '2027-03-01T09:20:00.000Z', contracts: [{ id: '4711', fields: [{ field: 'Name' }] }] };
}

function options(channels: NotifyChannel[]): Parameters<typeof sendAll>[1] {
  return {
    channels,
    sources: { env: { HOOK_SECRET: 'throwaway-hook-secret' }, readFile: () => Promise.reject(new Error('unused')) },
    delivery: {
      fetch: globalThis.fetch,
      now: systemClock.now,
      sleep: (ms) => systemClock.sleep(ms),
      random: () => 0.5,
      timeoutMs: 150,
      baseDelayMs: 10,
      maxDelayMs: 20,
    },
    deadlineMs: 700,
    concurrency: 2,
  };
}

describe('sendAll', () => {
  it('ends every delivery by the deadline however many there are, saying which were not sent', async () => {
    const hanging: NotifyChannel = { name: 'audit-sink', kind: 'webhook', url: `${origin}/hang`, secret: { env: 'HOOK_SECRET' }, on: ['drift'] };
    const tenants = Array.from({ length: 12 }, (_, index) => `t${index}`);

    const started = Date.now();
    const result = await sendAll(tenants.map(notification), options([hanging]));
    const took = Date.now() - started;

    expect(took).toBeLessThan(700 + 500);
    expect(result.sent.map((sent) => sent.told)).toEqual(tenants.map(() => false));
    expect(result.warnings).toHaveLength(12);
    expect(result.warnings.filter((warning) => warning.message.includes("not sent: the notifications' 700 ms were spent")).length).toBeGreaterThan(0);
    expect(result.warnings.filter((warning) => /no answer within \d+ ms/.test(warning.message)).length).toBeGreaterThan(0);
  });

  it('posts only to the channels that hear of the event and tenant; a message nobody hears of counts as told', async () => {
    paths.length = 0;
    const channels: NotifyChannel[] = [
      { name: 'acme-only', kind: 'webhook', url: `${origin}/acme`, secret: { env: 'HOOK_SECRET' }, on: ['drift'], tenants: ['acme'] },
      { name: 'applies', kind: 'webhook', url: `${origin}/applies`, secret: { env: 'HOOK_SECRET' }, on: ['apply'] },
    ];

    const result = await sendAll([notification('acme'), notification('globex')], options(channels));

    // A request of the test before may still reach '/hang' (it gave up on them, their sockets live on): not this test's.
    expect(paths.filter((path) => path !== '/hang')).toEqual(['/acme']);
    expect(result.sent.map((sent) => [sent.notification.tenant, sent.results.length, sent.told])).toEqual([
      ['acme', 1, true],
      ['globex', 0, true],
    ]);
    expect(result.warnings).toEqual([]);
  });
});
