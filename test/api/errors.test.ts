import { describe, expect, it } from 'vitest';
import { ApiError, classifyStatus, isAmbiguousPatchStatus, type ApiFailureKind } from '../../engine/api/errors.ts';

describe('classifyStatus', () => {
  // The list: retryable (429, 500, 502, 503, 504, resets, timeouts), auth (401), permanent (400, 403, 404, 409, other).
  it.each<[number, ApiFailureKind]>([
    [401, 'auth'],
    [429, 'retryable'],
    [500, 'retryable'],
    [502, 'retryable'],
    [503, 'retryable'],
    [504, 'retryable'],
    [400, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [409, 'permanent'],
    [418, 'permanent'],
    [501, 'permanent'],
    [505, 'permanent'],
    [302, 'permanent'],
  ])('classifies %i as %s', (status, kind) => {
    const classified = classifyStatus(status);

    expect(classified).toBe(kind);
  });
});

describe('isAmbiguousPatchStatus', () => {
  // A PATCH answered 500 or 504 may have been applied; 429, 502 and 503 say it was not handled.
  it.each<[number, boolean]>([
    [500, true],
    [504, true],
    [429, false],
    [502, false],
    [503, false],
    [409, false],
    [400, false],
  ])('%i: %s', (status, ambiguous) => {
    const verdict = isAmbiguousPatchStatus(status);

    expect(verdict).toBe(ambiguous);
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
