/** auditWarnings: one line per cause per run, naming the setting, whatever the number of contracts. */
import { describe, expect, it } from 'vitest';
import { AuditShapeError } from '../../engine/api/audit.ts';
import { ApiError } from '../../engine/api/errors.ts';
import { auditWarnings, type AuditReadOutcome } from '../../engine/drift/audit-warnings.ts';

describe('auditWarnings', () => {
  it('says a pointer that finds nothing once for a hundred contracts, naming the setting', () => {
    const outcomes: AuditReadOutcome[] = Array.from({ length: 100 }, (_, index) => ({
      tenant: 'acme',
      contractId: String(4700 + index),
      error: new AuditShapeError('expected a list of events at "/events", found nothing there (the answer is an object (keys: items)): set api.audit.pointer'),
    }));

    expect(auditWarnings(outcomes)).toEqual([
      {
        code: 'audit-events',
        setting: 'api.audit.pointer',
        message:
          'audit events: expected a list of events at "/events", found nothing there (the answer is an object (keys: items)): set api.audit.pointer (100 contracts: fields unattributed, e.g. acme/4700)',
      },
    ]);
  });

  it('groups failed reads by status and unreadable events by setting, and says nothing of reads that fit', () => {
    const forbidden = new ApiError("GET /audit/events: 403 Forbidden; the tenant's client needs the scope audit:read", {
      kind: 'permanent',
      status: 403,
      excerpt: '',
      ambiguous: false,
    });
    const outcomes: AuditReadOutcome[] = [
      { tenant: 'acme', contractId: '4711', error: forbidden },
      { tenant: 'globex', contractId: 'G-1', error: forbidden },
      {
        tenant: 'acme',
        contractId: '4712',
        read: { events: [], problems: [{ setting: 'api.audit.fields.time', message: 'no RFC 3339 time with an offset at "/time"', events: 3 }] },
      },
      {
        tenant: 'acme',
        contractId: '4713',
        read: { events: [], problems: [{ setting: 'api.audit.fields.time', message: 'no RFC 3339 time with an offset at "/time"', events: 1 }] },
      },
      { tenant: 'acme', contractId: '4714', read: { events: [{ actor: 'jane', time: '2027-01-01T00:00:00.000Z', fields: ['Name'] }], problems: [] } },
    ];

    expect(auditWarnings(outcomes)).toEqual([
      {
        code: 'audit-events',
        message:
          "audit events: GET /audit/events: 403 Forbidden; the tenant's client needs the scope audit:read (2 contracts: fields unattributed, e.g. acme/4711)",
      },
      {
        code: 'audit-events',
        setting: 'api.audit.fields.time',
        message: 'audit events: api.audit.fields.time: no RFC 3339 time with an offset at "/time" (4 events of 2 contracts left out, e.g. acme/4712)',
      },
    ]);
  });
});
