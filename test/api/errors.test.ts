import { describe, expect, it } from 'vitest';
import { ApiError, classifyStatus, type ApiFailureKind } from '../../engine/api/errors.ts';

describe('classifyStatus', () => {
  // The list: retryable (429, 502, 503, 504, resets, timeouts), auth (401), permanent (400, 403, 404, 409, other).
  it.each<[number, ApiFailureKind]>([
    [401, 'auth'],
    [429, 'retryable'],
    [502, 'retryable'],
    [503, 'retryable'],
    [504, 'retryable'],
    [400, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [409, 'permanent'],
    [418, 'permanent'],
    [500, 'permanent'],
    [501, 'permanent'],
    [505, 'permanent'],
    [302, 'permanent'],
  ])('classifies %i as %s', (status, kind) => {
    const classified = classifyStatus(status);

    expect(classified).toBe(kind);
  });
});

describe('ApiError', () => {
  it('carries the stable code, the details and the cause', () => {
    const cause = new TypeError('fetch failed');

    const error = new ApiError('PATCH /contract/C-1: 503', { kind: 'retryable', status: 503, excerpt: 'busy', ambiguous: false, retryAfterMs: 2000, cause });

    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'api', kind: 'retryable', status: 503, excerpt: 'busy', ambiguous: false, retryAfterMs: 2000, cause });
    expect(error.message).toBe('PATCH /contract/C-1: 503');
  });

  it('leaves retryAfterMs undefined when the service asked for no wait', () => {
    const error = new ApiError('GET /contract/C-1: connection failed (ECONNRESET)', { kind: 'retryable', status: null, excerpt: '', ambiguous: true });

    expect(error.retryAfterMs).toBeUndefined();
    expect(error.status).toBeNull();
  });
});
