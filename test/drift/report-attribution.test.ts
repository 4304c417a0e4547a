/** The drift report with api.audit: each drifted field says who changed it (text, markdown, JSON); without it, not a byte changes. */
import { describe, expect, it } from 'vitest';
import { renderDriftJson, renderDriftMarkdown, renderDriftText, withAttributions, type DriftReport, type FieldAttribution } from '../../engine/drift/index.ts';

const REPORT: DriftReport = {
  version: 1,
  createdAt: '2027-03-01T09:20:00.000Z',
  runId: 'run-1',
  source: { repo: '.', ref: null, commit: 'c0ffee0000000000000000000000000000000000' },
  fix: false,
  tenants: [
    {
      tenant: 'acme',
      managed: 2,
      errors: [],
      contracts: [
        {
          id: '4711',
          file: 'contracts/acme/facilities.yaml',
          line: 4,
          drift: [
            { field: 'Name', live: 'Cleaning (edited by hand)', desired: 'Facility cleaning', lastApplied: 'Facility cleaning', cause: 'changed-outside-git' },
            { field: 'Comment', live: 'x', desired: 'y', lastApplied: 'y', cause: 'changed-outside-git' },
          ],
          ops: [
            { op: 'Replace', path: '/Contract/Comment', value: 'y' },
            { op: 'Replace', path: '/Contract/Name', value: 'Facility cleaning' },
          ],
        },
      ],
    },
  ],
  summary: { tenants: 1, contracts: 2, drifted: 1, changes: 2, changedOutsideGit: 2, notYetApplied: 0, neverApplied: 0, errors: 0 },
};

const ATTRIBUTIONS: Record<string, Record<string, FieldAttribution[]>> = {
  acme: {
    '4711': [
      { field: 'Name', attributed: true, actor: 'jane@example.com', time: '2027-03-01T09:15:00.000Z', eventId: 'evt-000002' },
      { field: 'Comment', attributed: false, reason: 'no-event' },
    ],
  },
};

describe('a drift report with attributions', () => {
  const attributed = withAttributions(REPORT, ATTRIBUTIONS);

  it('names who changed each field in the text report, or says unattributed', () => {
    const text = renderDriftText(attributed);

    expect(text).toContain(
      '      Name: "Cleaning (edited by hand)" -> "Facility cleaning"  (changed outside git)  changed by jane@example.com at 2027-03-01T09:15:00.000Z (event evt-000002)\n',
    );
    expect(text).toContain('      Comment: "x" -> "y"  (changed outside git)  unattributed (no audit event changed it)\n');
  });

  it('puts it beside the cause in the markdown table, escaped', () => {
    const markdown = renderDriftMarkdown(
      withAttributions(REPORT, { acme: { '4711': [{ field: 'Name', attributed: true, actor: '@ops-team [x](y)', time: '2027-03-01T09:15:00.000Z' }] } }),
    );

    expect(markdown).toMatch(/\| Name \| .* \| changed outside git · changed by @&#8203;ops-team \\\[x\\\]\(y\) at 2027-03-01T09:15:00\.000Z \|\n/);
  });

  it('carries it in the JSON report', () => {
    const json = JSON.parse(renderDriftJson(attributed)) as DriftReport;

    expect(json.tenants[0]!.contracts[0]!.drift.map((item) => item.attribution)).toEqual(ATTRIBUTIONS.acme!['4711']);
  });

  it('changes nothing without attributions', () => {
    const bare = withAttributions(REPORT, {});

    expect(renderDriftText(bare)).toBe(renderDriftText(REPORT));
    expect(renderDriftMarkdown(bare)).toBe(renderDriftMarkdown(REPORT));
    expect(renderDriftJson(bare)).toBe(renderDriftJson(REPORT));
    expect(renderDriftText(REPORT)).not.toMatch(/changed by|unattributed/);
  });
});
