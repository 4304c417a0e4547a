/** `api.audit` in contract-sync.yaml: the audit events' path and pointers (docs/architecture.md section 5). */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/index.ts';
import { parseConfigExactly } from '../../engine/config/parse.ts';
import { configYaml } from '../helpers/files.ts';

function api(lines: string): string {
  return configYaml(['acme']).replace('api: { baseUrl: https://cms.example.com }\n', `api:\n  baseUrl: https://cms.example.com\n${lines}`);
}

function problems(content: string): string[] {
  return parseConfig('contract-sync.yaml', content).diagnostics.map((d) => `${d.line}:${d.column}  ${d.field}  ${d.message}`);
}

describe('api.audit', () => {
  it('reads the path, the list pointer and the event pointers; the list pointer defaults to the whole body', () => {
    const full = api(
      '  audit:\n    path: "/audit/events?contractId={id}"\n    pointer: /events\n    fields: { actor: /actor, time: /time, contractFields: /fields, id: /id, contractId: /contractId }\n',
    );
    const bare = api('  audit: { path: "/audit/{id}", fields: { actor: /by, time: /at, contractFields: /changed } }\n');

    expect(parseConfig('contract-sync.yaml', full).config?.api.audit).toEqual({
      path: '/audit/events?contractId={id}',
      pointer: '/events',
      fields: { actor: '/actor', time: '/time', contractFields: '/fields', id: '/id', contractId: '/contractId' },
    });
    expect(parseConfigExactly('contract-sync.yaml', full).config).toEqual(parseConfig('contract-sync.yaml', full).config);
    expect(parseConfig('contract-sync.yaml', bare).config?.api.audit).toEqual({
      path: '/audit/{id}',
      pointer: '',
      fields: { actor: '/by', time: '/at', contractFields: '/changed' },
    });
  });

  it('is absent unless configured: nothing is read', () => {
    expect(parseConfig('contract-sync.yaml', configYaml(['acme'])).config?.api).not.toHaveProperty('audit');
  });

  it.each([
    ['a path without {id}', '  audit: { path: /audit/events, fields: { actor: /a, time: /t, contractFields: /f } }\n', 'api.audit.path'],
    [
      'a pointer that is not RFC 6901',
      '  audit: { path: "/a/{id}", pointer: events, fields: { actor: /a, time: /t, contractFields: /f } }\n',
      'api.audit.pointer',
    ],
    [
      'an event pointer that is not RFC 6901',
      '  audit: { path: "/a/{id}", fields: { actor: actor, time: /t, contractFields: /f } }\n',
      'api.audit.fields.actor',
    ],
    ['no time pointer', '  audit: { path: "/a/{id}", fields: { actor: /a, contractFields: /f } }\n', 'api.audit.fields'],
    ['an unknown key', '  audit: { path: "/a/{id}", fields: { actor: /a, time: /t, contractFields: /f, who: /w } }\n', 'api.audit.fields.who'],
  ])('refuses %s at its line and field', (_, lines, field) => {
    const found = problems(api(lines));

    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^3:\\d+  ${field.replaceAll('.', '\\.')}  `));
  });
});
