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
      'Only the contracts whose YAML changed since the last apply (commit 13802e3, for acme and globex) are planned here, ' +
        'and 2 contracts an earlier apply did not finish. The others are assumed to be as that apply left them; ' +
        'to plan every contract, run contract-sync plan --full. Every contract of initech is planned: no earlier run recorded a commit.',
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
      'Only the contracts whose YAML changed since the last apply (commit 13802e3, for tenant-000, tenant-001, tenant-002, tenant-003 and 94 more tenants) ' +
        'are planned here. The others are assumed to be as that apply left them; to plan every contract, run contract-sync plan --full. ' +
        'Every contract of tenant-098 and tenant-099 is planned: no earlier run recorded a commit.',
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
    ).toBe(
      'Only the contracts whose YAML changed since the last apply (commits 13802e3 for acme, 9f1c2d3 for globex) are planned here. ' +
        'The others are assumed to be as that apply left them; to plan every contract, run contract-sync plan --full.',
    );
  });

  it('in markdown: the command as code, tenant names and reasons escaped', () => {
    const format = { code: (text: string) => `\`${text}\``, text: (text: string) => text.replaceAll('*', '\\*') };

    expect(incrementalNote(source([{ tenant: 'a*b', since: L }], [{ tenant: 'c', reason: 'why *not*' }]), format)).toBe(
      'Only the contracts whose YAML changed since the last apply (commit 13802e3, for a\\*b) are planned here. ' +
        'The others are assumed to be as that apply left them; to plan every contract, run `contract-sync plan --full`. ' +
        'Every contract of c is planned: why \\*not\\*.',
    );
  });
});
