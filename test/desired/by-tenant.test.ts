import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../engine/config/index.ts';
import { groupByTenant, sniffTenant, validateByTenant } from '../../engine/desired/by-tenant.ts';
import { validateDesiredState, type ContractSet, type DesiredFile, type DesiredFileList } from '../../engine/desired/index.ts';

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

/** sniffTenant as it was written with regular expressions, before its scan: what the scan must answer alike. */
function sniffByRegExp(content: string): string | undefined {
  const mentionPattern = /^[?"' \t]*tenant\b/gm;
  const line = /^tenant:[ \t]+(?:"([A-Za-z0-9_.-]+)"|'([A-Za-z0-9_.-]+)'|([A-Za-z][A-Za-z0-9_.-]*))[ \t]*(?:#.*)?\r?$/;
  const mentions = content.match(mentionPattern);
  if (mentions?.length !== 1) return undefined;
  const start = content.search(mentionPattern);
  const end = content.indexOf('\n', start);
  const match = line.exec(content.slice(start, end === -1 ? undefined : end));
  if (!match) return undefined;
  const tenant = match[1] ?? match[2] ?? match[3]!;
  return match[3] !== undefined && ['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n'].includes(tenant.toLowerCase()) ? undefined : tenant;
}

describe('sniffTenant, scanned', () => {
  // Texts made of the pieces that decide: the word, what may lead it, word characters after it, line breaks.
  const piece = fc.constantFrom(
    'tenant',
    'tenants',
    'Tenant',
    'xtenant',
    'tenant_',
    'tenant-',
    ': ',
    ':',
    'acme',
    '"acme"',
    "'a.b'",
    'yes',
    '#c',
    '"',
    "'",
    '?',
    ' ',
    '\t',
    '\n',
    '\r',
    '\r\n',
    'a',
    '0',
    '_',
    '{',
    'é',
  );
  // Lines: whole ones a file has, or pieces run together; joined by one kind of line break or another.
  const line = fc.oneof(
    {
      weight: 2,
      arbitrary: fc.constantFrom('tenant: acme', "tenant: 'a.b'  # who", 'tenant: "x-1"', 'tenant: yes', 'contracts: {}', '  "1": { Name: tenant }'),
    },
    { weight: 3, arbitrary: fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join('')) },
  );
  const text = fc.tuple(fc.array(line, { maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\r')).map(([lines, lineBreak]) => lines.join(lineBreak));

  it('reads a file as the regular expressions did, as text and as bytes', () => {
    let sniffed = 0;
    fc.assert(
      fc.property(text, (content) => {
        const expected = sniffByRegExp(content);
        if (expected !== undefined) sniffed += 1;
        expect(sniffTenant({ path: 'a.yaml', content })).toBe(expected);
        // Bytes are read as latin1, as the regular expressions read them.
        expect(sniffTenant({ path: 'a.yaml', content: Buffer.from(content, 'latin1') })).toBe(expected);
      }),
      { numRuns: 3000 },
    );
    // Not vacuous: some texts name a tenant the sniff can tell.
    expect(sniffed).toBeGreaterThan(200);
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

/** FILES as a list read when asked, and what each read asked for. */
function listed(files: readonly DesiredFile[]): { list: DesiredFileList; reads: string[][] } {
  const reads: string[][] = [];
  const list: DesiredFileList = {
    paths: files.map((f) => f.path),
    async read(paths) {
      reads.push([...paths]);
      return paths.map((wanted) => files.find((f) => f.path === wanted)!);
    },
  };
  return { list, reads };
}

describe('validateByTenant, files read when asked', () => {
  it("reads every file once to group it, then each tenant's files when it comes: one tenant's at a time", async () => {
    const whole = validateDesiredState(FILES, CONFIG);
    const { list, reads } = listed(FILES);
    const readBefore: string[][] = [];

    const result = await validateByTenant(
      list,
      CONFIG,
      {
        tenant() {
          readBefore.push(reads.slice(1).flat());
        },
        restart() {},
      },
      { keepBytes: 0 },
    );

    expect(result.errors).toEqual(whole.errors);
    expect(result.warnings).toEqual(whole.warnings);
    expect(reads[0]).toEqual(FILES.map((f) => f.path).sort());
    // The empty file costs nothing to keep: it is not read again.
    expect(reads.slice(1)).toEqual([
      ['contracts/acme/a.yaml', 'contracts/acme/b.yaml', 'contracts/acme/bad.yaml', 'contracts/broken.yaml', 'contracts/other/acme.yaml'],
      ['contracts/globex/a.yaml', 'contracts/globex/flow.yaml'],
      ['contracts/initech/a.yaml'],
    ]);
    // When globex is visited, initech's file has not been read yet.
    expect(readBefore.at(-1)).not.toContain('contracts/initech/a.yaml');
  });

  it('reads a small repository once: the grouping keeps its contents for the tenants', async () => {
    const { list, reads } = listed(FILES);

    const { result } = await byTenant(FILES);
    const fromList = await validateByTenant(list, CONFIG, { tenant() {}, restart() {} });

    expect(fromList).toEqual(result);
    expect(reads).toEqual([FILES.map((f) => f.path).sort()]);
  });

  it('a wrong sniff starts over from the list, with the same result', async () => {
    const whole = validateDesiredState(FILES, CONFIG);
    const { list } = listed(FILES);
    let restarts = 0;

    const result = await validateByTenant(
      list,
      CONFIG,
      {
        tenant() {},
        restart() {
          restarts += 1;
        },
      },
      { keepBytes: 0, sniff: (candidate) => (candidate.path === 'contracts/acme/b.yaml' ? 'globex' : sniffTenant(candidate)) },
    );

    expect(restarts).toBe(1);
    expect(result.errors).toEqual(whole.errors);
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
