/** The emulator's answers, checked against specs/openapi.yaml: statuses, content types, bodies, headers. */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSchema, type JsonSchema, type SchemaCheck } from '../../engine/model/index.ts';
import type { Emulator } from '../../emulator/index.ts';
import { admin, patch, read, requestToken, SEED, start, token } from './helpers.ts';

type Node = Record<string, unknown>;

function load(file: string): Node {
  const text = readFileSync(new URL(`../../specs/${file}`, import.meta.url), 'utf8');
  return (file.endsWith('.yaml') ? parse(text) : JSON.parse(text)) as Node;
}

const OPENAPI = load('openapi.yaml');

function pointer(doc: Node, fragment: string): unknown {
  return fragment
    .split('/')
    .filter(Boolean)
    .reduce<unknown>((node, key) => (node as Node)[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

/** Inlines every $ref (local and ./file.json#/...); ids are dropped so that Ajv compiles each copy. */
function deref(node: unknown, doc: Node = OPENAPI): unknown {
  if (Array.isArray(node)) return node.map((item) => deref(item, doc));
  if (node === null || typeof node !== 'object') return node;
  const { $ref, $id: _id, $schema: _schema, ...rest } = node as Node;
  if (typeof $ref === 'string') {
    const [file, fragment = ''] = $ref.split('#');
    const target = file ? load(file.replace('./', '')) : doc;
    return deref({ ...(pointer(target, fragment) as Node), ...rest }, target);
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, deref(value, doc)]));
}

function stripExtensions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripExtensions);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !key.startsWith('x-'))
      .map(([key, value]) => [key, stripExtensions(value)]),
  );
}

const checks = new Map<string, SchemaCheck>();

function schemaCheck(key: string, schema: unknown): SchemaCheck {
  let check = checks.get(key);
  if (!check) {
    check = compileSchema(stripExtensions(schema) as JsonSchema);
    checks.set(key, check);
  }
  return check;
}

const exercised = new Set<string>();

/** Fails unless `response` is one the document declares for this operation, in every respect. */
async function conforms(method: string, template: string, response: Response): Promise<void> {
  const operation = deref(pointer(OPENAPI, `/paths/${template.replaceAll('/', '~1')}/${method}`)) as Node;
  const declared = (operation.responses as Node)[String(response.status)] as Node | undefined;
  expect(declared, `${method.toUpperCase()} ${template} ${response.status} is not in openapi.yaml`).toBeDefined();
  exercised.add(`${method} ${template} ${response.status}`);
  for (const [name, header] of Object.entries((declared!.headers ?? {}) as Record<string, Node>)) {
    const value = response.headers.get(name);
    if (header.required === true) expect(value, `${name} header`).not.toBeNull();
    if (value !== null) expect(schemaCheck(`${template} ${method} ${response.status} ${name}`, header.schema)(value)).toEqual([]);
  }
  const text = await response.text();
  const content = declared!.content as Record<string, Node> | undefined;
  if (!content) {
    expect(text).toBe('');
    return;
  }
  const type = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
  expect(Object.keys(content)).toContain(type);
  const issues = schemaCheck(`${template} ${method} ${response.status} body`, content[type]!.schema)(JSON.parse(text));
  expect(issues, text).toEqual([]);
}

let emulator: Emulator;
const frozenNow = Date.now();

beforeAll(async () => {
  const acme = {
    ...SEED.tenants.acme,
    clients: [...SEED.tenants.acme.clients, { clientId: 'acme-auditor', secret: 'acme-audit-secret', scopes: ['audit:read'] }],
  };
  emulator = await start({ ...SEED, tenants: { ...SEED.tenants, acme }, rateLimit: { requestsPerSecond: 1, burst: 40 } }, { now: () => frozenNow });
});

afterAll(async () => {
  await emulator.close();
});

const DISCOVERY = '/realms/{realm}/.well-known/openid-configuration';
const TOKEN = '/realms/{realm}/protocol/openid-connect/token';
const CERTS = '/realms/{realm}/protocol/openid-connect/certs';
const CONTRACT = '/contract/{ContractId}';
const AUDIT = '/audit/events';
const RENAME = [{ op: 'Replace', path: '/Contract/Name', value: 'x' }];

describe('specs/openapi.yaml', () => {
  it('describes the auth endpoints as the emulator answers them', async () => {
    const realm = `${emulator.urls.authUrl}/realms/${emulator.urls.realm}`;

    await conforms('get', DISCOVERY, await fetch(`${realm}/.well-known/openid-configuration`));
    await conforms('get', CERTS, await fetch(`${realm}/protocol/openid-connect/certs`));
    await conforms('post', TOKEN, await requestToken(emulator, 'acme-rw', 'acme-secret-new'));
    await conforms('post', TOKEN, await requestToken(emulator, 'acme-rw', 'wrong'));
    await conforms('post', TOKEN, await requestToken(emulator, 'acme-ro', 'acme-ro-secret', 'core:write'));
    for (const status of ['429', '500', '502', '503']) {
      await admin(emulator, 'POST', '/faults', { token: { status: { [status]: 1 } } });
      await conforms('post', TOKEN, await requestToken(emulator, 'acme-rw', 'acme-secret-new'));
    }
    await admin(emulator, 'POST', '/faults', {});
  });

  it('describes every answer of PATCH and GET /contract/{ContractId}', async () => {
    const rw = await token(emulator);
    const ro = await token(emulator, 'acme-ro', 'acme-ro-secret', 'core:read');
    const wo = await token(emulator, 'acme-rw', 'acme-secret-new', 'core:write');

    await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', RENAME));
    await conforms(
      'patch',
      CONTRACT,
      await patch(emulator, rw, '4711', [
        { op: 'replace', path: '/Contract/Name', value: 1 },
        { op: 'Add', path: '/Nope', value: 1 },
      ]),
    );
    await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', '{'));
    await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', {}));
    await conforms('patch', CONTRACT, await patch(emulator, 'forged', '4711', RENAME));
    await conforms('patch', CONTRACT, await patch(emulator, ro, '4711', RENAME));
    await conforms('patch', CONTRACT, await patch(emulator, rw, '9001', RENAME));
    await conforms(
      'patch',
      CONTRACT,
      await patch(emulator, rw, '4711', [{ op: 'Add', path: '/Contract/Company', value: { Id: 12, RelationType: 'Supplier' } }]),
    );
    await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', [{ op: 'Replace', path: '/Contract/Comment', value: 'x'.repeat(1_100_000) }]));
    await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', RENAME, 'text/plain'));
    await conforms('get', CONTRACT, await read(emulator, rw, '4711'));
    await conforms('get', CONTRACT, await read(emulator, 'forged', '4711'));
    await conforms('get', CONTRACT, await read(emulator, wo, '4711'));
    await conforms('get', CONTRACT, await read(emulator, rw, '9001'));
    for (const status of ['429', '500', '502', '503']) {
      await admin(emulator, 'POST', '/faults', { api: { status: { [status]: 1 } } });
      await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', RENAME));
      await conforms('get', CONTRACT, await read(emulator, rw, '4711'));
    }
    await admin(emulator, 'POST', '/faults', {});
    let limited: Response;
    do limited = await read(emulator, rw, '4711');
    while (limited.status === 200);
    await conforms('get', CONTRACT, limited);
    await conforms('patch', CONTRACT, await patch(emulator, rw, '4711', RENAME));
  });

  it('describes every answer of GET /audit/events', async () => {
    await admin(emulator, 'POST', '/reset');
    const auditor = await token(emulator, 'acme-auditor', 'acme-audit-secret', 'audit:read');
    const rw = await token(emulator);
    function events(accessToken: string, query = '?contractId=4711'): Promise<Response> {
      return fetch(`${emulator.urls.baseUrl}${AUDIT}${query}`, { headers: { Authorization: `Bearer ${accessToken}` } });
    }
    await admin(emulator, 'PUT', '/contracts/acme/4711', { Name: 'Edited', Colour: 'red' });

    await conforms('get', AUDIT, await events(auditor));
    await conforms('get', AUDIT, await events(auditor, ''));
    await conforms('get', AUDIT, await events('forged'));
    await conforms('get', AUDIT, await events(rw));
    for (const status of ['429', '500', '502', '503']) {
      await admin(emulator, 'POST', '/faults', { api: { status: { [status]: 1 } } });
      await conforms('get', AUDIT, await events(auditor));
    }
    await admin(emulator, 'POST', '/faults', {});
    let limited: Response;
    do limited = await events(auditor);
    while (limited.status === 200);
    await conforms('get', AUDIT, limited);
  });

  it('declares no answer the emulator never gives', () => {
    const declared = Object.entries(OPENAPI.paths as Record<string, Record<string, Node>>).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'patch'].includes(method))
        .flatMap(([method, operation]) => Object.keys(operation.responses as Node).map((status) => `${method} ${template} ${status}`)),
    );

    expect([...exercised].sort()).toEqual(declared.sort());
  });
});
