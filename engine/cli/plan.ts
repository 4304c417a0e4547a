/** `contract-sync plan`: desired state (working tree or a git ref) against the state store -> a plan. No network. */
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createPlan } from '../plan/create-plan.ts';
import { renderPlanJson } from '../plan/render-json.ts';
import { renderPlanMarkdown } from '../plan/render-markdown.ts';
import { renderPlanText } from '../plan/render-text.ts';
import type { PlanDocument } from '../plan/types.ts';
import { StateFormatError } from '../state/file-format.ts';
import { readKnownState } from '../state/memory-store.ts';
import { loadRunInputOrReport } from './desired-input.ts';
import { openStateStore } from './state-store.ts';
import { EXIT, parseFormat, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { renderPlanAnnotations } from './plan-github.ts';

export const PLAN_HELP = `Usage: contract-sync plan [--config FILE] [--repo DIR] [--ref REF] [--base REF] [--tenant T]...
                          [--out PLAN.json] [--format text|markdown|json|github] [--detailed-exitcode]

Compares the desired state with the last known state in the state store and prints the ops each
contract needs. Sends no request and needs no credentials.
A contract with no known state (never applied) plans as "known state unknown": every desired
field is set and every desired member added; nothing is removed.

Where the desired state comes from:
  without --ref   the files of DIR as they are: uncommitted and untracked edits included
  --ref REF       git objects at REF (branch, tag or commit), without checking it out; the config
                  is DIR/contract-sync.yaml at REF too, unless --config names a file, which is
                  always read from the working tree

Pull requests (--base REF):
  Marks the contracts the change since REF touches: the ones it adds or whose fields it edits
  (not every contract of a changed file; a contract moved unchanged to another file is not
  marked). The change is counted like a pull request's, from the merge base of REF and the head
  (git diff REF...HEAD); without --ref the head is the working tree, uncommitted and untracked
  files included (like git diff REF). Contracts the change removes are listed as no longer
  managed: contract-sync never deletes, so they are left unchanged on the service.
  A shallow CI clone must hold REF and the merge base: check out with actions/checkout's
  fetch-depth: 0, or fetch both (git fetch --no-tags --deepen=50 origin
  +refs/heads/main:refs/remotes/origin/main; fetching main with --depth alone leaves the head's
  history cut, so the merge base stays missing). When either is missing, plan says what to run.
  Example: contract-sync plan --ref HEAD --base origin/main --format markdown

Options:
  --config FILE         engine config (default: DIR/contract-sync.yaml)
  --repo DIR            repository holding the desired-state files (default: .)
  --ref REF             read the desired state at this git ref (see above)
  --base REF            mark what the change since REF touches (see above)
  --tenant T            plan only tenant T (repeatable; default: every tenant)
  --out PLAN.json       also write the plan document (JSON) to this file, for apply
  --format F            text (default); markdown, a pull-request comment (summary first, then the
                        contracts the pull request changes, then the others); json, the plan
                        document; github: one workflow annotation per contract to look at
                        (::notice file=F,line=L:: per contract with ops, or with --base per touched
                        contract, and ::warning:: per contract no longer managed; GitHub shows the
                        first 10 of each kind per step) followed by the text plan, and when
                        GITHUB_STEP_SUMMARY is set the markdown plan is appended to that file
  --detailed-exitcode   exit 2 when there are changes, 0 when there are none

Exit codes: 0 success, 1 error (an invalid config or desired state, or a ref or base this clone
does not have: nothing is written), 2 changes present (with --detailed-exitcode).
`;

type PlanFormat = 'text' | 'markdown' | 'json' | 'github';
const PLAN_FORMATS: readonly PlanFormat[] = ['text', 'markdown', 'json', 'github'];

function render(plan: PlanDocument, format: PlanFormat, io: CliIo): string {
  switch (format) {
    case 'json':
      return renderPlanJson(plan);
    case 'markdown':
      return renderPlanMarkdown(plan);
    case 'github':
      // Annotations and a job log are read without a terminal: never coloured.
      return `${renderPlanAnnotations(plan)}${renderPlanText(plan)}`;
    case 'text':
      return renderPlanText(plan, { color: wantsColor(io) });
  }
}

/** The job summary: GitHub gives each step a file to append markdown to (other steps' content may be in it). */
async function writeStepSummary(plan: PlanDocument, io: CliIo): Promise<string | undefined> {
  const file = io.env.GITHUB_STEP_SUMMARY;
  if (!file) return undefined;
  try {
    await appendFile(path.resolve(io.cwd, file), `${renderPlanMarkdown(plan)}\n`);
    return undefined;
  } catch (error) {
    return `cannot append to GITHUB_STEP_SUMMARY (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

export async function planCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      ref: { type: 'string' },
      base: { type: 'string' },
      tenant: { type: 'string', multiple: true },
      out: { type: 'string' },
      format: { type: 'string' },
      'detailed-exitcode': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(PLAN_HELP);
    return EXIT.ok;
  }
  const format = parseFormat<PlanFormat>(values.format, PLAN_FORMATS, 'text');

  const input = await loadRunInputOrReport(io, 'plan', { repo: values.repo, config: values.config, ref: values.ref, base: values.base, tenants: values.tenant }, 'no plan written');
  if (typeof input === 'number') return input;
  const { repoDir, config, contractSets, source, touched } = input;

  const store = openStateStore(config, repoDir);
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync plan: ${store}\n`);
    return EXIT.error;
  }
  let known;
  try {
    known = await readKnownState(store, [...new Set(contractSets.map((set) => set.tenant))].sort());
  } catch (error) {
    if (!(error instanceof StateFormatError)) throw error;
    io.stderr.write(`contract-sync plan: cannot read the state store: ${error.message}\n`);
    return EXIT.error;
  }
  const plan = createPlan(contractSets, known, {
    createdAt: (io.now ?? (() => new Date()))().toISOString(),
    source,
    collections: config.collections,
    ...(touched ? { touched } : {}),
  });

  if (values.out !== undefined) await writeFile(path.resolve(io.cwd, values.out), renderPlanJson(plan));
  io.stdout.write(render(plan, format, io));
  if (format === 'github') {
    const problem = await writeStepSummary(plan, io);
    if (problem !== undefined) {
      io.stderr.write(`contract-sync plan: ${problem}\n`);
      return EXIT.error;
    }
  }
  return values['detailed-exitcode'] && plan.summary.changed > 0 ? EXIT.changes : EXIT.ok;
}
