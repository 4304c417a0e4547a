import { describe, expect, it } from 'vitest';
import {
  describeScope,
  narrowToChangedContracts,
  narrowToScopes,
  planningFingerprint,
  planningFingerprints,
  startingPoint,
  tenantScope,
  type TenantScope,
} from '../../engine/apply/incremental.ts';
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
  return {
    lastAppliedCommit: COMMIT,
    planningFingerprint: planningFingerprint(config(), 'acme'),
    pending: [],
    updatedAt: '2026-11-22T00:00:00.000Z',
    ...overrides,
  };
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

  it('is the same through planningFingerprints, for tenants with paths of their own and without', () => {
    const plain = config();
    const mixed: Config = { ...plain, tenants: { ...plain.tenants, globex: { ...plain.tenants.globex!, paths: ['contracts/globex/**/*.yaml'] } } };
    const planning = planningFingerprints(mixed);

    for (const tenant of ['acme', 'globex', 'acme', 'globex']) expect(planning(tenant)).toBe(planningFingerprint(mixed, tenant));
    expect(planning('globex')).not.toBe(planning('acme'));
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
      pendingIds: new Set(['7']),
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
      ['acme', { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(['a2.yaml', 'g1.yaml']), pending: 0, pendingIds: new Set<string>() }],
      ['globex', { tenant: 'globex', kind: 'full', reason: 'no earlier run recorded a commit' }],
      ['initech', { tenant: 'initech', kind: 'behind', since: COMMIT }],
    ]);

    const narrowed = narrowToScopes(sets, scopes);

    expect(narrowed.map((kept) => kept.file)).toEqual(['a2.yaml', 'g1.yaml']);
  });
});

describe('narrowToChangedContracts', () => {
  const OTHER = 'b'.repeat(40);

  function contracts(tenant: string, file: string, entries: Record<string, string>): ContractSet {
    return { tenant, file, contracts: Object.entries(entries).map(([id, name], index) => ({ id, line: index + 2, column: 3, fields: { Name: name } })) };
  }

  function incremental(tenant: string, files: string[], pendingIds: string[] = [], since = COMMIT): TenantScope {
    return { tenant, kind: 'incremental', since, files: new Set(files), pending: pendingIds.length, pendingIds: new Set(pendingIds) };
  }

  it('keeps the contracts whose desired fields changed since the last applied commit, added ones, and pending ones', () => {
    const head = [contracts('acme', 'a.yaml', { 1: 'same', 2: 'edited', 3: 'added', 4: 'pending' })];
    const before = new Map([[COMMIT, [contracts('acme', 'a.yaml', { 1: 'same', 2: 'original', 4: 'pending', 5: 'removed' })]]]);

    const narrowed = narrowToChangedContracts(head, new Map([['acme', incremental('acme', ['a.yaml'], ['4'])]]), before);

    expect(narrowed.flatMap((set) => set.contracts.map((contract) => contract.id))).toEqual(['2', '3', '4']);
  });

  it('compares a contract moved to another changed file with where it was, and a tenant with its own last applied commit', () => {
    const head = [contracts('acme', 'a.yaml', {}), contracts('acme', 'b.yaml', { 1: 'moved' }), contracts('globex', 'g.yaml', { 1: 'x', 2: 'y' })];
    const scopes = new Map([
      ['acme', incremental('acme', ['a.yaml', 'b.yaml'])],
      ['globex', incremental('globex', ['g.yaml'], [], OTHER)],
    ]);
    const before = new Map([
      [COMMIT, [contracts('acme', 'a.yaml', { 1: 'moved' }), contracts('globex', 'g.yaml', { 1: 'x', 2: 'y' })]],
      [OTHER, [contracts('globex', 'g.yaml', { 1: 'x', 2: 'changed since' })]],
    ]);

    const narrowed = narrowToChangedContracts(head, scopes, before);

    expect(narrowed.map((set) => [set.tenant, set.file, set.contracts.map((contract) => contract.id)])).toEqual([['globex', 'g.yaml', ['2']]]);
  });

  it('keeps every contract of a full tenant, and of a file outside the scope only the pending and the `also` ones', () => {
    const head = [contracts('acme', 'pr.yaml', { 1: 'a', 2: 'b', 3: 'c' }), contracts('globex', 'g.yaml', { 1: 'x' })];
    const scopes = new Map<string, TenantScope>([
      ['acme', incremental('acme', ['other.yaml'], ['3'])],
      ['globex', { tenant: 'globex', kind: 'full', reason: 'no earlier run recorded a commit' }],
    ]);

    const narrowed = narrowToChangedContracts(head, scopes, new Map(), new Map([['acme', new Set(['1'])]]));

    expect(narrowed.map((set) => [set.tenant, set.contracts.map((contract) => contract.id)])).toEqual([
      ['acme', ['1', '3']],
      ['globex', ['1']],
    ]);
  });
});

describe('describeScope', () => {
  it.each<[string, TenantScope, number, string]>([
    [
      'a full run',
      { tenant: 'acme', kind: 'full', reason: 'no earlier run recorded a commit' },
      9,
      'acme: every contract planned (no earlier run recorded a commit)',
    ],
    [
      'an incremental run',
      { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(['a.yaml']), pending: 0, pendingIds: new Set<string>() },
      3,
      'acme: incremental since aaaaaaaaaaaa: 3 contracts changed in git',
    ],
    [
      'an incremental run with unfinished contracts',
      { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(['a.yaml']), pending: 1, pendingIds: new Set(['7']) },
      4,
      'acme: incremental since aaaaaaaaaaaa: 4 contracts changed in git or left unfinished (1 contract an earlier run did not finish)',
    ],
    [
      'a tenant behind',
      { tenant: 'acme', kind: 'behind', since: COMMIT },
      0,
      'acme: not applied: it was last applied at aaaaaaaaaaaa, which is newer than this commit (an older pipeline run?); to go back, commit a revert, or pass --full to apply this commit anyway',
    ],
    [
      'an incremental run with nothing to plan',
      { tenant: 'acme', kind: 'incremental', since: COMMIT, files: new Set(), pending: 0, pendingIds: new Set<string>() },
      0,
      'acme: incremental since aaaaaaaaaaaa: no contract changed in git',
    ],
  ])('says what %s planned', (_, scope, contracts, line) => {
    expect(describeScope(scope, contracts)).toBe(line);
  });
});
