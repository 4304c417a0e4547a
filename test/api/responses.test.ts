import { describe, expect, it } from 'vitest';
import { checkPatchResponse, checkReadResponse, patchRequest, readRequest, type ApiClientOptions } from '../../engine/api/client.ts';
import type { ApiRequest } from '../../engine/api/http-transport.ts';
import { Redactor } from '../../engine/log/logger.ts';
import { rejection } from './helpers.ts';

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.token-of-acme.signature';
const SECRET = 'client-secret-of-acme-0815';
// Thursday 2026-01-01T00:00:00Z.
const NOW = Date.UTC(2026, 0, 1, 0, 0, 0);

function options(extra: Partial<ApiClientOptions> = {}): ApiClientOptions {
  return {
    baseUrl: 'https://cms.test',
    readPath: '/contract/{id}',
    timeoutMs: 5000,
    userAgent: 'contract-sync/test',
    correlationId: 'run-1',
    now: () => NOW,
    ...extra,
  };
}

function patch(): ApiRequest {
  return patchRequest(options(), 'C-1', [{ op: 'Replace', path: '/Contract/Name', value: 'x' }], TOKEN);
}

function read(): ApiRequest {
  return readRequest(options(), 'C-1', TOKEN);
}

describe('checkPatchResponse: success', () => {
  it('accepts 204 No Content with no rate limit reported', async () => {
    const outcome = await checkPatchResponse(patch(), new Response(null, { status: 204 }), options());

    expect(outcome).toEqual({});
  });

  it('reports the quota a successful answer carries', async () => {
    const response = new Response(null, { status: 204, headers: { RateLimit: '"tenant";r=1;t=2' } });

    const outcome = await checkPatchResponse(patch(), response, options());

    expect(outcome).toEqual({ rateLimit: { remaining: 1, resetMs: 2000 } });
  });

  it.each([
    ['200 with no body', null],
    ['200 with an empty body', ''],
    ['200 with only whitespace', ' \r\n'],
  ])('accepts %s', async (_case, body) => {
    const outcome = await checkPatchResponse(patch(), new Response(body, { status: 200 }), options());

    expect(outcome).toEqual({});
  });
});

describe("checkPatchResponse: answers that are not the service's", () => {
  // Only 204 (or an empty 200) is the published success: any other answer may come from a proxy or
  // gateway, before or after the service applied the patch.
  it.each<[string, number, string | null, Record<string, string>, string]>([
    [
      '200 with a JSON body',
      200,
      '{"ok":true}',
      { 'Content-Type': 'application/json' },
      'PATCH /contract/C-1: unexpected answer 200 from https://cms.test: {"ok":true}',
    ],
    ['201 Created with a body', 201, '{"id":"C-1"}', {}, 'PATCH /contract/C-1: unexpected answer 201 from https://cms.test: {"id":"C-1"}'],
    ['202 Accepted, empty', 202, null, {}, 'PATCH /contract/C-1: unexpected answer 202 from https://cms.test'],
    ['206 with text', 206, 'partial', {}, 'PATCH /contract/C-1: unexpected answer 206 from https://cms.test: partial'],
    [
      "a proxy's HTML page with 200",
      200,
      '<!DOCTYPE html>\n<html><body>Please sign in</body></html>',
      { 'Content-Type': 'text/html; charset=utf-8' },
      'PATCH /contract/C-1: unexpected answer 200 (an HTML page) from https://cms.test: <!DOCTYPE html> <html><body>Please sign in</body></html>',
    ],
    [
      'an HTML page without a content type',
      200,
      '  <html><body>portal</body></html>',
      {},
      'PATCH /contract/C-1: unexpected answer 200 (an HTML page) from https://cms.test: <html><body>portal</body></html>',
    ],
  ])('%s is an ambiguous error', async (_case, status, body, headers, message) => {
    const error = await rejection(checkPatchResponse(patch(), new Response(body, { status, headers }), options()));

    expect(error).toMatchObject({ code: 'api', kind: 'retryable', status, ambiguous: true });
    expect(error.message).toBe(message);
  });

  it('bounds the excerpt of an unexpected answer and censors secrets and the token in it', async () => {
    const redactor = new Redactor();
    redactor.add(SECRET);
    const body = `<html><body>${SECRET} ${TOKEN} ${'x'.repeat(1000)}</body></html>`;

    const error = await rejection(checkPatchResponse(patch(), new Response(body, { status: 200 }), options({ redactor })));

    expect(error.ambiguous).toBe(true);
    expect(error.excerpt).toHaveLength(301);
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain(TOKEN);
    expect(error.message).toContain('[REDACTED] [REDACTED]');
  });

  it('an HTML error page is ambiguous too, and keeps the class of its status', async () => {
    const response = new Response('<html><body><h1>403 Forbidden</h1>nginx</body></html>', {
      status: 403,
      statusText: 'Forbidden',
      headers: { 'Content-Type': 'text/html' },
    });

    const error = await rejection(checkPatchResponse(patch(), response, options()));

    expect(error).toMatchObject({ kind: 'permanent', status: 403, ambiguous: true });
    expect(error.message).toBe(
      'PATCH /contract/C-1: unexpected answer 403 Forbidden (an HTML page) from https://cms.test: <html><body><h1>403 Forbidden</h1>nginx</body></html>',
    );
  });

  it("a JSON error body is the service's answer: not ambiguous", async () => {
    const response = new Response('{"error":"forbidden"}', { status: 403, headers: { 'Content-Type': 'application/json' } });

    const error = await rejection(checkPatchResponse(patch(), response, options()));

    expect(error).toMatchObject({ kind: 'permanent', status: 403, ambiguous: false });
  });
});

describe('checkPatchResponse: failures', () => {
  it('turns a 409 with a JSON body into a permanent ApiError quoting the body', async () => {
    const body = JSON.stringify({ error: 'conflict', detail: 'Company member (Id 7, Supplier) is already present' });
    const response = new Response(body, { status: 409, statusText: 'Conflict', headers: { 'Content-Type': 'application/json' } });

    const error = await rejection(checkPatchResponse(patch(), response, options()));

    expect(error).toMatchObject({ code: 'api', kind: 'permanent', status: 409, excerpt: body, ambiguous: false, retryAfterMs: undefined });
    expect(error.message).toBe(`PATCH /contract/C-1: 409 Conflict: ${body}`);
  });

  it('bounds the excerpt of a long body to 300 characters and an ellipsis, whitespace collapsed', async () => {
    const body = `${'conflict\n  '.repeat(20)}${'x'.repeat(500)}`;

    const error = await rejection(checkPatchResponse(patch(), new Response(body, { status: 400 }), options()));

    expect(error.excerpt).toHaveLength(301);
    expect(error.excerpt.endsWith('…')).toBe(true);
    expect(error.excerpt.startsWith('conflict conflict ')).toBe(true);
    expect(error.message.length).toBeLessThan(400);
  });

  it('censors a registered secret that the service echoes, in the excerpt and the message', async () => {
    const redactor = new Redactor();
    redactor.add(SECRET);
    const body = JSON.stringify({ error: 'invalid', echo: `client_secret=${SECRET}` });

    const error = await rejection(checkPatchResponse(patch(), new Response(body, { status: 400 }), options({ redactor })));

    expect(error.excerpt).toContain('[REDACTED]');
    expect(error.excerpt).not.toContain(SECRET);
    expect(error.message).not.toContain(SECRET);
  });

  it('censors a secret that straddles the excerpt bound (the excerpt is cut before it is redacted)', async () => {
    const redactor = new Redactor();
    redactor.add(SECRET);
    // The secret starts 10 characters before the 300-character bound.
    const body = `${'a'.repeat(290)}${SECRET}${'b'.repeat(50)}`;

    const error = await rejection(checkPatchResponse(patch(), new Response(body, { status: 400 }), options({ redactor })));

    expect(error.excerpt).not.toContain(SECRET.slice(0, 10));
    expect(error.message).not.toContain(SECRET.slice(0, 10));
  });

  it('has an empty excerpt and no trailing colon for an empty body', async () => {
    const error = await rejection(checkPatchResponse(patch(), new Response(null, { status: 404 }), options()));

    expect(error).toMatchObject({ kind: 'permanent', status: 404, excerpt: '' });
    expect(error.message).toBe('PATCH /contract/C-1: 404');
  });

  it('never puts the token into the message', async () => {
    const error = await rejection(checkPatchResponse(patch(), new Response('no', { status: 403 }), options()));

    expect(error.message).not.toContain(TOKEN);
    expect(error.message).not.toContain('Bearer');
  });

  it.each<[string, number, Record<string, string>, number | undefined]>([
    ['429 with Retry-After seconds', 429, { 'Retry-After': '3' }, 3000],
    ['503 with Retry-After as an HTTP date', 503, { 'Retry-After': 'Thu, 01 Jan 2026 00:00:05 GMT' }, 5000],
    ['503 with RateLimit r=0 and no Retry-After: the reset', 503, { RateLimit: '"tenant";r=0;t=4' }, 4000],
    ['429 with X-RateLimit remaining 0: the reset', 429, { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '6' }, 6000],
    ['Retry-After wins over RateLimit', 429, { 'Retry-After': '1', RateLimit: '"tenant";r=0;t=9' }, 1000],
    ['503 with quota left and no Retry-After: no wait', 503, { RateLimit: '"tenant";r=5;t=4' }, undefined],
    ['502 with nothing: no wait', 502, {}, undefined],
    ['429 with an unreadable Retry-After: no wait', 429, { 'Retry-After': 'later' }, undefined],
  ])('%s', async (_case, status, headers, retryAfterMs) => {
    const error = await rejection(checkPatchResponse(patch(), new Response('busy', { status, headers }), options()));

    expect(error).toMatchObject({ kind: 'retryable', status, ambiguous: false });
    expect(error.retryAfterMs).toBe(retryAfterMs);
  });

  it.each([500, 504])('a PATCH answered %i is retryable and ambiguous: the service may have applied it', async (status) => {
    const error = await rejection(checkPatchResponse(patch(), new Response('{"error":"internal"}', { status }), options()));

    expect(error).toMatchObject({ kind: 'retryable', status, ambiguous: true });
  });

  it('classifies a 401 as auth', async () => {
    const error = await rejection(checkPatchResponse(patch(), new Response(null, { status: 401 }), options()));

    expect(error).toMatchObject({ kind: 'auth', status: 401, ambiguous: false });
  });
});

describe('checkReadResponse', () => {
  it('keeps only the patchable fields of the contract object', async () => {
    const body = {
      ContractId: 'C-1',
      Name: 'Cleaning',
      Company: [{ Id: 7, RelationType: 'Supplier' }],
      ValidFrom: '2026-01-01T00:00:00Z',
      CreatedBy: 'someone',
      Internal: { revision: 3 },
    };

    const outcome = await checkReadResponse(read(), Response.json(body), options());

    expect(outcome).toEqual({ fields: { Name: 'Cleaning', Company: [{ Id: 7, RelationType: 'Supplier' }], ValidFrom: '2026-01-01T00:00:00Z' } });
  });

  it('drops member keys and duration units the model does not list, and reads a null scalar as not set', async () => {
    const body = {
      Comment: null,
      SupplierNoticePeriod: { Days: 30, Weeks: 4 },
      Company: [{ Id: 7, RelationType: 'Supplier', Name: 'Acme Ltd', Links: [{ rel: 'self' }] }],
      Owner: [
        {
          OwnerType: { Name: 'Responsible', Value: 1, Code: 'R' },
          User: { Id: 5, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null, Path: '/' }, Login: 'u5' },
        },
      ],
    };

    const outcome = await checkReadResponse(read(), Response.json(body), options());

    expect(outcome).toEqual({
      fields: {
        SupplierNoticePeriod: { Days: 30 },
        Company: [{ Id: 7, RelationType: 'Supplier' }],
        Owner: [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 5, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } }],
      },
    });
  });

  it.each([
    ['Company null', { Name: 'x', Company: null }, 'Company: expected a list, got null'],
    ['Company a string', { Company: 'x' }, 'Company: expected a list, got "x"'],
    ['a string field a number', { Name: 7 }, 'Name: expected a string or null, got 7'],
    ['a member without its identity', { Company: [{ Id: 7 }] }, 'Company[0]: missing required field "RelationType"'],
    ['an owner user id a string', { Owner: [{ OwnerType: { Value: 1 }, User: { Id: '5' } }] }, 'Owner[0].User.Id: expected an integer, got "5"'],
  ])('refuses a known field of the wrong type (%s) as a permanent error naming the field', async (_case, body, named) => {
    const error = await rejection(checkReadResponse(read(), Response.json(body), options()));

    expect(error).toMatchObject({
      kind: 'permanent',
      status: 200,
      ambiguous: false,
      message: `GET /contract/C-1: the contract does not fit the contract model: ${named}`,
    });
  });

  it('lists at most five fields at fault and counts the rest', async () => {
    const body = { Name: 1, Comment: 2, Description: 3, Evaluation: 4, Signature: 5, ShortSLAConditions: 6, DescriptionSLAConditions: 7 };

    const error = await rejection(checkReadResponse(read(), Response.json(body), options()));

    expect(error.message.split('; ')).toHaveLength(5);
    expect(error.message).toMatch(/ \(and 2 more\)$/);
  });

  it('reports the quota a read answer carries', async () => {
    const response = Response.json({ Name: 'x' }, { headers: { 'RateLimit-Remaining': '9', 'RateLimit-Reset': '1' } });

    const outcome = await checkReadResponse(read(), response, options());

    expect(outcome.rateLimit).toEqual({ remaining: 9, resetMs: 1000 });
  });

  it.each([
    ['an array', '[{"Name":"x"}]', 'GET /contract/C-1: expected a JSON object, got an array'],
    ['a string', '"C-1"', 'GET /contract/C-1: expected a JSON object, got string'],
    ['null', 'null', 'GET /contract/C-1: expected a JSON object, got object'],
    ['not JSON', '<html>maintenance</html>', 'GET /contract/C-1: the answer is not JSON'],
  ])('refuses %s as a permanent error', async (_case, body, message) => {
    const response = new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });

    const error = await rejection(checkReadResponse(read(), response, options()));

    expect(error).toMatchObject({ kind: 'permanent', status: 200, ambiguous: false, message });
  });

  it('turns a 404 into a permanent ApiError naming the read', async () => {
    const error = await rejection(checkReadResponse(read(), new Response('not found', { status: 404 }), options()));

    expect(error).toMatchObject({ kind: 'permanent', status: 404, excerpt: 'not found', message: 'GET /contract/C-1: 404: not found' });
  });
});

describe('checkReadResponse: where the contract sits and how its timestamps read (api.read.pointer, api.read.timestamps)', () => {
  const CONTRACT = { Name: 'Cleaning', Company: [{ Id: 12, RelationType: 'Supplier' }], ValidFrom: '2027-01-01T00:00:00Z' };

  it('fails a wrapped contract read with the default pointer, naming the pointer and the keys found: never an empty contract', async () => {
    const error = await rejection(checkReadResponse(read(), Response.json({ Contract: CONTRACT, Links: [] }), options()));

    expect(error).toMatchObject({
      kind: 'permanent',
      status: 200,
      message: 'GET /contract/C-1: no contract field at "" (keys: Contract, Links): set api.read.pointer',
    });
  });

  it('reads the contract at the configured pointer', async () => {
    const outcome = await checkReadResponse(read(), Response.json({ Data: { 'a/b': CONTRACT }, Links: [] }), options({ readPointer: '/Data/a~1b' }));

    expect(outcome.fields).toEqual(CONTRACT);
  });

  it.each([
    ['a pointer that leads nowhere', { Links: [] }, '/Contract', 'GET /contract/C-1: nothing at "/Contract" (keys: Links): set api.read.pointer'],
    ['a pointer to a list', { Contract: [CONTRACT] }, '/Contract', 'GET /contract/C-1: no contract field at "/Contract" (a list): set api.read.pointer'],
  ])('fails %s', async (_case, body, pointer, message) => {
    const error = await rejection(checkReadResponse(read(), Response.json(body), options({ readPointer: pointer })));

    expect(error).toMatchObject({ kind: 'permanent', message });
  });

  it('reads an empty object as a contract with no field set', async () => {
    const outcome = await checkReadResponse(read(), Response.json({}), options());

    expect(outcome.fields).toEqual({});
  });

  it('fails a timestamp without an offset by default, naming the field, the value and the setting', async () => {
    const error = await rejection(checkReadResponse(read(), Response.json({ ...CONTRACT, ValidTo: '2027-12-31T23:59:59.5' }), options()));

    expect(error).toMatchObject({
      kind: 'permanent',
      message: 'GET /contract/C-1: ValidTo "2027-12-31T23:59:59.5" has no UTC offset: set api.read.timestamps to utc to read such timestamps as UTC',
    });
  });

  it('reads a timestamp without an offset as UTC when told to', async () => {
    const outcome = await checkReadResponse(
      read(),
      Response.json({ ...CONTRACT, ValidFrom: '2027-01-01T00:00:00', ValidTo: '2027-12-31T23:59:59.5' }),
      options({ readTimestamps: 'utc' }),
    );

    expect(outcome.fields).toMatchObject({ ValidFrom: '2027-01-01T00:00:00Z', ValidTo: '2027-12-31T23:59:59.5Z' });
  });
});

describe('PATCH content type and conflicts (api.patch.contentType, api.conflictStatuses)', () => {
  it('sends the configured content type', () => {
    const request = patchRequest(
      options({ patchContentType: 'application/json-patch+json' }),
      'C-1',
      [{ op: 'Replace', path: '/Contract/Name', value: 'x' }],
      TOKEN,
    );

    expect(request.headers['Content-Type']).toBe('application/json-patch+json');
  });

  it('names the setting in a 415, and what the service accepts', async () => {
    const response = Response.json({ error: 'unsupported_media_type' }, { status: 415, headers: { 'Accept-Patch': 'application/json-patch+json' } });

    const error = await rejection(checkPatchResponse(patch(), response, options()));

    expect(error).toMatchObject({
      kind: 'permanent',
      status: 415,
      message:
        'PATCH /contract/C-1: 415: {"error":"unsupported_media_type"}; the service refuses Content-Type application/json: set api.patch.contentType (it accepts application/json-patch+json)',
    });
  });

  it.each([
    [409, undefined, true],
    [422, undefined, false],
    [422, [409, 422], true],
    [400, [422], false],
  ])('a PATCH answered %i with conflictStatuses %j is a conflict: %s', async (status, conflictStatuses, conflict) => {
    const error = await rejection(
      checkPatchResponse(patch(), Response.json({ error: 'x' }, { status }), options(conflictStatuses === undefined ? {} : { conflictStatuses })),
    );

    expect(error).toMatchObject({ status, conflict });
  });

  it('percent-encodes a ContractId of any shape in every URL', () => {
    const id = 'C/2024/001?x#1 %ä';

    expect(new URL(patchRequest(options(), id, [], TOKEN).url).pathname).toBe('/contract/C%2F2024%2F001%3Fx%231%20%25%C3%A4');
    expect(readRequest(options({ readPath: '/v1/contracts/{id}/full' }), id, TOKEN).url).toBe(
      'https://cms.test/v1/contracts/C%2F2024%2F001%3Fx%231%20%25%C3%A4/full',
    );
  });
});
