/** runNotifications: what a run that sent tells, per tenant: apply, apply-failed, policy-denied. */
import { describe, expect, it } from 'vitest';
import type { RunReport, TenantReport } from '../../engine/apply/run-report.ts';
import type { Finding } from '../../engine/diagnostic/finding.ts';
import { runNotifications } from '../../engine/notify/from-run.ts';
import type { PlanContract, PlanDocument } from '../../engine/plan/types.ts';

function contract(id: string, fields: string[]): PlanContract {
  return {
    id,
    file: 'contracts/acme.yaml',
    line: 3,
    action: fields.length === 0 ? 'noop' : 'update',
    knownFrom: 'live',
    knownFingerprint: 'sha256:x',
    ops: fields.map((field) => ({ op: 'Replace', path: `/Contract/${field}`, value: 'x' })),
    changes: fields.map((field) => ({ field: field as PlanContract['changes'][number]['field'], before: 'a', after: 'x' })),
  } as unknown as PlanContract;
}

const PLAN = {
  version: 1,
  createdAt: '2027-03-01T09:20:00.000Z',
  source: { repo: '.', ref: null, commit: 'c'.repeat(40) },
  tenants: [{ tenant: 'acme', contracts: [contract('4711', ['Name', 'Comment']), contract('4712', ['Name']), contract('4713', [])] }],
  summary: { tenants: 1, contracts: 3, changed: 2, ops: 3 },
} as unknown as PlanDocument;

function report(tenant: Partial<TenantReport>, findings?: Finding[]): RunReport {
  return {
    version: 1,
    runId: 'run-1',
    startedAt: '2027-03-01T09:20:00.000Z',
    finishedAt: '2027-03-01T09:20:01.000Z',
    dryRun: false,
    source: PLAN.source,
    tenants: [{ tenant: 'acme', contracts: 3, changed: 2, applied: 2, ops: 3, requests: 2, retries: 0, throttles: 0, failures: [], ...tenant }],
    ...(findings ? { findings } : {}),
    summary: { tenants: 1, changed: 2, applied: 2, failed: 0, ops: 3, requests: 2, retries: 0 },
  };
}

const CONTEXT = { time: '2027-03-01T09:20:02.000Z', command: 'contract-sync apply' };

describe('runNotifications', () => {
  it('tells apply with each changed contract and its fields; nothing for a contract without ops', () => {
    const told = runNotifications({ plan: PLAN, report: report({}), ...CONTEXT });

    expect(told).toEqual([
      {
        event: 'apply',
        tenant: 'acme',
        time: CONTEXT.time,
        contracts: [
          { id: '4711', file: 'contracts/acme.yaml', line: 3, fields: [{ field: 'Name' }, { field: 'Comment' }] },
          { id: '4712', file: 'contracts/acme.yaml', line: 3, fields: [{ field: 'Name' }] },
        ],
      },
    ]);
  });

  it('tells apply-failed with the reason of each contract that failed, and apply for the others', () => {
    const failure = {
      contractId: '4712',
      file: 'contracts/acme.yaml',
      line: 5,
      outcome: 'failed' as const,
      ops: 1,
      status: 400,
      reason: 'HTTP 400: Name too long',
    };

    const told = runNotifications({ plan: PLAN, report: report({ failures: [failure] }), ...CONTEXT });

    expect(told.map((notification) => [notification.event, notification.contracts.map((entry) => entry.id)])).toEqual([
      ['apply', ['4711']],
      ['apply-failed', ['4712']],
    ]);
    expect(told[1]!.contracts[0]).toMatchObject({ reason: 'HTTP 400: Name too long', fields: [{ field: 'Name' }] });
  });

  it('tells policy-denied for a counting policy denial, not apply-failed for what it kept from being sent; never for a lifted override or a built-in check', () => {
    const skipped = ['4711', '4712'].map((id) => ({
      contractId: id,
      file: 'contracts/acme.yaml',
      line: 3,
      outcome: 'skipped' as const,
      ops: 1,
      status: null,
      reason: 'not sent: denied by frozen',
    }));
    const findings: Finding[] = [
      { check: 'frozen', action: 'deny', tenant: 'acme', contractId: '4712', file: 'contracts/acme.yaml', line: 3, message: 'the name is frozen' },
      { check: 'lifted', action: 'override', tenant: 'acme', contractId: '4711', message: 'lifted', overridden: { reason: 'ok', by: 'octocat' } },
      { check: 'removal-guard', action: 'deny', tenant: 'acme', message: 'too many removals' },
      { check: 'style', action: 'warn', tenant: 'acme', contractId: '4711', message: 'a warning' },
    ];

    const told = runNotifications({ plan: PLAN, report: report({ applied: 0, failures: skipped }, findings), ...CONTEXT });

    expect(told).toEqual([
      {
        event: 'policy-denied',
        tenant: 'acme',
        time: CONTEXT.time,
        contracts: [{ id: '4712', file: 'contracts/acme.yaml', line: 3, fields: [{ field: 'Name' }], reason: 'frozen: the name is frozen' }],
        denials: { rules: ['frozen'], overridable: false },
        rerun: 'contract-sync apply',
      },
    ]);
  });
});
