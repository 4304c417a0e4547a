import { describe, expect, it } from 'vitest';
import { describeScope, narrowToScopes, planningFingerprint, startingPoint, tenantScope, type TenantScope } from '../../engine/apply/incremental.ts';
import { parseConfig } from '../../engine/config/parse.ts';
import type { Config } from '../../engine/config/types.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import type { TenantRunRecord } from '../../engine/state/types.ts';
import { configYaml } from '../helpers/files.ts';

const COMMIT = 'a'.repeat(40);

function config(extra = ''): Config {
  const result = parseConfig('contract-sync.yaml', configYaml(['acme', 'globex'], extra));
  if (!result.config) throw new Error(JSON.stringify(result.diagnostics));
  return result.config;
}

function record(overrides: Partial<TenantRunRecord> = {}): TenantRunRecord {
  return { lastAppliedCommit: COMMIT, planningFingerprint: planningFingerprint(config(), 'acme'), pending: [], updatedAt: '2026-11-22T00:00:00.000Z', ...overrides };
}

function set(tenant: string, file: string): ContractSet {
  return { tenant, file, contracts: [{ id: `${file}-1`, line: 3, column: 3, fields: { Name: 'x' } }] };
}

describe('planningFingerprint', () => {
  it.each([
    ['the desired paths', 'desired: { paths: ["deals/**/*.yaml"] }\n'],
    ['a collection mode', 'collections: additive\n'],
  ])('changes with %s', (_, extra) => {
    expect(planningFingerprint(config(extra), 'acme')).not.toBe(planningFingerprint(config(), 'acme'));
  });

  it('does not change with settings that do not change a plan', () => {
    const rate = config('rate: { requestsPerSecond: 1 }\nretry: { maxAttempts: 9 }\n');

    expect(planningFingerprint(rate, 'acme')).toBe(planningFingerprint(config(), 'acme'));
  });
});

describe('startingPoint', () => {
  it.each<[string, TenantRunRecord | undefined, RegExp]>([
    ['no run record', undefined, /no earlier run recorded a commit/],
    ['a record without a commit', record({ lastAppliedCommit: null }), /no earlier run recorded a commit/],
    ['a record from another planning config', record({ planningFingerprint: 'sha256:other' }), /config changed how contracts are planned/],
    ['a record from before planning fingerprints', record({ planningFingerprint: undefined }), /config changed how contracts are planned/],
    ['a pending contract without its file', record({ pending: [{ contractId: '1', outcome: 'failed', reason: 'x', since: 'y' }] }), /has no recorded file/],
  ])('plans every contract after %s', (_, runRecord, reason) => {
    const start = startingPoint('acme', runRecord, planningFingerprint(config(), 'acme'));

    expect(start).toMatchObject({ kind: 'full', reason: expect.stringMatching(reason) });
  });

  it('starts from the last applied commit of a usable record', () => {
    expect(startingPoint('acme', record(), planningFingerprint(config(), 'acme'))).toEqual({ kind: 'since', commit: COMMIT });
  });
});

describe('tenantScope', () => {
  it('plans the changed files and the files of pending contracts', () => {
    const pending = [{ contractId: '7', outcome: 'failed' as const, reason: '404', since: 'y', file: 'contracts/acme/old.yaml' }];

    const scope = tenantScope('acme', record({ pending }), { kind: 'ancestor', changedFiles: ['contracts/acme/new.yaml'] });

    expect(scope).toEqual({
      tenant: 'acme',
      kind: 'incremental',
      since: COMMIT,
      files: new Set(['contracts/acme/new.yaml', 'contracts/acme/old.yaml']),
      pending: 1,
    });
  });

  it('applies nothing of a tenant last applied at a newer commit than this one', () => {
    expect(tenantScope('acme', record(), { kind: 'behind' })).toEqual({ tenant: 'acme', kind: 'behind', since: COMMIT });
  });

  it.each([
    [{ kind: 'missing' } as const, /is not in this clone \(fetch the history/],
    [{ kind: 'not-ancestor' } as const, /is not an ancestor of this one/],
  ])('plans every contract when the last applied commit is %o', (since, reason) => {
    expect(tenantScope('acme', record(), since)).toMatchObject({ kind: 'full', reason: expect.stringMatching(reason) });
  });
});

describe('narrowToScopes', () => {
  it("keeps an incremental tenant's sets of its files only, every set of a full tenant, and none of a tenant behind", () => {
    const sets = [set('acme', 'a1.yaml'), set('acme', 'a2.yaml'), set('globex', 'g1.yaml'), set('initech', 'i1.yaml')];
    const scopes = new Map<string, TenantScope>([
      ['acme', { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(['a2.yaml', 'g1.yaml']), pending: 0 }],
      ['globex', { tenant: 'globex', kind: 'full', reason: 'no earlier run recorded a commit' }],
      ['initech', { tenant: 'initech', kind: 'behind', since: COMMIT }],
    ]);

    const narrowed = narrowToScopes(sets, scopes);

    expect(narrowed.map((kept) => kept.file)).toEqual(['a2.yaml', 'g1.yaml']);
  });
});

describe('describeScope', () => {
  it.each<[string, TenantScope, number, string]>([
    ['a full run', { tenant: 'acme', kind: 'full', reason: 'no earlier run recorded a commit' }, 9, 'acme: every contract planned (no earlier run recorded a commit)'],
    ['an incremental run', { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(['a.yaml']), pending: 0 }, 3, 'acme: incremental since aaaaaaaaaaaa: 3 contracts in changed files'],
    [
      'an incremental run with unfinished contracts',
      { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(['a.yaml']), pending: 1 },
      4,
      'acme: incremental since aaaaaaaaaaaa: 4 contracts in changed files (with the files of 1 contract an earlier run did not finish)',
    ],
    [
      'a tenant behind',
      { tenant: 'acme', kind: 'behind', since: COMMIT },
      0,
      'acme: not applied: it was last applied at aaaaaaaaaaaa, which is newer than this commit (an older pipeline run?); to go back, commit a revert, or pass --full to apply this commit anyway',
    ],
    ['an incremental run with nothing to plan', { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(), pending: 0 }, 0, 'acme: incremental since aaaaaaaaaaaa: no contract changed in git'],
  ])('says what %s planned', (_, scope, contracts, line) => {
    expect(describeScope(scope, contracts)).toBe(line);
  });
});
