/** `notify:` in contract-sync.yaml: channels, events and tenant filters, with every bad input refused at its line. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/index.ts';
import { secretFileRefs } from '../../engine/config/hygiene.ts';
import { configYaml } from '../helpers/files.ts';

// Lines 1-9: api, auth, tenants acme and globex; notify: is line 10, its first channel line 11.
function withNotify(channels: string): string {
  return configYaml(['acme', 'globex'], `notify:\n${channels}`);
}

function problems(content: string): string[] {
  return parseConfig('contract-sync.yaml', content).diagnostics.map((d) => `${d.line}:${d.column}  ${d.field}  ${d.code}  ${d.message}`);
}

const SLACK = '  - { name: platform-team, kind: slack, url: { env: SLACK_WEBHOOK_URL }, on: [drift, drift-resolved, apply-failed], tenants: [acme] }\n';
const TEAMS = '  - { name: ops, kind: teams, url: { file: /run/secrets/teams-url }, on: [apply, policy-denied] }\n';
const HOOK = '  - { name: audit-sink, kind: webhook, url: "https://hooks.example.com/contract-sync", secret: { env: HOOK_SECRET }, on: [drift, apply] }\n';

describe('notify', () => {
  it('reads the three kinds of channel as written', () => {
    const { config, diagnostics } = parseConfig('contract-sync.yaml', withNotify(SLACK + TEAMS + HOOK));

    expect(diagnostics).toEqual([]);
    expect(config?.notify).toEqual([
      { name: 'platform-team', kind: 'slack', url: { env: 'SLACK_WEBHOOK_URL' }, on: ['drift', 'drift-resolved', 'apply-failed'], tenants: ['acme'] },
      { name: 'ops', kind: 'teams', url: { file: '/run/secrets/teams-url' }, on: ['apply', 'policy-denied'] },
      { name: 'audit-sink', kind: 'webhook', url: 'https://hooks.example.com/contract-sync', secret: { env: 'HOOK_SECRET' }, on: ['drift', 'apply'] },
    ]);
  });

  it('is absent unless configured', () => {
    expect(parseConfig('contract-sync.yaml', configYaml(['acme'])).config).not.toHaveProperty('notify');
  });

  it('lists notification URL and key files among the secret files that hygiene checks', () => {
    const { config } = parseConfig('contract-sync.yaml', withNotify(TEAMS + HOOK.replace('{ env: HOOK_SECRET }', '{ file: secrets/hook }')));

    expect(secretFileRefs(config!).map((ref) => [ref.path.join('.'), ref.file])).toEqual([
      ['notify.0.url.file', '/run/secrets/teams-url'],
      ['notify.1.secret.file', 'secrets/hook'],
    ]);
  });

  it.each([
    [
      'a Slack URL written literally (never quoted)',
      '  - { name: a, kind: slack, url: "https://hooks.slack.com/services/T0/B0/XXXX", on: [drift] }\n',
      '11:34  notify[0].url  literal-secret  a Slack webhook URL is a secret (whoever holds it can post): write { env: NAME } or { file: PATH }',
    ],
    [
      'a Teams URL written literally (never quoted)',
      '  - { name: a, kind: teams, url: "https://x.example.com/workflows/1?sig=XXXX", on: [drift] }\n',
      '11:34  notify[0].url  literal-secret  a Teams webhook URL is a secret (whoever holds it can post): write { env: NAME } or { file: PATH }',
    ],
    [
      'a webhook secret written literally (never quoted)',
      '  - { name: a, kind: webhook, url: "https://h.example.com", secret: hunter2-XXXX, on: [drift] }\n',
      '11:69  notify[0].secret  literal-secret  expected a secret reference { env: NAME } or { file: PATH }; literal secrets are not allowed in this file',
    ],
    [
      'a webhook without a secret',
      '  - { name: a, kind: webhook, url: "https://h.example.com", on: [drift] }\n',
      '11:5  notify[0]  config  a webhook channel needs secret: { env: NAME } or { file: PATH }, the key its messages are signed with',
    ],
    [
      'a secret for a Slack channel',
      '  - { name: a, kind: slack, url: { env: U }, secret: { env: S }, on: [drift] }\n',
      '11:46  notify[0].secret  config  slack messages are not signed: secret is for kind webhook only',
    ],
    [
      'a webhook URL over http to another host',
      '  - { name: a, kind: webhook, url: "http://hooks.example.com/x", secret: { env: S }, on: [drift] }\n',
      '11:36  notify[0].url  insecure-url  http:// is allowed only for loopback hosts; use https:// for hooks.example.com',
    ],
    [
      'an unknown event',
      '  - { name: a, kind: slack, url: { env: U }, on: [drift, drifted] }\n',
      '11:58  notify[0].on[1]  config  expected one of "drift", "drift-resolved", "apply", "apply-failed", "policy-denied", got "drifted"',
    ],
    [
      'an event listed twice',
      '  - { name: a, kind: slack, url: { env: U }, on: [drift, drift] }\n',
      '11:58  notify[0].on[1]  config  the event "drift" is listed twice',
    ],
    [
      'a tenant the config does not know',
      '  - { name: a, kind: slack, url: { env: U }, on: [drift], tenants: [acme, initech] }\n',
      '11:75  notify[0].tenants[1]  config  the tenant "initech" is not in tenants (acme, globex)',
    ],
    [
      'two channels of one name',
      '  - { name: a, kind: slack, url: { env: U }, on: [drift] }\n  - { name: a, kind: teams, url: { env: T }, on: [drift] }\n',
      '12:13  notify[1].name  config  the channel name "a" is taken by notify[0]',
    ],
    [
      'a secret file that climbs out of the repository',
      '  - { name: a, kind: teams, url: { file: ../teams-url }, on: [drift] }\n',
      '11:42  notify[0].url.file  config-path  the secret file "../teams-url" has a ".." step and could leave the repository; write the absolute path if it lives outside',
    ],
  ])('refuses %s at its line and field', (_, channels, expected) => {
    const found = problems(withNotify(channels));

    expect(found).toEqual([expected]);
    expect(found.join('\n')).not.toMatch(/XXXX/);
  });
});
