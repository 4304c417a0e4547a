import { describe, expect, it } from 'vitest';
import type { Config } from '../../engine/config/index.ts';
import { groupByTenant, sniffTenant, validateByTenant } from '../../engine/desired/by-tenant.ts';
import { validateDesiredState, type ContractSet, type DesiredFile } from '../../engine/desired/index.ts';

const CONFIG: Pick<Config, 'tenants'> = {
  tenants: {
    acme: { clientId: 'cs-acme', clientSecret: { env: 'ACME_SECRET' }, paths: ['contracts/acme/**'] },
    globex: { clientId: 'cs-globex', clientSecret: { env: 'GLOBEX_SECRET' } },
  },
};

function file(path: string, content: string): DesiredFile {
  return { path, content: new TextEncoder().encode(content) };
}

/** Files with every kind of cross-file problem: duplicates across files, a tenant outside its paths, an unknown tenant, a parse error. */
const FILES: readonly DesiredFile[] = [
  file('contracts/acme/b.yaml', 'tenant: acme\ncontracts:\n  "1": { Name: B1 }\n  "2": { Name: B2 }\n'),
  file('contracts/acme/a.yaml', 'tenant: "acme"  # quoted, commented\ncontracts:\n  "1": { Name: A1 }\n'),
  file('contracts/globex/a.yaml', 'contracts:\n  "1": { Name: G1 }\ntenant: globex\n'),
  file('contracts/globex/flow.yaml', '{ tenant: globex, contracts: { "2": { Name: G2 }, "1": { Name: again } } }\n'),
  file('contracts/other/acme.yaml', 'tenant: acme\ncontracts:\n  "9": { Name: outside }\n'),
  file('contracts/initech/a.yaml', 'tenant: initech\ncontracts: {}\n'),
  file('contracts/broken.yaml', 'tenant: acme\ncontracts: [\n'),
  file('contracts/empty.yaml', ''),
  file('contracts/acme/bad.yaml', 'tenant: acme\ncontracts:\n  "3": { Name: 3 }\n  "4": { Name: ok }\n'),
];

async function byTenant(files: readonly DesiredFile[], sniff?: (file: DesiredFile) => string | undefined) {
  const visited: { tenant: string; sets: readonly ContractSet[] }[] = [];
  let restarts = 0;
  const result = await validateByTenant(
    files,
    CONFIG,
    {
      tenant(tenant, sets) {
        visited.push({ tenant, sets });
      },
      restart() {
        restarts += 1;
        visited.length = 0;
      },
    },
    sniff ? { sniff } : {},
  );
  return { result, visited, restarts };
}

describe('sniffTenant', () => {
  it.each([
    ['a plain value', 'tenant: acme\ncontracts: {}\n', 'acme'],
    ['a quoted value and a comment', "tenant: 'acme-1.x'  # who\n", 'acme-1.x'],
    ['the tenant line last', 'contracts:\n  "1": {}\ntenant: acme\r\n', 'acme'],
    ['a flow mapping', '{ tenant: acme }\n', undefined],
    ['a value YAML reads as a boolean', 'tenant: yes\n', undefined],
    ['a tag', 'tenant: !!str acme\n', undefined],
    ['two tenant lines', 'tenant: acme\ntenant: globex\n', undefined],
    ['a quoted key besides', 'tenant: acme\n"tenant": globex\n', undefined],
    ['no tenant line', 'contracts: {}\n', undefined],
  ])('%s', (_, content, expected) => {
    expect(sniffTenant(file('a.yaml', content))).toBe(expected);
  });
});

describe('validateByTenant', () => {
  it('gives the diagnostics of validating every file at once, and each tenant the contract sets it would get', async () => {
    const whole = validateDesiredState(FILES, CONFIG);

    const { result, visited, restarts } = await byTenant(FILES);

    expect(restarts).toBe(0);
    expect(result.errors).toEqual(whole.errors);
    expect(result.warnings).toEqual(whole.warnings);
    expect(result.errors.map((d) => d.code)).toContain('duplicate-contract');
    expect(visited.map((entry) => entry.tenant)).toEqual(['acme', 'globex']);
    expect(visited.flatMap((entry) => entry.sets)).toEqual([...whole.contractSets].sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0)));
    expect(result.contracts).toBe(whole.contractSets.reduce((sum, set) => sum + set.contracts.length, 0));
  });

  it('a wrong sniff starts the tenants over, grouped by the parse, with the same result', async () => {
    const whole = validateDesiredState(FILES, CONFIG);
    // Says globex for acme's second file: its duplicate would go unseen.
    function wrong(candidate: DesiredFile): string | undefined {
      return candidate.path === 'contracts/acme/b.yaml' ? 'globex' : sniffTenant(candidate);
    }

    const { result, visited, restarts } = await byTenant(FILES, wrong);

    expect(restarts).toBe(1);
    expect(result.errors).toEqual(whole.errors);
    expect(visited.map((entry) => entry.tenant)).toEqual(['acme', 'globex']);
  });
});

describe('groupByTenant', () => {
  it('puts files without a tenant first, then tenants by name, files by path', () => {
    const groups = groupByTenant(FILES);

    expect(groups.map((group) => [group.tenant, group.files.map((f) => f.path)])).toEqual([
      [undefined, ['contracts/empty.yaml']],
      ['acme', ['contracts/acme/a.yaml', 'contracts/acme/b.yaml', 'contracts/acme/bad.yaml', 'contracts/broken.yaml', 'contracts/other/acme.yaml']],
      ['globex', ['contracts/globex/a.yaml', 'contracts/globex/flow.yaml']],
      ['initech', ['contracts/initech/a.yaml']],
    ]);
  });
});
