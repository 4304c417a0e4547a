import fc from 'fast-check';
/**
 * Issue 21, item 7: what reaches people is inert. Terminal text shows control, bidi and zero-width
 * characters as visible escapes; markdown, rendered by a CommonMark parser (marked), holds no link,
 * image, heading, emphasis or mention that came from a file name or a value.
 */
import { describe, expect, it } from 'vitest';
import { Lexer, type Token, type Tokens } from 'marked';
import type { RunReport } from '../../engine/apply/run-report.ts';
import { renderRunSummary } from '../../engine/apply/run-report.ts';
import { createDriftReport, renderDriftMarkdown, renderDriftText } from '../../engine/drift/index.ts';
import { escapeInline } from '../../engine/text/markdown-escape.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { renderPlanMarkdown } from '../../engine/plan/render-markdown.ts';
import { renderPlanText } from '../../engine/plan/render-text.ts';
import type { KnownState } from '../../engine/state/types.ts';
import { escapeForTerminal } from '../../engine/text/text-escape.ts';
import { createRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';

const CREATED_AT = '2027-03-01T06:00:00.000Z';
const SOURCE = { repo: '.', ref: null, commit: 'c0ffee0000000000000000000000000000000000' };

/** Anything a terminal acts on instead of showing: C0/C1 controls, bidi and zero-width characters. */
// eslint-disable-next-line no-control-regex -- the characters under test
const ACTIVE = /[\u0000-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/;

const HOSTILE_FILES = [
  'contracts/acme/esc-\u001B[2J\u001B[31mred.yaml',
  'contracts/acme/cr-\rOVERWRITTEN.yaml',
  'contracts/acme/nl-\n# Injected heading\n@org/team.yaml',
];
const HOSTILE_VALUES = [
  'csi \u009B2J',
  'bidi \u202Egnp.exe',
  'zero\u200Bwidth',
  '[phish](https://evil.example/login)',
  '![px](https://evil.example/p.png)',
  '**b** @org/team www.evil.example',
];

describe('escapeForTerminal', () => {
  it.each([
    ['\u001B[2J', '\\e[2J'],
    ['a\rb', 'a\\rb'],
    ['a\nb\tc', 'a\\nb\\tc'],
    ['\u009B31m', '\\u009b31m'],
    ['\u202Egnp.exe', '\\u202egnp.exe'],
    ['zero\u200Bwidth\uFEFF', 'zero\\u200bwidth\\ufeff'],
    ['plain ünïcode ✓ 契約', 'plain ünïcode ✓ 契約'],
  ])('%j -> %s', (text, shown) => {
    expect(escapeForTerminal(text)).toBe(shown);
  });

  it('is the plain replacement of every active character, for any text (tested first, replaced only when there is one)', () => {
    // eslint-disable-next-line no-control-regex -- the characters under test, as engine/text/text-escape.ts lists them
    const every = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/g;
    const named: Record<string, string> = { '\u001B': '\\e', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    function oracle(text: string): string {
      return text.replace(every, (char) => named[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
    }
    const active = fc.constantFrom(
      '\u0000',
      '\u001B',
      '\n',
      '\u007F',
      '\u009B',
      '\u00AD',
      '\u061C',
      '\u180E',
      '\u200B',
      '\u2028',
      '\u202E',
      '\u2066',
      '\uFEFF',
      '\uFFFA',
    );
    const text = fc.array(fc.oneof(fc.string({ unit: 'binary' }), active), { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: 'binary' })), (given) => {
        expect(escapeForTerminal(given)).toBe(oracle(given));
        // Twice: a test leaves nothing behind for the next call.
        expect(escapeForTerminal(given)).toBe(oracle(given));
      }),
      { numRuns: 2000 },
    );
  });
});

/** Every token of `markdown`, nested ones included. */
function tokensOf(markdown: string): Token[] {
  const all: Token[] = [];
  function walk(tokens: readonly Token[]): void {
    for (const token of tokens) {
      all.push(token);
      const nested = token as { tokens?: Token[]; items?: Token[]; header?: { tokens: Token[] }[]; rows?: { tokens: Token[] }[][] };
      if (nested.tokens) walk(nested.tokens);
      if (nested.items) walk(nested.items);
      if (nested.header) for (const cell of nested.header) walk(cell.tokens);
      if (nested.rows) for (const row of nested.rows) for (const cell of row) walk(cell.tokens);
    }
  }
  walk(new Lexer({ gfm: true }).lex(markdown));
  return all;
}

/** What a hostile string could have become: links, images, headings, emphasis, mentions, autolinks. */
function markupFrom(markdown: string, ownHeadings: readonly string[]): string[] {
  const found: string[] = [];
  for (const token of tokensOf(markdown)) {
    if (token.type === 'link' || token.type === 'image') found.push(`${token.type} ${(token as Tokens.Link).href}`);
    if (token.type === 'heading' && !ownHeadings.includes((token as Tokens.Heading).text)) found.push(`heading ${(token as Tokens.Heading).text}`);
    if ((token.type === 'strong' || token.type === 'em') && /phish|b\b/.test((token as Tokens.Strong).text))
      found.push(`${token.type} ${(token as Tokens.Strong).text}`);
    if (token.type === 'text' && /@[A-Za-z0-9]/.test((token as Tokens.Text).text)) found.push(`mention in ${JSON.stringify((token as Tokens.Text).text)}`);
    if ((token.type === 'text' || token.type === 'html') && /https?:\/\/|www\.evil/.test((token as Tokens.Text).text))
      found.push(`autolink in ${JSON.stringify((token as Tokens.Text).text)}`);
  }
  return found;
}

describe('escapeInline (markdown)', () => {
  it.each([...HOSTILE_VALUES, ...HOSTILE_FILES, '# heading', '@org/team', '#12', '<img src=x onerror=alert(1)>', '`code` | cell'])('%j stays text', (text) => {
    const markdown = `| a |\n|---|\n| ${escapeInline(text)} |\n\nbefore ${escapeInline(text)} after\n`;
    expect(markupFrom(markdown, [])).toEqual([]);
    expect(tokensOf(markdown).filter((token) => token.type === 'html')).toEqual([]);
    expect(escapeInline(text)).not.toMatch(ACTIVE);
  });
});

describe('the plan and drift, rendered', () => {
  const contracts = HOSTILE_VALUES.map((value, index) => ({ id: String(100 + index), line: 3 + index, column: 3, fields: { Name: value } }));
  const desired = HOSTILE_FILES.map((file, index) => ({ tenant: 'acme', file, contracts: contracts.slice(index * 2, index * 2 + 2) }));
  const known: KnownState = new Map([
    ['acme', new Map(contracts.map((contract) => [contract.id, { fields: { Name: `live ${contract.fields.Name}` }, from: 'live' as const }]))],
  ]);
  const plan = createPlan(desired, known, { createdAt: CREATED_AT, source: SOURCE });

  it('plan text: no control, bidi or zero-width character reaches the terminal', () => {
    const text = renderPlanText(plan);
    for (const line of text.split('\n')) expect(line).not.toMatch(ACTIVE);
    expect(text).toContain('esc-\\e[2J\\e[31mred.yaml');
    expect(text).toContain('\\u202egnp.exe');
    expect(text).toContain('\\u009b2J');
  });

  it('plan markdown: file names and values never become markup', () => {
    const markdown = renderPlanMarkdown(plan);
    expect(markupFrom(markdown, ['contract-sync plan'])).toEqual([]);
    // eslint-disable-next-line no-control-regex -- the characters under test
    expect(markdown).not.toMatch(/[\u001B\r\u009B\u202E\u200B]/);
  });

  const runReport: RunReport = {
    version: 1,
    runId: 'run-1',
    startedAt: CREATED_AT,
    finishedAt: CREATED_AT,
    dryRun: true,
    source: SOURCE,
    tenants: [{ tenant: 'acme', contracts: 0, changed: 0, applied: 0, ops: 0, requests: 0, retries: 0, throttles: 0, failures: [] }],
    summary: { tenants: 1, changed: 0, applied: 0, failed: 0, ops: 0, requests: 0, retries: 0 },
  };
  const drift = createDriftReport({ plan, run: runReport, lastApplied: new Map(), fix: false });

  it('drift markdown: live values like [phish](https://...), ![px](...), **b** stay text', () => {
    const markdown = renderDriftMarkdown(drift);
    expect(markdown).toContain('phish');
    expect(markupFrom(markdown, ['contract-sync drift'])).toEqual([]);
  });

  it('drift text: nothing active', () => {
    for (const line of renderDriftText(drift).split('\n')) expect(line).not.toMatch(ACTIVE);
  });
});

describe('validate prints hostile file names inertly', () => {
  it('a file named esc-\\e[2J\\e[31mred.yaml or cr-\\rOVERWRITTEN.yaml', async () => {
    const repo = await createRepo({
      'contract-sync.yaml': configYaml(['acme']),
      ...Object.fromEntries(HOSTILE_FILES.map((file) => [file, 'tenant: acme\ncontracts:\n  "1": { Nmae: x }\n'])),
    });
    try {
      const run = await runCli(['validate'], repo.dir, { ACME_SECRET: 'x' });
      expect(run.code).toBe(1);
      for (const line of (run.stdout + run.stderr).split('\n')) expect(line).not.toMatch(ACTIVE);
      expect(run.stdout + run.stderr).toContain('contracts/acme/esc-\\e[2J\\e[31mred.yaml:3:10');
      expect(run.stdout + run.stderr).toContain('contracts/acme/cr-\\rOVERWRITTEN.yaml:3:10');
    } finally {
      await repo.cleanup();
    }
  });
});

describe('the run summary and GitHub annotations are inert too', () => {
  it('a failure reason from the service with terminal sequences, and a hostile file name', () => {
    const report: RunReport = {
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
            {
              contractId: '1',
              file: HOSTILE_FILES[0]!,
              line: 3,
              outcome: 'failed',
              ops: 1,
              status: 400,
              reason: 'bad \u001B]8;;https://evil.example\u0007link\u202E',
            },
          ],
          error: 'lock lost \u009B2J',
        },
      ],
      summary: { tenants: 1, changed: 1, applied: 0, failed: 1, ops: 1, requests: 1, retries: 0 },
    };
    const summary = renderRunSummary(report);
    for (const line of summary.split('\n')) expect(line).not.toMatch(ACTIVE);
    expect(summary).toContain('\\e]8;;https://evil.example\\u0007link\\u202e');
  });

  it('validate --format github', async () => {
    const repo = await createRepo({ 'contract-sync.yaml': configYaml(['acme']), [HOSTILE_FILES[0]!]: 'tenant: acme\ncontracts:\n  "1": { Nmae: "\\e[2J" }\n' });
    try {
      const run = await runCli(['validate', '--format', 'github'], repo.dir, { ACME_SECRET: 'x' });
      expect(run.code).toBe(1);
      for (const line of run.stdout.split('\n')) expect(line).not.toMatch(ACTIVE);
      expect(run.stdout).toContain('::error file=contracts/acme/esc-\\e[2J\\e[31mred.yaml,line=3');
    } finally {
      await repo.cleanup();
    }
  });
});
