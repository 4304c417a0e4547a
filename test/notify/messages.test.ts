/** The pure message builders: Slack blocks, a Teams Adaptive Card, the signed webhook body; inert text, no secret. */
import { describe, expect, it } from 'vitest';
import type { NotifyEvent } from '../../engine/config/types.ts';
import { slackMessage, teamsMessage, verifySignature, webhookBody, webhookMessage, type Notification } from '../../engine/notify/index.ts';
import { COMMIT, DRIFT } from './fixtures.ts';

const HOSTILE: Notification = {
  ...DRIFT,
  contracts: [
    {
      id: '<!channel> [x](https://evil.example)',
      file: 'a\u202eb.yaml',
      fields: [{ field: 'Name', attribution: { field: 'Name', attributed: true, actor: '<@U123>*bold*', time: DRIFT.time } }],
    },
  ],
};

describe('slackMessage', () => {
  it('says the tenant, each contract with its fields and who changed them, the commit, the CI run and what to run next', () => {
    const body = JSON.parse(slackMessage(DRIFT).body) as { text: string; blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[] };

    expect(body.text).toBe('Drift in tenant acme: 1 contract changed outside git');
    expect(body.blocks.map((block) => block.text?.text ?? block.elements?.[0]?.text)).toEqual([
      '*Drift in tenant acme: 1 contract changed outside git*',
      '*4711* (contracts/acme/facilities.yaml:4)\n• Name: changed by jane@example.com at 2027-03-01T09:15:00.000Z (event evt-000002)\n• Comment: unattributed (no audit event changed it)',
      '*Next:* Run `contract-sync drift --fix` to put the service back as git says, or change the desired state in git to keep the edit.',
      `commit <https://github.com/example/contracts/commit/${COMMIT}|${COMMIT.slice(0, 12)}> · <https://github.com/example/contracts/actions/runs/42|CI run> · 2027-03-01T09:20:00.000Z`,
    ]);
  });

  it('never turns data into a mention, a link or hidden text', () => {
    const text = slackMessage(HOSTILE).body;

    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<@U123>');
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).toContain('a\\\\u202eb.yaml');
  });
});

describe('teamsMessage', () => {
  it('is a Workflows message carrying an Adaptive Card with the contracts as facts and links to the run and the commit', () => {
    const message = JSON.parse(teamsMessage(DRIFT).body) as {
      type: string;
      attachments: { contentType: string; content: { type: string; version: string; body: Record<string, unknown>[]; actions: unknown[] } }[];
    };

    expect(message.type).toBe('message');
    expect(message.attachments).toHaveLength(1);
    const [{ contentType, content }] = message.attachments as [(typeof message.attachments)[number]];
    expect(contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(content.body[0]).toMatchObject({ type: 'TextBlock', text: 'Drift in tenant acme: 1 contract changed outside git' });
    expect(content.body).toContainEqual({
      type: 'FactSet',
      spacing: 'None',
      facts: [
        { title: 'Name', value: 'changed by jane@example.com at 2027-03-01T09:15:00.000Z (event evt-000002)' },
        { title: 'Comment', value: 'unattributed (no audit event changed it)' },
      ],
    });
    expect(content.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'CI run', url: 'https://github.com/example/contracts/actions/runs/42' },
      { type: 'Action.OpenUrl', title: 'Commit', url: `https://github.com/example/contracts/commit/${COMMIT}` },
    ]);
  });

  it('escapes markdown in data, so a contract id is no link', () => {
    const body = teamsMessage(HOSTILE).body;

    expect(body).toContain('\\\\[x\\\\](https://evil.example)');
    expect(body).toContain('\\\\*bold\\\\*');
  });
});

describe('the webhook', () => {
  it('sends a versioned JSON body with fields and attributions, no values', () => {
    const body = JSON.parse(webhookBody(DRIFT)) as unknown;

    expect(body).toEqual({
      version: 1,
      event: 'drift',
      tenant: 'acme',
      time: '2027-03-01T09:20:00.000Z',
      summary: 'Drift in tenant acme: 1 contract changed outside git',
      contracts: [
        {
          id: '4711',
          file: 'contracts/acme/facilities.yaml',
          line: 4,
          fields: [
            { field: 'Name', changedBy: { actor: 'jane@example.com', time: '2027-03-01T09:15:00.000Z', eventId: 'evt-000002' } },
            { field: 'Comment', unattributed: 'no-event' },
          ],
        },
      ],
      commit: COMMIT,
      commitUrl: `https://github.com/example/contracts/commit/${COMMIT}`,
      run: { provider: 'github', url: 'https://github.com/example/contracts/actions/runs/42' },
      next: 'Run `contract-sync drift --fix` to put the service back as git says, or change the desired state in git to keep the edit.',
    });
  });

  it('signs the body with the secret, which it never carries, and names the event and a delivery id stable across retries', () => {
    const message = webhookMessage(DRIFT, 'throwaway-hook-secret');

    expect(message.headers['X-Contract-Sync-Signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature(message.body, 'throwaway-hook-secret', message.headers['X-Contract-Sync-Signature'])).toBe(true);
    expect(verifySignature(message.body, 'another-secret', message.headers['X-Contract-Sync-Signature'])).toBe(false);
    expect(verifySignature(`${message.body} `, 'throwaway-hook-secret', message.headers['X-Contract-Sync-Signature'])).toBe(false);
    expect(message.body).not.toContain('throwaway-hook-secret');
    expect(message.headers['X-Contract-Sync-Event']).toBe('drift');
    expect(webhookMessage(DRIFT, 'throwaway-hook-secret').headers['X-Contract-Sync-Delivery']).toBe(message.headers['X-Contract-Sync-Delivery']);
  });
});

describe('wording', () => {
  it.each([
    ['drift-resolved', 'Drift resolved in tenant acme: 1 contract matches git again', 'Nothing to do.'],
    ['apply', 'Applied to tenant acme: 1 contract changed', 'Nothing to do.'],
    ['apply-failed', 'Apply failed in tenant acme: 1 contract not applied', "Read the run's log, fix the cause, then run `contract-sync apply` again."],
    [
      'policy-denied',
      'Policy denied in tenant acme: 1 contract',
      'Change the contract in git so that the policy holds, or apply with `--override-policy NAME --reason TEXT` where the policy allows an override.',
    ],
  ] as const)('%s says what happened and what to run next', (event: NotifyEvent, summary, next) => {
    const body = JSON.parse(webhookBody({ ...DRIFT, event })) as { summary: string; next: string };

    expect(body).toMatchObject({ summary, next });
  });

  it('names the rules that denied a run, how to make them hold, and the override only where a rule allows one', () => {
    const denied: Notification = { ...DRIFT, event: 'policy-denied', denials: { rules: ['frozen'], overridable: false }, rerun: 'contract-sync apply' };
    const overridable: Notification = { ...denied, denials: { rules: ['frozen', 'expenses-rise'], overridable: true }, rerun: 'contract-sync drift --fix' };

    const next = (JSON.parse(webhookBody(denied)) as { next: string }).next;

    expect(next).toBe(
      'Policy rule frozen denies, so `contract-sync apply` would send nothing. Change the contract in git so that the rule holds, ' +
        'or add an exception for the finding under policyExceptions in the config (an owner, a reason, an expiry date), then run `contract-sync apply`.',
    );
    expect((JSON.parse(webhookBody(overridable)) as { next: string }).next).toMatch(
      /^Policy rules frozen, expenses-rise deny, so `contract-sync drift --fix` would send nothing\. .* A rule whose action is override can instead be lifted for one run: `contract-sync drift --fix --override-policy NAME --reason TEXT`\.$/,
    );
  });

  it('says to fix or except a policy finding that stands, not to run drift --fix, which would send nothing', () => {
    const denied: Notification = { ...DRIFT, denials: { rules: ['dora-owner'], overridable: false } };

    const body = JSON.parse(webhookBody(denied)) as { next: string };
    const slack = slackMessage(denied).body;

    expect(body.next).toBe(
      'Policy rule dora-owner denies, so `contract-sync drift --fix` would send nothing. Change the contract in git so that the rule holds, ' +
        'or add an exception for the finding under policyExceptions in the config (an owner, a reason, an expiry date), ' +
        'then run `contract-sync drift --fix`. Or change the desired state in git to keep the edit.',
    );
    expect(slack).toContain('*Next:* Policy rule dora-owner denies, so `contract-sync drift --fix` would send nothing.');
  });

  it('marks a sample as a test and counts what it leaves out', () => {
    const many: Notification = {
      ...DRIFT,
      sample: true,
      contracts: Array.from({ length: 25 }, (_, index) => ({ id: `C-${index}`, fields: [{ field: 'Name' }] })),
    };

    const slack = slackMessage(many).body;

    expect(slack).toContain('[test message] Drift in tenant acme: 25 contracts changed outside git');
    expect(slack).toContain('and 5 more contracts');
    expect(slack).not.toContain('C-20');
  });
});
