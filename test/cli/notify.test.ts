/** `contract-sync notify test`: a sample to each channel, against local receivers; what each answered, and the exit code. */
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';

const HOOK_SECRET = 'throwaway-hook-secret';

let server: Server;
let origin: string;
let dir: string;
const received: { path: string; body: string; signature: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
        signature: req.headers['x-contract-sync-signature'] as string | undefined,
      });
      if (req.url === '/gone') res.writeHead(404).end('no_service');
      else res.writeHead(req.url === '/teams' ? 202 : 200).end(req.url === '/slack' ? 'ok' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(path.join(tmpdir(), 'notify-cli-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

async function repo(name: string, notify: string): Promise<string> {
  const root = path.join(dir, name);
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, 'contract-sync.yaml'), configYaml(['acme'], notify));
  return root;
}

const ENV = { SLACK_URL: '', TEAMS_URL: '', HOOK_SECRET };

describe('contract-sync notify test', () => {
  it('sends a test message to every channel, and says what each answered', async () => {
    const root = await repo(
      'all',
      `notify:\n  - { name: platform-team, kind: slack, url: { env: SLACK_URL }, on: [drift] }\n  - { name: ops, kind: teams, url: { env: TEAMS_URL }, on: [apply-failed] }\n  - { name: audit-sink, kind: webhook, url: "${origin}/hook", secret: { env: HOOK_SECRET }, on: [apply] }\n`,
    );
    received.length = 0;

    const run = await runCli(['notify', 'test'], root, { ...ENV, SLACK_URL: `${origin}/slack`, TEAMS_URL: `${origin}/teams` });

    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '  ok      platform-team (slack): answered 200: ok (1 attempt)',
        '  ok      ops (teams): answered 202 (1 attempt)',
        '  ok      audit-sink (webhook): answered 200 (1 attempt)',
        '3 channels took the test message.',
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(0);
    expect(received.map((request) => request.path).sort()).toEqual(['/hook', '/slack', '/teams']);
    const hook = received.find((request) => request.path === '/hook')!;
    expect(hook.signature).toBe(`sha256=${createHmac('sha256', HOOK_SECRET).update(hook.body).digest('hex')}`);
    expect(JSON.parse(hook.body)).toMatchObject({
      event: 'apply',
      sample: true,
      tenant: 'acme',
      summary: '[test message] Applied to tenant acme: 1 contract changed',
    });
    expect(received.find((request) => request.path === '/slack')!.body).toContain('[test message] Drift in tenant acme');
  });

  it('tries one channel with --channel, and exits 1 when it does not take the message, printing no URL', async () => {
    const root = await repo(
      'gone',
      `notify:\n  - { name: platform-team, kind: slack, url: { env: SLACK_URL }, on: [drift] }\n  - { name: ops, kind: teams, url: { env: TEAMS_URL }, on: [drift] }\n`,
    );
    received.length = 0;

    const run = await runCli(['notify', 'test', '--channel', 'platform-team'], root, { ...ENV, SLACK_URL: `${origin}/gone`, TEAMS_URL: `${origin}/teams` });

    expect(run.stdout).toBe(
      `  failed  platform-team (slack): notify channel platform-team: ${new URL(origin).host} answered 404: no_service; the message was not delivered\n1 of 1 channel did not take the test message.\n`,
    );
    expect(run.stdout).not.toContain('/gone');
    expect(run.code).toBe(1);
    expect(received.map((request) => request.path)).toEqual(['/gone']);
  });

  it('says which variable is missing, and sends nothing to that channel', async () => {
    const root = await repo('unset', 'notify:\n  - { name: platform-team, kind: slack, url: { env: SLACK_URL }, on: [drift] }\n');

    const run = await runCli(['notify', 'test'], root, {});

    expect(run.stdout).toBe(
      '  failed  platform-team (slack): notify channel platform-team: its url cannot be resolved: environment variable SLACK_URL is not set\n1 of 1 channel did not take the test message.\n',
    );
    expect(run.code).toBe(1);
  });

  it.each([
    [
      ['notify', 'test', '--channel', 'platform-tem'],
      'contract-sync notify: no notify channel platform-tem in contract-sync.yaml; did you mean platform-team?; see contract-sync notify --help\n',
    ],
    [['notify'], 'contract-sync notify: name what to do: contract-sync notify test; see contract-sync notify --help\n'],
    [['notify', 'send'], 'contract-sync notify: unknown notify action "send"; the one action is test; see contract-sync notify --help\n'],
  ])('refuses %j', async (args, stderr) => {
    const root = await repo('usage', 'notify:\n  - { name: platform-team, kind: slack, url: { env: SLACK_URL }, on: [drift] }\n');

    const run = await runCli(args, root, {});

    expect(run.stderr).toBe(stderr);
    expect(run.code).toBe(1);
  });

  it('exits 1 for a config without notify:, or with a bad channel at its line', async () => {
    const none = await repo('none', '');
    const bad = await repo('bad', 'notify:\n  - { name: a, kind: slack, url: "https://hooks.slack.com/services/T0/B0/XXXX", on: [drift] }\n');

    const withoutSection = await runCli(['notify', 'test'], none, {});
    const withBadChannel = await runCli(['notify', 'test'], bad, {});

    expect(withoutSection.stderr).toBe('contract-sync notify: contract-sync.yaml has no notify: section; docs/notifications.md says how to add channels\n');
    expect(withoutSection.code).toBe(1);
    expect(withBadChannel.stdout).toMatch(/^contract-sync\.yaml:8:34 +notify\[0\]\.url +a Slack webhook URL is a secret/m);
    expect(withBadChannel.stdout).not.toContain('XXXX');
    expect(withBadChannel.code).toBe(1);
  });
});
