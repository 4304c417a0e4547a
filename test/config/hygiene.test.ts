import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/index.ts';
import { secretFileRefs, secretHygiene } from '../../engine/config/hygiene.ts';
import { parseYamlSource, positionOf } from '../../engine/yaml/yaml-source.ts';

const HEAD = 'api: { baseUrl: https://cms.example.com }\nauth: { url: https://login.example.com, realm: cms }\ntenants:\n  acme:\n    clientId: cs-acme\n';

/** Config text for tenant acme with `lines` (its settings after clientId), then `extra` at the top level. */
function configText(lines: readonly string[], extra = ''): string {
  return `${HEAD}${lines.map((line) => `    ${line}\n`).join('')}${extra}`;
}

function hygiene(text: string, now: string, tracked: readonly string[] = []) {
  const { config, diagnostics } = parseConfig('contract-sync.yaml', text);
  expect(diagnostics).toEqual([]);
  const parsed = parseYamlSource('contract-sync.yaml', text);
  if (!parsed.ok || !config) throw new Error('test config does not parse');

  const found = secretHygiene({
    config,
    file: 'contract-sync.yaml',
    positionOf: (path) => positionOf(parsed.source, path),
    now: Date.parse(now),
    trackedSecretFiles: new Set(tracked),
  });

  return found.map((d) => `${d.severity} ${d.code} ${d.file}:${d.line}:${d.column}  ${d.field}  ${d.message}`);
}

const AGE =
  'warning secret-age contract-sync.yaml:8:22  tenants.acme.secretRotatedAt  the client secret of tenant acme was rotated on 2025-06-01, 12 or more months ago: rotate it and update secretRotatedAt';

describe('secretHygiene: secret age', () => {
  const lines = ['clientSecret: { env: ACME_SECRET }', '# rotated by the platform team', 'secretRotatedAt: 2025-06-01'];

  it.each([
    ['a day before 12 months', '2026-05-31T23:59:59Z', []],
    ['at 12 months', '2026-06-01T00:00:00Z', [AGE]],
    ['long after', '2030-01-01T00:00:00Z', [AGE]],
  ])('%s', (_, now, expected) => {
    expect(hygiene(configText(lines), now)).toEqual(expected);
  });

  it('says nothing without secretRotatedAt', () => {
    expect(hygiene(configText(['clientSecret: { env: ACME_SECRET }']), '2040-01-01T00:00:00Z')).toEqual([]);
  });
});

describe('secretHygiene: rotation overlap', () => {
  const lines = ['clientSecret: { env: ACME_SECRET }', 'previousClientSecret: { env: ACME_SECRET_OLD }', 'secretRotatedAt: 2026-06-01'];
  const ENDED =
    'warning secret-overlap contract-sync.yaml:7:27  tenants.acme.previousClientSecret  previousClientSecret is still configured more than 30 days after secretRotatedAt (2026-06-01): the rotation overlap has ended; remove it (and revoke the old secret)';

  it.each([
    ['within the overlap', '2026-06-15T00:00:00Z', []],
    ['exactly 30 days after', '2026-07-01T00:00:00Z', []],
    ['a second past 30 days', '2026-07-01T00:00:01Z', [ENDED]],
  ])('%s', (_, now, expected) => {
    expect(hygiene(configText(lines), now)).toEqual(expected);
  });

  it('both warnings when the old secret outlives the new one', () => {
    const found = hygiene(configText(lines), '2027-06-02T00:00:00Z');

    expect(found.map((line) => line.split(' ')[1])).toEqual(['secret-overlap', 'secret-age']);
  });

  it('warns when the overlap has no start date', () => {
    expect(hygiene(configText(lines.slice(0, 2)), '2026-01-01T00:00:00Z')).toEqual([
      'warning secret-overlap contract-sync.yaml:7:27  tenants.acme.previousClientSecret  previousClientSecret is configured without secretRotatedAt: set the rotation date, so that the end of the 30-day overlap is known',
    ]);
  });

  it('says nothing without a previous secret', () => {
    expect(hygiene(configText([lines[0]!, lines[2]!]), '2026-08-01T00:00:00Z')).toEqual([]);
  });
});

describe('secretHygiene: secret files in git', () => {
  const lines = ['clientSecret: { file: secrets/acme }', 'previousClientSecret: { file: /run/secrets/acme-old }', 'secretRotatedAt: 2026-06-01'];
  const extra = 'state: { backend: postgres, url: { file: secrets/pg-url } }\n';

  it('lists every file reference, with its path', () => {
    const { config } = parseConfig('contract-sync.yaml', configText(lines, extra));

    expect(secretFileRefs(config!)).toEqual([
      { path: ['tenants', 'acme', 'clientSecret', 'file'], file: 'secrets/acme', tenant: 'acme' },
      { path: ['tenants', 'acme', 'previousClientSecret', 'file'], file: '/run/secrets/acme-old', tenant: 'acme' },
      { path: ['state', 'url', 'file'], file: 'secrets/pg-url' },
    ]);
  });

  it('warns about each tracked one, at its file key', () => {
    const found = hygiene(configText(lines, extra), '2026-06-02T00:00:00Z', ['secrets/acme', 'secrets/pg-url']);

    expect(found).toEqual([
      'warning secret-in-git contract-sync.yaml:6:27  tenants.acme.clientSecret.file  secret file secrets/acme is inside the repository and tracked by git: credentials belong in a secrets manager, not in source control; remove it (git rm --cached) and rotate the secret',
      'warning secret-in-git contract-sync.yaml:9:42  state.url.file  secret file secrets/pg-url is inside the repository and tracked by git: credentials belong in a secrets manager, not in source control; remove it (git rm --cached) and rotate the secret',
    ]);
  });

  it('says nothing about untracked ones', () => {
    expect(hygiene(configText(lines, extra), '2026-06-02T00:00:00Z', ['secrets/other'])).toEqual([]);
  });
});
