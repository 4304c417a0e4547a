/**
 * Notifications from the runs themselves, against the emulator and local HTTP receivers standing in
 * for Slack, Teams and a webhook, over a real git repository and the file state store: a drift told
 * once to each subscribed channel (attributed to the UI user from the service's audit events), not
 * told again by the scheduled runs that follow, resolved once; apply, apply-failed and
 * policy-denied; receivers that answer 500 or hang are warnings in the outcome and the report,
 * within the bound, the run's result unchanged, and the drift is told by the next run.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type Seed } from '../../emulator/index.ts';
import { renderDriftText } from '../../engine/drift/render-text.ts';
import { run, systemClock, type DriftRunOutcome, type RunEffects } from '../../engine/index.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { liveContract } from '../helpers/fleet.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

const HOOK_SECRET = 'throwaway-hook-secret';
const SECRETS = { SECRET_ACME: 'throwaway-secret-acme-0123456789', SECRET_GLOBEX: 'throwaway-secret-globex-0123456789' };

interface Received {
  readonly path: string;
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

/** Answers per path: a status, or `hang` (never answers). */
type Behaviour = number | 'hang';

interface Receiver {
  readonly origin: string;
  readonly received: Received[];
  readonly behaviour: Map<string, Behaviour>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const behaviour = new Map<string, Behaviour>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '';
      received.push({ path: url, body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      const answer = behaviour.get(url) ?? (url === '/teams' ? 202 : 200);
      if (answer === 'hang') return;
      res.writeHead(answer).end(url === '/slack' && answer === 200 ? 'ok' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    behaviour,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups = cleanupsAfterEach();

function seed(): Seed {
  return {
    realm: 'cms',
    tokenTtlSeconds: 3600,
    rateLimit: { requestsPerSecond: 10_000, burst: 10_000 },
    tenants: {
      acme: {
        clients: [{ clientId: 'cs-acme', secret: SECRETS.SECRET_ACME, scopes: ['core:read', 'core:write', 'audit:read'] }],
        contracts: { '4711': { Name: 'Cleaning' }, '4712': { Name: 'Catering' } },
      },
      globex: {
        clients: [{ clientId: 'cs-globex', secret: SECRETS.SECRET_GLOBEX, scopes: ['core:read', 'core:write', 'audit:read'] }],
        contracts: { '9001': { Name: 'Lease' } },
      },
    },
  };
}

const ACME_YAML = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
  "4712":
    Name: Catering
`;

const GLOBEX_YAML = `tenant: globex
contracts:
  "9001":
    Name: Office lease
`;

function configYaml(service: Emulator, hooks: Receiver, extra: { auditPointer?: string; policies?: string } = {}): string {
  return [
    'api:',
    `  baseUrl: "${service.urls.baseUrl}"`,
    '  read: { path: "/contract/{id}" }',
    `  audit: { path: "/audit/events?contractId={id}", pointer: ${extra.auditPointer ?? '/events'}, fields: { actor: /actor, time: /time, contractFields: /fields, id: /id } }`,
    `auth: { url: "${service.urls.authUrl}", realm: ${service.urls.realm} }`,
    'tenants:',
    '  acme: { clientId: cs-acme, clientSecret: { env: SECRET_ACME } }',
    '  globex: { clientId: cs-globex, clientSecret: { env: SECRET_GLOBEX } }',
    'notify:',
    '  - { name: platform-team, kind: slack, url: { env: SLACK_URL }, on: [drift, drift-resolved, apply-failed, policy-denied], tenants: [acme] }',
    '  - { name: contract-owners, kind: teams, url: { env: TEAMS_URL }, on: [drift] }',
    `  - { name: audit-sink, kind: webhook, url: "${hooks.origin}/hook", secret: { env: HOOK_SECRET }, on: [drift, drift-resolved, apply, apply-failed, policy-denied] }`,
    ...(extra.policies === undefined ? [] : [extra.policies]),
    '',
  ].join('\n');
}

async function setup(
  extra: { auditPointer?: string; policies?: string; files?: Record<string, string> } = {},
): Promise<{ repo: TestRepo; service: Emulator; hooks: Receiver; env: Record<string, string> }> {
  const service = await startEmulator(seed());
  cleanups.push(() => service.close());
  const hooks = await startReceiver();
  cleanups.push(() => hooks.close());
  const repo = await createRepo({
    'contract-sync.yaml': configYaml(service, hooks, extra),
    'contracts/acme.yaml': ACME_YAML,
    'contracts/globex.yaml': GLOBEX_YAML,
    '.gitignore': '.contract-sync/\n',
    ...extra.files,
  });
  cleanups.push(repo.cleanup);
  const env = { ...SECRETS, HOOK_SECRET, SLACK_URL: `${hooks.origin}/slack`, TEAMS_URL: `${hooks.origin}/teams` };
  return { repo, service, hooks, env };
}

/** An edit in the service's UI: recorded as an audit event by `actor`. */
async function editByHand(service: Emulator, tenant: string, id: string, fields: ContractFields, actor: string): Promise<void> {
  const response = await fetch(`${service.urls.adminUrl}/contracts/${tenant}/${id}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', 'X-Actor': actor },
    body: JSON.stringify(fields),
  });
  expect(response.ok).toBe(true);
}

function effects(repo: TestRepo, env: Record<string, string>, notify?: RunEffects['notify']): RunEffects {
  return { cwd: repo.dir, env, clock: systemClock, ...(notify ? { notify } : {}) };
}

function drift(repo: TestRepo, env: Record<string, string>, notify?: RunEffects['notify']): Promise<DriftRunOutcome> {
  return run({ kind: 'drift', mode: 'report', where: { repo: '.' }, lockTimeoutMs: 5000, removals: { allow: false } }, effects(repo, env, notify));
}

/** What each receiver got, as `path event tenant` (the webhook's event header; Slack's and Teams' headline). */
function told(received: readonly Received[]): string[] {
  return received.map((request) => {
    const body = JSON.parse(request.body) as { text?: string; summary?: string; attachments?: { content: { body: { text: string }[] } }[] };
    const headline = body.summary ?? body.text ?? body.attachments?.[0]?.content.body[0]?.text ?? '';
    return `${request.path} ${headline}`;
  });
}

describe('notifications from the runs', () => {
  it('tells a drift once to each subscribed channel, attributed; the scheduled runs after it tell nothing; its resolution once', async () => {
    const { repo, service, hooks, env } = await setup();
    const applied = await runCli(['apply'], repo.dir, env);
    expect(applied.code, applied.stderr).toBe(0);
    const afterApply = told(hooks.received.splice(0));
    await editByHand(service, 'acme', '4711', { ...(await liveContract(service, 'acme', '4711')), Name: 'Cleaning (edited by hand)' }, 'jane@example.com');
    await editByHand(service, 'globex', '9001', { Name: 'Lease (edited)' }, 'sam@example.com');

    const first = await drift(repo, env);
    const firstTold = hooks.received.splice(0);
    const repeats: string[][] = [];
    for (let scheduled = 0; scheduled < 3; scheduled += 1) {
      const again = await drift(repo, env);
      expect(again.kind === 'checked' && again.drift.summary.drifted).toBe(2);
      repeats.push(told(hooks.received.splice(0)));
    }
    const memory = JSON.parse(await readFile(path.join(repo.dir, '.contract-sync/state/.drift-notified/acme.json'), 'utf8')) as { drift: object };
    const fixed = await runCli(['drift', '--fix'], repo.dir, env);
    const afterFix = told(hooks.received.splice(0));
    const quiet = await drift(repo, env);
    const afterQuiet = told(hooks.received.splice(0));

    expect(afterApply).toEqual(['/hook Applied to tenant acme: 1 contract changed', '/hook Applied to tenant globex: 1 contract changed']);
    expect(first.kind).toBe('checked');
    if (first.kind !== 'checked') return;
    // Slack hears of acme only (tenants: [acme]); Teams and the webhook of both.
    expect(told(firstTold).sort()).toEqual([
      '/hook Drift in tenant acme: 1 contract changed outside git',
      '/hook Drift in tenant globex: 1 contract changed outside git',
      '/slack Drift in tenant acme: 1 contract changed outside git',
      '/teams Drift in tenant acme: 1 contract changed outside git',
      '/teams Drift in tenant globex: 1 contract changed outside git',
    ]);
    for (const request of firstTold) {
      expect(request.body).toMatch(/jane@example\.com|sam@example\.com/);
      expect(request.body).not.toContain(SECRETS.SECRET_ACME);
      expect(request.body).not.toContain('edited by hand');
    }
    const hook = firstTold.find((request) => request.path === '/hook' && request.body.includes('"acme"'))!;
    expect(hook.headers['x-contract-sync-signature']).toBe(`sha256=${createHmac('sha256', HOOK_SECRET).update(hook.body).digest('hex')}`);
    expect(hook.headers['x-contract-sync-event']).toBe('drift');
    expect(JSON.parse(hook.body)).toMatchObject({
      event: 'drift',
      tenant: 'acme',
      contracts: [
        {
          id: '4711',
          file: 'contracts/acme.yaml',
          fields: [{ field: 'Name', changedBy: { actor: 'jane@example.com', eventId: expect.stringMatching(/^evt-/) } }],
        },
      ],
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      next: expect.stringContaining('contract-sync drift --fix'),
    });
    // The report names the actor too.
    expect(renderDriftText(first.drift)).toMatch(/Name: .* changed by jane@example\.com at \S+ \(event evt-\d+\)/);
    expect(first.drift.warnings).toBeUndefined();
    expect(repeats).toEqual([[], [], []]);
    expect(Object.keys(memory.drift)).toEqual(['4711']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(afterFix.sort()).toEqual([
      '/hook Applied to tenant acme: 1 contract changed',
      '/hook Applied to tenant globex: 1 contract changed',
      '/hook Drift resolved in tenant acme: 1 contract matches git again',
      '/hook Drift resolved in tenant globex: 1 contract matches git again',
      '/slack Drift resolved in tenant acme: 1 contract matches git again',
    ]);
    expect(quiet.kind === 'checked' && quiet.drift.summary.drifted).toBe(0);
    expect(afterQuiet).toEqual([]);
  });

  it('turns receivers that answer 500 or hang into warnings within the bound, the result unchanged; the next run tells the drift', async () => {
    const { repo, service, hooks, env } = await setup();
    expect((await runCli(['apply'], repo.dir, env)).code).toBe(0);
    hooks.received.splice(0);
    await editByHand(service, 'acme', '4711', { Name: 'Cleaning (edited by hand)' }, 'jane@example.com');
    hooks.behaviour.set('/slack', 500);
    hooks.behaviour.set('/teams', 'hang');
    hooks.behaviour.set('/hook', 500);
    const bounds = { delivery: { timeoutMs: 300, deadlineMs: 1500, baseDelayMs: 10, maxDelayMs: 20 } };

    const started = Date.now();
    const failing = await drift(repo, env, bounds);
    const took = Date.now() - started;
    hooks.behaviour.clear();
    hooks.received.splice(0);
    const next = await drift(repo, env, bounds);
    const nextTold = told(hooks.received.splice(0));

    expect(failing.kind).toBe('checked');
    if (failing.kind !== 'checked') return;
    expect(failing.drift.summary.drifted).toBe(1);
    const host = new URL(hooks.origin).host;
    expect(failing.drift.warnings?.map((warning) => warning.message).sort()).toEqual([
      `notify channel audit-sink: ${host} answered 500 after 4 attempts; the drift message of tenant acme was not delivered`,
      expect.stringMatching(
        new RegExp(
          `^notify channel contract-owners: ${host} no answer within \\d+ ms after \\d attempts?( \\(no time left for another\\))?; the drift message of tenant acme was not delivered$`,
        ),
      ),
      `notify channel platform-team: ${host} answered 500 after 4 attempts; the drift message of tenant acme was not delivered`,
    ]);
    // The bound, and a little for the run itself.
    expect(took).toBeLessThan(1500 + 5000);
    expect(renderDriftText(failing.drift)).toMatch(/\nWarnings:\n( {2}notify channel [a-z-]+: 127\.0\.0\.1:\d+ .*\n){3}\n/);
    expect(JSON.stringify(failing.drift)).not.toContain('/slack');
    expect(nextTold.sort()).toEqual([
      '/hook Drift in tenant acme: 1 contract changed outside git',
      '/slack Drift in tenant acme: 1 contract changed outside git',
      '/teams Drift in tenant acme: 1 contract changed outside git',
    ]);
    expect(next.kind === 'checked' && next.drift.warnings).toBeUndefined();
  });

  it('keeps the exit codes of apply and drift when a channel refuses: the warning is in the text, markdown and JSON reports', async () => {
    const { repo, service, hooks, env } = await setup();
    hooks.behaviour.set('/hook', 404);

    const applied = await runCli(['apply', '--report', 'apply-report.json'], repo.dir, env);
    await editByHand(service, 'acme', '4711', { Name: 'Cleaning (edited by hand)' }, 'jane@example.com');
    const text = await runCli(['drift', '--detailed-exitcode'], repo.dir, env);
    hooks.behaviour.set('/hook', 410);
    await editByHand(service, 'acme', '4712', { Name: 'Catering (edited)' }, 'jane@example.com');
    const json = await runCli(['drift', '--format', 'json'], repo.dir, env);
    await editByHand(service, 'globex', '9001', { Name: 'Lease (edited)' }, 'sam@example.com');
    const markdown = await runCli(['drift', '--format', 'markdown'], repo.dir, env);

    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(
      /\nWarnings:\n {2}notify channel audit-sink: 127\.0\.0\.1:\d+ answered 404; the apply message of tenant acme was not delivered\n/,
    );
    expect(JSON.parse(await readFile(path.join(repo.dir, 'apply-report.json'), 'utf8'))).toMatchObject({
      warnings: [
        { code: 'notify-delivery', channel: 'audit-sink', event: 'apply', tenant: 'acme' },
        { code: 'notify-delivery', channel: 'audit-sink', event: 'apply', tenant: 'globex' },
      ],
    });
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(
      /Warnings:\n {2}notify channel audit-sink: 127\.0\.0\.1:\d+ answered 404; the drift message of tenant acme was not delivered\n/,
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      warnings: [{ code: 'notify-delivery', channel: 'audit-sink', event: 'drift', tenant: 'acme', message: expect.stringContaining('answered 410') }],
    });
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toMatch(
      /#### Warnings\n\n- notify channel audit-sink: 127\.0\.0\.1:\d+ answered 410; the drift message of tenant globex was not delivered\n/,
    );
  });

  it('tells apply-failed for a contract the service does not have, and policy-denied for a change a rule denies', async () => {
    const policies = [
      'policies:',
      '  - name: catering-name-frozen',
      '    on: change',
      '    validations:',
      '      - expression: \'!(id == "4712" && ops.exists(o, o.path == "/Contract/Name"))\'',
      '        message: the catering contract keeps its name',
      '    action: deny',
    ].join('\n');
    const { repo, hooks, env } = await setup({ files: { 'contracts/acme.yaml': `${ACME_YAML}  "4799":\n    Name: Not on the service\n` } });
    const failed = await runCli(['apply'], repo.dir, env);
    const failedTold = hooks.received.splice(0);
    const denied = await setup({ policies, files: { 'contracts/acme.yaml': ACME_YAML.replace('Name: Catering', 'Name: Catering 2027') } });
    const deniedRun = await runCli(['apply'], denied.repo.dir, denied.env);
    const deniedTold = told(denied.hooks.received.splice(0));

    expect(failed.code).toBe(1);
    expect(told(failedTold).sort()).toEqual([
      '/hook Applied to tenant acme: 1 contract changed',
      '/hook Applied to tenant globex: 1 contract changed',
      '/hook Apply failed in tenant acme: 1 contract not applied',
      '/slack Apply failed in tenant acme: 1 contract not applied',
    ]);
    const failure = JSON.parse(failedTold.find((request) => request.path === '/hook' && request.body.includes('Apply failed'))!.body) as {
      contracts: unknown[];
    };
    expect(failure.contracts).toEqual([
      expect.objectContaining({ id: '4799', fields: [], reason: expect.stringContaining('the service has no contract 4799') }),
    ]);
    expect(deniedRun.code).toBe(1);
    expect(deniedTold.sort()).toEqual(['/hook Policy denied in tenant acme: 1 contract', '/slack Policy denied in tenant acme: 1 contract']);
  });

  it('warns once, naming the setting, when the audit pointer finds nothing, and says unattributed', async () => {
    const { repo, service, env } = await setup({ auditPointer: '/items' });
    expect((await runCli(['apply'], repo.dir, env)).code).toBe(0);
    await editByHand(service, 'acme', '4711', { Name: 'Cleaning (edited by hand)' }, 'jane@example.com');
    await editByHand(service, 'acme', '4712', { Name: 'Catering (edited)' }, 'jane@example.com');

    const outcome = await drift(repo, env);

    expect(outcome.kind).toBe('checked');
    if (outcome.kind !== 'checked') return;
    expect(outcome.drift.warnings).toEqual([
      {
        code: 'audit-events',
        setting: 'api.audit.pointer',
        message: expect.stringMatching(
          /^audit events: expected a list of events at "\/items", found nothing there .*: set api\.audit\.pointer \(2 contracts: fields unattributed, e\.g\. acme\/471\d\)$/,
        ),
      },
    ]);
    expect(outcome.drift.tenants[0]!.contracts.flatMap((contract) => contract.drift.map((item) => item.attribution))).toEqual([
      { field: 'Name', attributed: false, reason: 'not-read' },
      { field: 'Name', attributed: false, reason: 'not-read' },
    ]);
  });
});
