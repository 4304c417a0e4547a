/**
 * Issue 41, item 5: one escaping rule for every text the engine prints. Every C0 and C1 control,
 * DEL, every bidi and zero-width character is fed through every label and value of the text and
 * markdown renderers (plan, drift, run summary): file names, contract ids, member labels (identity
 * values), member values, field values, failure reasons. None comes out raw.
 */
import { describe, expect, it } from 'vitest';
import { renderRunSummary, type RunReport } from '../../engine/apply/run-report.ts';
import { createDriftReport, renderDriftMarkdown, renderDriftText } from '../../engine/drift/index.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { renderPlanAnnotations } from '../../engine/plan/render-github.ts';
import { renderPlanMarkdown } from '../../engine/plan/render-markdown.ts';
import { renderPlanText } from '../../engine/plan/render-text.ts';
import type { KnownState } from '../../engine/state/types.ts';
import { codeSpan } from '../../engine/text/markdown-escape.ts';

const CREATED_AT = '2027-03-01T06:00:00.000Z';
const SOURCE = { repo: '.', ref: null, commit: 'c0ffee0000000000000000000000000000000000' };

function range(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, index) => String.fromCharCode(from + index));
}

/** Every character a terminal or a reader acts on instead of showing, listed here independently of the engine's rule. */
const ACTIVE_CHARACTERS = [
  ...range(0x00, 0x1f), // C0
  ...range(0x7f, 0x9f), // DEL and C1 (U+009B is CSI)
  '\u00ad', // soft hyphen: invisible
  '\u061c', // Arabic letter mark
  '\u180e', // Mongolian vowel separator
  ...range(0x200b, 0x200f), // zero-width space, non-joiner, joiner; LRM, RLM
  ...range(0x2028, 0x202e), // line and paragraph separators; LRE, RLE, PDF, LRO, RLO
  ...range(0x2060, 0x2069), // word joiner, invisible operators; LRI, RLI, FSI, PDI
  '\ufeff', // zero-width no-break space (BOM)
];

const RAW = new RegExp(`[${ACTIVE_CHARACTERS.map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`, 'u');

function hex(char: string): string {
  return `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** One tenant whose every label and value carries `char`: a set, a replace, members added, removed and changed. */
function planWith(char: string) {
  const desired: ContractSet[] = [
    {
      tenant: 'acme',
      file: `contracts/acme/file-${char}.yaml`,
      contracts: [
        {
          id: `id-${char}`,
          line: 3,
          column: 3,
          fields: {
            Name: `name-${char}`,
            Company: [{ Id: 1, RelationType: `relation-${char}` }],
            Type: [{ Lookup: `lookup-${char}`, IsDora: false, EbaCode: `eba-${char}` }],
            Owner: [{ OwnerType: { Name: `owner-type-${char}`, Value: 1 }, User: { Id: 7, Name: `user-${char}` } }],
          },
        },
      ],
    },
  ];
  const known: KnownState = new Map([
    [
      'acme',
      new Map([
        [
          `id-${char}`,
          {
            fields: {
              Name: `live-${char}`,
              Company: [{ Id: 2, RelationType: `old-${char}` }],
              Owner: [{ OwnerType: { Name: `owner-type-${char}`, Value: 1 }, User: { Id: 7, Name: `old-user-${char}` } }],
            },
            from: 'live' as const,
          },
        ],
      ]),
    ],
  ]);
  return createPlan(desired, known, { createdAt: CREATED_AT, source: SOURCE, collections: { Company: 'authoritative', Owner: 'authoritative' } });
}

function runReportWith(char: string): RunReport {
  return {
    version: 1,
    runId: 'run-1',
    startedAt: CREATED_AT,
    finishedAt: CREATED_AT,
    dryRun: false,
    source: SOURCE,
    tenants: [
      {
        tenant: 'acme',
        contracts: 1,
        changed: 1,
        applied: 0,
        ops: 1,
        requests: 1,
        retries: 0,
        throttles: 0,
        failures: [
          { contractId: `id-${char}`, file: `contracts/acme/file-${char}.yaml`, line: 3, outcome: 'failed', ops: 1, status: 400, reason: `reason-${char}` },
        ],
        error: `error-${char}`,
      },
    ],
    summary: { tenants: 1, changed: 1, applied: 0, failed: 1, ops: 1, requests: 1, retries: 0 },
  };
}

/** Where `output` holds a raw active character, with the line it is on, for a readable failure. */
function rawIn(output: string): string[] {
  return output.split('\n').filter((line) => RAW.test(line));
}

describe.each(ACTIVE_CHARACTERS.map((char) => [hex(char), char]))('%s in every label and value', (_name, char) => {
  const plan = planWith(char);
  const drift = createDriftReport({ plan, run: runReportWith(char), lastApplied: new Map(), fix: false });

  it('the plan is what the test means: a set, a replace, members added, removed and changed', () => {
    const changes = plan.tenants[0]!.contracts[0]!.changes;
    expect(changes.map((change) => change.field).sort()).toEqual(['Company', 'Company', 'Name', 'Owner', 'Type']);
  });

  it('plan text', () => {
    const text = renderPlanText(plan);

    expect(rawIn(text)).toEqual([]);
    expect(text).toContain('relation-');
  });

  it('plan markdown', () => {
    expect(rawIn(renderPlanMarkdown(plan))).toEqual([]);
  });

  it('drift text and markdown', () => {
    expect(rawIn(renderDriftText(drift))).toEqual([]);
    expect(rawIn(renderDriftMarkdown(drift))).toEqual([]);
  });

  it('plan annotations (--format github)', () => {
    expect(rawIn(renderPlanAnnotations(plan))).toEqual([]);
  });

  it('the run summary', () => {
    expect(rawIn(renderRunSummary(runReportWith(char)))).toEqual([]);
  });
});

describe('a member label is escaped as its value is (the issue: a raw CSI before a JSON-escaped one)', () => {
  it('+ Company (Id 1, RelationType "\\u009b31mC1"): { Id: 1, RelationType: "\\u009b31mC1" }', () => {
    const plan = createPlan(
      [
        {
          tenant: 'acme',
          file: 'contracts/acme/a.yaml',
          contracts: [{ id: '1', line: 3, column: 3, fields: { Company: [{ Id: 1, RelationType: '\u009b31mC1' }] } }],
        },
      ],
      new Map(),
      { createdAt: CREATED_AT, source: SOURCE },
    );

    const text = renderPlanText(plan);

    expect(text).toContain('+ Company (Id 1, RelationType "\\u009b31mC1"): { Id: 1, RelationType: "\\u009b31mC1" }');
  });
});

describe('a contract id in markdown is one code span, whatever it holds', () => {
  it.each([
    ['4711', '`4711`'],
    ['a`b', '`` a`b ``'],
    ['``x`', '``` ``x` ```'],
    ['id-\u202e', '`id-\\u202e`'],
  ])('%j -> %s', (id, shown) => {
    expect(codeSpan(id)).toBe(shown);
  });

  it('an id with backticks does not end its span early in the plan comment', () => {
    const plan = createPlan(
      [{ tenant: 'acme', file: 'contracts/acme/a.yaml', contracts: [{ id: 'a`**b**`c', line: 3, column: 3, fields: { Name: 'x' } }] }],
      new Map(),
      { createdAt: CREATED_AT, source: SOURCE },
    );

    const markdown = renderPlanMarkdown(plan);

    expect(markdown).toContain('**`` a`**b**`c ``**');
  });
});
