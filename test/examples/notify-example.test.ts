/**
 * examples/notify/: the annotated config parses clean, and the documented receivers accept what the
 * engine sends and refuse what it did not sign: the Node receiver as a real process on loopback, the
 * Python check as a real python3 (where one is installed).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/index.ts';
import type { NotifyChannel } from '../../engine/config/types.ts';
import { deliver, prepareDelivery, webhookMessage, type DeliveryOptions } from '../../engine/notify/index.ts';
import { DRIFT } from '../notify/fixtures.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SECRET = 'throwaway-hook-secret';
const PYTHON = spawnSync('python3', ['--version']).status === 0;

const OPTIONS: DeliveryOptions = { fetch: globalThis.fetch, now: Date.now, sleep: async () => undefined, random: () => 0.5, maxAttempts: 1 };

describe('examples/notify/contract-sync.yaml', () => {
  it('parses clean, with api.audit and the three kinds of channel', async () => {
    const { config, diagnostics } = parseConfig('examples/notify/contract-sync.yaml', await readFile(path.join(ROOT, 'examples/notify/contract-sync.yaml')));

    expect(diagnostics).toEqual([]);
    expect(config?.api.audit?.pointer).toBe('/events');
    expect(config?.notify?.map((channel) => channel.kind)).toEqual(['slack', 'teams', 'webhook']);
  });
});

describe('examples/notify/receiver.mjs', () => {
  let child: ChildProcessWithoutNullStreams;
  let lines: AsyncIterator<string>;
  let url: string;

  beforeAll(async () => {
    child = spawn(process.execPath, [path.join(ROOT, 'examples/notify/receiver.mjs')], { env: { ...process.env, HOOK_SECRET: SECRET, PORT: '0' } });
    lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    url = (JSON.parse((await lines.next()).value as string) as { listening: string }).listening;
  });

  afterAll(() => {
    child.kill('SIGTERM');
  });

  function channel(secretVariable: string): NotifyChannel {
    return { name: 'audit-sink', kind: 'webhook', url: `${url}/contract-sync`, secret: { env: secretVariable }, on: ['drift'] };
  }

  it('accepts a signed notification once, however often it is delivered, and refuses one signed with another secret', async () => {
    const sources = { env: { HOOK_SECRET: SECRET, WRONG: 'another-secret' }, readFile: () => Promise.reject(new Error('unused')) };
    const good = await prepareDelivery(channel('HOOK_SECRET'), DRIFT, sources);
    const forged = await prepareDelivery(channel('WRONG'), DRIFT, sources);
    if (!good.ok || !forged.ok) throw new Error('not ready');

    const first = await deliver(good.delivery, OPTIONS);
    const repeat = await deliver(good.delivery, OPTIONS);
    const refused = await deliver(forged.delivery, OPTIONS);

    expect([first.ok, repeat.ok, refused.ok]).toEqual([true, true, false]);
    expect(refused.ok === false && refused.warning).toMatch(/answered 401: bad signature; the message was not delivered$/);
    const printed = JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
    expect(printed).toMatchObject({ event: 'drift', tenant: 'acme', summary: 'Drift in tenant acme: 1 contract changed outside git' });
    // One line only: the repeat and the forged one printed nothing; the next line is the marker below.
    await deliver({ ...good.delivery, message: webhookMessage({ ...DRIFT, tenant: 'marker' }, SECRET) }, OPTIONS);
    expect(JSON.parse((await lines.next()).value as string)).toMatchObject({ tenant: 'marker' });
  });
});

describe.runIf(PYTHON)('examples/notify/verify_signature.py', () => {
  it.each([
    ['a genuine body', 0, 'genuine', (body: string) => body],
    ['an altered body', 1, 'forged or altered', (body: string) => body.replace('acme', 'acmf')],
  ])('exits, for %s, with %i: %s', (_, status, said, alter) => {
    const message = webhookMessage(DRIFT, SECRET);

    const run = spawnSync('python3', [path.join(ROOT, 'examples/notify/verify_signature.py'), message.headers['X-Contract-Sync-Signature']!], {
      input: alter(message.body),
      env: { ...process.env, HOOK_SECRET: SECRET },
      encoding: 'utf8',
    });

    expect(run.status).toBe(status);
    expect(run.stdout.trim()).toBe(said);
  });
});
