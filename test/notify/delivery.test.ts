/**
 * Channels made ready and delivered to real HTTP receivers on loopback, standing in for Slack,
 * Teams and a webhook: each checks the body's shape, and the webhook receiver checks the signature
 * the way a receiver would. Retries, Retry-After, permanent failures and a hanging receiver.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SecretSources } from '../../engine/config/secrets.ts';
import type { NotifyChannel } from '../../engine/config/types.ts';
import { channelsFor, deliver, prepareDelivery, type DeliveryOptions, type ReadyDelivery } from '../../engine/notify/index.ts';
import { DRIFT } from './fixtures.ts';

const HOOK_SECRET = 'throwaway-hook-secret';

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

let server: Server;
let origin: string;
let received: Received[];
/** Per path, the answers still to give, in order; the last one repeats. */
let script: Map<string, ((res: ServerResponse) => void)[]>;

function answer(status: number, body = '', headers: Record<string, string> = {}): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(status, { 'Content-Type': 'text/plain', ...headers });
    res.end(body);
  };
}

/** What a receiver does with X-Contract-Sync-Signature: HMAC-SHA256 of the raw body, compared in constant time. */
function receiverAccepts(request: Received, secret: string): boolean {
  const header = String(request.headers['x-contract-sync-signature'] ?? '');
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
  return header.length === expected.length && timingSafeEqual(Buffer.from(header), expected);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '/';
      received.push({ path: url, headers: req.headers, body: Buffer.concat(chunks) });
      const answers = script.get(url) ?? [answer(200, 'ok')];
      const next = answers.length > 1 ? answers.shift()! : answers[0]!;
      next(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  received = [];
  script = new Map();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function sources(env: Record<string, string> = {}): SecretSources {
  return {
    env: { SLACK_URL: `${origin}/slack`, TEAMS_URL: `${origin}/teams`, HOOK_SECRET, ...env },
    readFile: () => Promise.reject(Object.assign(new Error('no'), { code: 'ENOENT' })),
  };
}

function options(waits: number[] = [], overrides: Partial<DeliveryOptions> = {}): DeliveryOptions {
  return {
    fetch: globalThis.fetch,
    now: Date.now,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  };
}

const CHANNELS: NotifyChannel[] = [
  { name: 'platform-team', kind: 'slack', url: { env: 'SLACK_URL' }, on: ['drift', 'drift-resolved'], tenants: ['acme'] },
  { name: 'ops', kind: 'teams', url: { env: 'TEAMS_URL' }, on: ['drift'] },
  { name: 'audit-sink', kind: 'webhook', url: 'PLACEHOLDER', secret: { env: 'HOOK_SECRET' }, on: ['drift', 'apply'] },
  { name: 'globex-only', kind: 'slack', url: { env: 'SLACK_URL' }, on: ['drift'], tenants: ['globex'] },
];

function channels(): NotifyChannel[] {
  return CHANNELS.map((channel) => (channel.url === 'PLACEHOLDER' ? { ...channel, url: `${origin}/hook` } : channel));
}

async function ready(channel: NotifyChannel, env?: Record<string, string>): Promise<ReadyDelivery> {
  const preparation = await prepareDelivery(channel, DRIFT, sources(env));
  if (!preparation.ok) throw new Error(preparation.warning);
  return preparation.delivery;
}

describe('a drift notification to the three kinds of receiver', () => {
  it('reaches the channels subscribed to drift for acme, each in its shape, the webhook signed', async () => {
    const subscribed = channelsFor(channels(), DRIFT);

    const results = await Promise.all(subscribed.map(async (channel) => deliver(await ready(channel), options())));

    expect(subscribed.map((channel) => channel.name)).toEqual(['platform-team', 'ops', 'audit-sink']);
    expect(results).toEqual([
      { channel: 'platform-team', ok: true, status: 200, attempts: 1, answer: 'ok' },
      { channel: 'ops', ok: true, status: 200, attempts: 1, answer: 'ok' },
      { channel: 'audit-sink', ok: true, status: 200, attempts: 1, answer: 'ok' },
    ]);
    const byPath = new Map(received.map((request) => [request.path, request]));
    const slack = JSON.parse(byPath.get('/slack')!.body.toString('utf8')) as { text: string; blocks: unknown[] };
    expect(slack.text).toBe('Drift in tenant acme: 1 contract changed outside git');
    expect(JSON.stringify(slack.blocks)).toContain('changed by jane@example.com');
    const teams = JSON.parse(byPath.get('/teams')!.body.toString('utf8')) as {
      type: string;
      attachments: { contentType: string; content: { type: string } }[];
    };
    expect(teams).toMatchObject({
      type: 'message',
      attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard' } }],
    });
    const hook = byPath.get('/hook')!;
    expect(receiverAccepts(hook, HOOK_SECRET)).toBe(true);
    expect(receiverAccepts(hook, 'a-wrong-secret')).toBe(false);
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.headers['x-contract-sync-event']).toBe('drift');
    expect(JSON.parse(hook.body.toString('utf8'))).toMatchObject({ version: 1, event: 'drift', tenant: 'acme' });
    for (const request of received) expect(request.body.toString('utf8')).not.toContain(HOOK_SECRET);
  });

  it('selects by event and tenant: an apply goes to the webhook only, globex drift to its own channel and the unfiltered ones', () => {
    expect(channelsFor(channels(), { event: 'apply', tenant: 'acme' }).map((channel) => channel.name)).toEqual(['audit-sink']);
    expect(channelsFor(channels(), { event: 'drift', tenant: 'globex' }).map((channel) => channel.name)).toEqual(['ops', 'audit-sink', 'globex-only']);
  });
});

describe('retries', () => {
  it('retries a 5xx with backoff, then succeeds; every attempt carries the same delivery id and signature', async () => {
    script.set('/hook', [answer(502, 'bad gateway'), answer(503, 'unavailable'), answer(200, 'ok')]);
    const waits: number[] = [];

    const result = await deliver(await ready(channels()[2]!), options(waits));

    expect(result).toEqual({ channel: 'audit-sink', ok: true, status: 200, attempts: 3, answer: 'ok' });
    expect(waits).toEqual([500, 1000]);
    expect(new Set(received.map((request) => request.headers['x-contract-sync-delivery'])).size).toBe(1);
    expect(received.every((request) => receiverAccepts(request, HOOK_SECRET))).toBe(true);
  });

  it('honours a Retry-After that is longer than the backoff', async () => {
    script.set('/slack', [answer(429, 'rate limited', { 'Retry-After': '3' }), answer(200, 'ok')]);
    const waits: number[] = [];

    const result = await deliver(await ready(channels()[0]!), options(waits));

    expect(result.ok).toBe(true);
    expect(waits).toEqual([3000]);
  });

  it('turns a receiver that keeps failing into a warning naming the channel and host, never the URL', async () => {
    script.set('/slack', [answer(500, `boom at ${origin}/slack`)]);

    const result = await deliver(await ready(channels()[0]!), options());

    expect(result).toEqual({
      channel: 'platform-team',
      ok: false,
      status: 500,
      attempts: 4,
      warning: `notify channel platform-team: ${new URL(origin).host} answered 500: boom at [url] after 4 attempts; the message was not delivered`,
    });
  });

  it('does not retry an answer that will not change (a 404: the webhook is gone)', async () => {
    script.set('/teams', [answer(404, 'no_service')]);

    const result = await deliver(await ready(channels()[1]!), options());

    expect(result).toMatchObject({ ok: false, status: 404, attempts: 1 });
    expect(result.ok === false && result.warning).toBe(`notify channel ops: ${new URL(origin).host} answered 404: no_service; the message was not delivered`);
  });

  it('gives up on a receiver that hangs within the deadline', async () => {
    script.set('/hook', [() => undefined]);
    const started = Date.now();

    const result = await deliver(await ready(channels()[2]!), options([], { timeoutMs: 200, deadlineMs: 700, baseDelayMs: 50 }));

    expect(result.ok).toBe(false);
    expect(result.ok === false && result.warning).toMatch(
      /^notify channel audit-sink: 127\.0\.0\.1:\d+ no answer within \d+ ms after \d attempts? \(no time left for another\); the message was not delivered$/,
    );
    expect(Date.now() - started).toBeLessThan(1500);
    server.closeAllConnections();
  });

  it('warns of a receiver that cannot be reached, after its retries', async () => {
    const result = await deliver({ channel: 'x', url: 'http://127.0.0.1:9/x', message: { body: '{}', headers: {} } }, options());

    expect(result).toMatchObject({ ok: false, status: null, attempts: 4 });
  });
});

describe('prepareDelivery', () => {
  it('warns, naming the variable, when a URL reference is unset, and sends nothing', async () => {
    const preparation = await prepareDelivery(channels()[0]!, DRIFT, { env: {}, readFile: () => Promise.reject(new Error('no')) });

    expect(preparation).toEqual({
      ok: false,
      channel: 'platform-team',
      warning: 'notify channel platform-team: its url cannot be resolved: environment variable SLACK_URL is not set',
    });
  });

  it('refuses a resolved URL over http to another host without quoting it', async () => {
    const preparation = await prepareDelivery(channels()[0]!, DRIFT, sources({ SLACK_URL: 'http://hooks.example.com/services/T0/B0/XXXX' }));

    expect(preparation).toEqual({
      ok: false,
      channel: 'platform-team',
      warning:
        'notify channel platform-team: the url in environment variable SLACK_URL is http:// to hooks.example.com, not a loopback host: use https://; nothing was sent',
    });
  });

  it('reads a URL and a key from files', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'notify-'));
    try {
      await writeFile(path.join(dir, 'url'), `${origin}/hook\n`);
      await writeFile(path.join(dir, 'key'), `${HOOK_SECRET}\n`);
      const channel: NotifyChannel = {
        name: 'f',
        kind: 'webhook',
        url: { file: path.join(dir, 'url') },
        secret: { file: path.join(dir, 'key') },
        on: ['drift'],
      };
      const { readFile } = await import('node:fs/promises');

      const preparation = await prepareDelivery(channel, DRIFT, { env: {}, readFile: (file) => readFile(file, 'utf8') });
      const result = preparation.ok ? await deliver(preparation.delivery, options()) : undefined;

      expect(result).toMatchObject({ ok: true, status: 200 });
      expect(receiverAccepts(received.at(-1)!, HOOK_SECRET)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
