import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig, parseConfigExactly } from '../../engine/config/parse.ts';
import { readPlainYamlMap } from '../../engine/yaml/plain-yaml.ts';
import { DEFAULT_YAML_LIMITS, parseYamlSource } from '../../engine/yaml/yaml-source.ts';
import { blockText, DOCUMENT_END, DOCUMENT_START, edited, odd, render, scalar, type Yaml } from '../helpers/yaml-arbitraries.ts';

/**
 * Mostly one of `valid` (a string quoted or not, unless `quote` is false), now and then one of
 * `invalid` or an odd scalar: configs with no problem, with one, or with several.
 */
function pick(valid: readonly string[], invalid: readonly string[] = [], quote = true): fc.Arbitrary<Yaml> {
  function written(texts: readonly string[]): fc.Arbitrary<string> {
    return fc.constantFrom(...texts).chain((text) => (quote ? fc.constantFrom(text, `"${text}"`, `'${text}'`) : fc.constant(text)));
  }
  const choices = [
    { weight: 40, arbitrary: written(valid) },
    { weight: 1, arbitrary: odd },
  ];
  if (invalid.length > 0) choices.push({ weight: 1, arbitrary: written(invalid) });
  return scalar(fc.oneof(...choices));
}

function integer(min: number, max: number): fc.Arbitrary<Yaml> {
  const outside = fc.constantFrom(String(min - 1), String(max + 1), '12a');
  return scalar(fc.oneof({ weight: 40, arbitrary: fc.integer({ min, max }).map(String) }, { weight: 1, arbitrary: outside }, { weight: 1, arbitrary: odd }));
}

/** Now and then: an unknown or misspelt key's value (undefined leaves the key out). */
function rarely(value: fc.Arbitrary<Yaml>): fc.Arbitrary<Yaml | undefined> {
  return fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });
}

const style = fc.boolean();

/** A map with every one of `entries`, then some of `optional`. */
function mapWith(
  flow: fc.Arbitrary<boolean>,
  entries: Record<string, fc.Arbitrary<Yaml>>,
  optional: Record<string, fc.Arbitrary<Yaml | undefined>> = {},
): fc.Arbitrary<Yaml> {
  return fc.tuple(flow, fc.record(entries), fc.record(optional, { requiredKeys: [] })).map(([isFlow, record, more]) => ({
    kind: 'map',
    flow: isFlow,
    entries: [...Object.entries(record), ...Object.entries(more).filter((entry): entry is [string, Yaml] => entry[1] !== undefined)],
  }));
}

// Secure and loopback; insecure, not http(s), with credentials, not a URL. A bracket ends a plain scalar in a flow map: quoted.
const url = fc.oneof(
  {
    weight: 6,
    arbitrary: pick(
      ['https://cms.example.com', 'https://cms.example.com/', 'http://localhost:8080', 'http://127.0.0.1:9', 'https://login.example.com/realms/x'],
      ['http://cms.example.com', 'ftp://cms.example.com', 'https://user:pw@cms.example.com', 'not a url'],
    ),
  },
  { weight: 1, arbitrary: pick(['"http://[::1]:80"', "'http://[::1]:80'"], [], false) },
);
const secretRef = fc.oneof(
  { weight: 16, arbitrary: mapWith(style, { env: pick(['ACME_SECRET', 'OLD_SECRET'], ['1BAD', 'with space']) }) },
  { weight: 8, arbitrary: mapWith(style, { file: pick(['/run/secrets/acme', 'secrets/acme.txt'], ['']) }) },
  {
    weight: 1,
    arbitrary: fc.oneof(mapWith(style, { env: pick(['ACME_SECRET']), file: pick(['/run/secrets/acme']) }), pick(['hunter2', 'postgresql://u:p@db/x'])),
  },
);
const globs: fc.Arbitrary<Yaml> = fc
  .tuple(
    style,
    fc.oneof(
      { weight: 20, arbitrary: fc.array(pick(['contracts/**/*.yaml', 'contracts/acme/**', 'more/*.yml'], ['']), { minLength: 1, maxLength: 3 }) },
      { weight: 1, arbitrary: fc.constant([]) },
    ),
  )
  .map(([flow, items]) => ({ kind: 'seq', flow, items }));
const mode = pick(['authoritative', 'additive'], ['Additive']);

const tenant = mapWith(
  style,
  { clientId: pick(['cs-acme', 'client 1'], ['']), clientSecret: secretRef },
  {
    previousClientSecret: secretRef,
    secretRotatedAt: pick(['2026-06-01'], ['2026-13-01', '2026-06-01T00:00:00Z']),
    paths: globs,
    tenantId: fc.oneof(pick(['acme-id'], ['']), integer(0, 99_999)),
    clientID: rarely(pick(['misspelt'])),
  },
);
const tenantKey = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom('acme', 'globex', '"acme-2"', "'t.3'", 'tenant_x', '"12"') },
  { weight: 1, arbitrary: fc.constantFrom('Bad Tenant', '-x', '12', '__proto__', '<<') },
);
const tenants: fc.Arbitrary<Yaml> = fc
  .tuple(style, fc.uniqueArray(fc.tuple(tenantKey, tenant), { minLength: 1, maxLength: 2, selector: ([key]) => key }))
  .map(([flow, entries]) => ({ kind: 'map', flow, entries }));

const config = mapWith(
  fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  {
    api: mapWith(
      style,
      { baseUrl: url },
      {
        read: mapWith(style, { path: pick(['"/contract/{id}"', "'/contract/{id}'"], ['/contracts', '"contract/{id}"'], false) }),
        timeoutMs: integer(1, 1_000_000),
      },
    ),
    auth: mapWith(style, { url, realm: pick(['cms', 'cms.prod'], ['my realm']) }, { tokenEndpoint: url, timeoutMs: integer(1, 1_000_000) }),
    tenants,
  },
  {
    desired: mapWith(style, { paths: globs }),
    collections: fc.oneof(mode, mapWith(style, {}, { Company: mode, Owner: mode, Type: mode, Nothing: rarely(mode) })),
    rate: mapWith(
      style,
      {},
      { requestsPerSecond: pick(['5', '0.5', '1e3', '.5'], ['0', '10001'], false), concurrency: integer(1, 3), maxInFlight: integer(1, 20) },
    ),
    retry: mapWith(style, {}, { maxAttempts: integer(1, 10) }),
    state: fc.oneof(
      mapWith(style, { backend: pick(['file']) }, { path: fc.oneof(pick(['.contract-sync/state'], ['']), blockText) }),
      mapWith(style, { backend: pick(['postgres']), url: secretRef }, { schema: pick(['contract_sync'], ['Bad-Schema']) }),
    ),
    safety: mapWith(style, {}, { maxRemovals: integer(0, 100) }),
    apis: rarely(pick(['unknown'])),
  },
);

const realisticFile = fc
  .record({
    body: config,
    comment: fc.boolean(),
    start: DOCUMENT_START,
    end: DOCUMENT_END,
    crlf: fc.boolean(),
  })
  .map(({ body, comment, start, end, crlf }) => {
    // At the top level: a block map from the first column, or a flow map.
    const rendered = render(body, -2);
    const text = `${start}${comment ? '# the engine config\n' : ''}${rendered.startsWith('\n') ? rendered.slice(1) : rendered}${end}`;
    return crlf ? text.replace(/\n/g, '\r\n') : text;
  });

describe('the config fast path against the yaml package', () => {
  it('gives the same config and diagnostics as the yaml package alone, and takes most valid configs', () => {
    let runs = 0;
    let vouched = 0;
    let valid = 0;
    let validVouched = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: realisticFile }, { weight: 2, arbitrary: edited(realisticFile) }), (content) => {
        runs += 1;

        const result = parseConfig('contract-sync.yaml', content);
        const exact = parseConfigExactly('contract-sync.yaml', content);
        const fast = readPlainYamlMap(content, DEFAULT_YAML_LIMITS);

        expect(result).toStrictEqual(exact);
        if (exact.config !== undefined) valid += 1;
        if (fast === undefined) return;
        vouched += 1;
        if (exact.config !== undefined) validVouched += 1;
        // What the fast path vouches for, the yaml package reads, to the same value and without a word.
        const parsed = parseYamlSource('contract-sync.yaml', content);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(fast).toEqual(parsed.value);
        expect(parsed.diagnostics).toEqual([]);
      }),
      { numRuns: 400 },
    );

    // Not vacuous: many inputs take the fast path, many are valid, and most valid ones take it.
    expect(vouched).toBeGreaterThan(runs / 5);
    expect(valid).toBeGreaterThan(runs / 20);
    expect(validVouched).toBeGreaterThan(valid / 2);
  }, 120_000);
});
