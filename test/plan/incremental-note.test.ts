import { describe, expect, it } from 'vitest';
import { incrementalNote } from '../../engine/plan/incremental-note.ts';
import type { PlanSource } from '../../engine/plan/types.ts';

const L = '13802e3aa1b2c3d4e5f60718293a4b5c6d7e8f90';
const M = '9f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c';

function source(tenants: readonly { tenant: string; since: string; pending?: number }[], full: readonly { tenant: string; reason: string }[] = []): PlanSource {
  return { repo: '.', ref: 'HEAD', commit: M, incremental: { tenants: tenants.map((entry) => ({ pending: 0, ...entry })), full } };
}

describe('incrementalNote', () => {
  it('says nothing for a plan of every contract', () => {
    expect(incrementalNote({ repo: '.', ref: null, commit: null })).toBeUndefined();
    expect(incrementalNote(source([], [{ tenant: 'acme', reason: 'no earlier run recorded a commit' }]))).toBeUndefined();
  });

  it('names the commit, the tenants, the unfinished contracts and the tenants planned in full', () => {
    const note = incrementalNote(
      source(
        [
          { tenant: 'acme', since: L, pending: 2 },
          { tenant: 'globex', since: L },
        ],
        [{ tenant: 'initech', reason: 'no earlier run recorded a commit' }],
      ),
    );

    expect(note).toBe(
      'Planned the contracts changed since the last applied commit 13802e3 (acme, globex), and 2 contracts an earlier run did not finish; ' +
        '--full plans every contract. initech: every contract planned (no earlier run recorded a commit).',
    );
  });

  it('counts the tenants beyond the first few instead of naming a whole fleet', () => {
    const tenants = Array.from({ length: 100 }, (_, index) => `tenant-${String(index).padStart(3, '0')}`);
    const note = incrementalNote(
      source(
        tenants.slice(0, 98).map((tenant) => ({ tenant, since: L })),
        tenants.slice(98).map((tenant) => ({ tenant, reason: 'no earlier run recorded a commit' })),
      ),
    );

    expect(note).toBe(
      'Planned the contracts changed since the last applied commit 13802e3 (tenant-000, tenant-001, tenant-002, tenant-003 and 94 more tenants); ' +
        '--full plans every contract. tenant-098, tenant-099: every contract planned (no earlier run recorded a commit).',
    );
  });

  it('groups tenants by the commit they were planned since', () => {
    expect(
      incrementalNote(
        source([
          { tenant: 'acme', since: L },
          { tenant: 'globex', since: M },
        ]),
      ),
    ).toBe('Planned the contracts changed since the last applied commits 13802e3 (acme), 9f1c2d3 (globex); --full plans every contract.');
  });
});
