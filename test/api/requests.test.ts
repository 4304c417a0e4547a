import { describe, expect, it } from 'vitest';
import { patchRequest, readRequest, type ApiClientOptions } from '../../engine/api/client.ts';
import type { Op } from '../../engine/model/types.ts';

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.token-of-acme.signature';

const OPTIONS: ApiClientOptions = {
  baseUrl: 'https://cms.test/core',
  readPath: '/contract/{id}',
  timeoutMs: 5000,
  userAgent: 'contract-sync/0.1.0',
  correlationId: 'run-0f3c',
};

const OPS: readonly Op[] = [
  { op: 'Replace', path: '/Contract/Name', value: 'Cleaning 2027' },
  { op: 'Add', path: '/Contract/Company', value: { Id: 7, RelationType: 'Supplier' } },
];

describe('patchRequest', () => {
  it('builds PATCH {baseUrl}/contract/:ContractId with the ops as its JSON body', async () => {
    const request = patchRequest(OPTIONS, 'C-4711', OPS, TOKEN);

    expect(request.method).toBe('PATCH');
    expect(request.url).toBe('https://cms.test/core/contract/C-4711');
    expect(JSON.parse(request.body!)).toEqual(OPS);
  });

  it('sends the bearer token, JSON content type, user agent and correlation id', () => {
    const request = patchRequest(OPTIONS, 'C-4711', OPS, TOKEN);

    expect(request.headers).toEqual({
      Authorization: `Bearer ${TOKEN}`,
      Accept: 'application/json',
      'Content-Type': 'application/json',
      'User-Agent': 'contract-sync/0.1.0',
      'X-Correlation-Id': 'run-0f3c',
    });
  });

  it.each([
    ['a plain id', 'C-4711', '/core/contract/C-4711'],
    ['a slash, space and query characters', 'a b/c?d#e', '/core/contract/a%20b%2Fc%3Fd%23e'],
    ['non-ASCII', 'Vertrag-ä', '/core/contract/Vertrag-%C3%A4'],
  ])('percent-encodes the ContractId: %s', (_case, contractId, pathname) => {
    const request = patchRequest(OPTIONS, contractId, OPS, TOKEN);

    expect(new URL(request.url).pathname).toBe(pathname);
  });

  it.each([
    ['no trailing slash', 'https://cms.test/core'],
    ['one trailing slash', 'https://cms.test/core/'],
    ['several trailing slashes', 'https://cms.test/core//'],
  ])('joins a baseUrl with %s without a double slash', (_case, baseUrl) => {
    const request = patchRequest({ ...OPTIONS, baseUrl }, 'C-1', OPS, TOKEN);

    expect(request.url).toBe('https://cms.test/core/contract/C-1');
  });
});

describe('readRequest', () => {
  it('builds GET on api.read.path with {id} replaced, without a body or content type', async () => {
    const request = readRequest({ ...OPTIONS, readPath: '/v2/contracts/{id}/current' }, 'C/1', TOKEN);

    expect(request.method).toBe('GET');
    expect(request.url).toBe('https://cms.test/core/v2/contracts/C%2F1/current');
    expect(request.body).toBeUndefined();
    expect(request.headers).toEqual({
      Authorization: `Bearer ${TOKEN}`,
      Accept: 'application/json',
      'User-Agent': 'contract-sync/0.1.0',
      'X-Correlation-Id': 'run-0f3c',
    });
  });

  it('refuses to build a read when api.read is not configured', () => {
    const { readPath: _readPath, ...withoutRead } = OPTIONS;

    expect(() => readRequest(withoutRead, 'C-1', TOKEN)).toThrow(new TypeError('reads are not configured (api.read)'));
  });
});
