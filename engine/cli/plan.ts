/** `contract-sync plan`: desired state (working tree) against the state store -> a plan. No network. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/types.ts';
import { loadDesiredState } from '../desired/load.ts';
import { createPlan } from '../plan/create-plan.ts';
import { renderPlanJson } from '../plan/render-json.ts';
import { renderPlanMarkdown } from '../plan/render-markdown.ts';
import { renderPlanText } from '../plan/render-text.ts';
import type { PlanDocument } from '../plan/types.ts';
import { StateFormatError } from '../state/file-format.ts';
import { fileStateStore } from '../state/file-store.ts';
import { readKnownState } from '../state/memory-store.ts';
import type { StateStore } from '../state/types.ts';
import { readRepoConfig } from './config-args.ts';
import { formatDiagnostics } from './diagnostics-output.ts';
import { EXIT, parseFormat, UsageError, type CliIo, type ExitCode } from './io.ts';

export const PLAN_HELP = `Usage: contract-sync plan [--config FILE] [--repo DIR] [--tenant T]... [--out PLAN.json]
                          [--format text|markdown|json] [--detailed-exitcode]

Compares the desired state in the working tree with the last known state in the state store and
prints the ops each contract needs. Sends no request and needs no credentials.
A contract with no known state (never applied) plans as "known state unknown": every desired
field is set and every desired member added; nothing is removed.

Options:
  --config FILE         engine config (default: DIR/contract-sync.yaml)
  --repo DIR            repository holding the desired-state files (default: .)
  --tenant T            plan only tenant T (repeatable; default: every tenant)
  --out PLAN.json       also write the plan document (JSON) to this file, for apply
  --format F            text (default), markdown (a pull-request comment), or json
  --detailed-exitcode   exit 2 when there are changes, 0 when there are none

Exit codes: 0 success, 1 error (an invalid config or desired state: nothing is written),
2 changes present (with --detailed-exitcode).
`;

type PlanFormat = 'text' | 'markdown' | 'json';
const PLAN_FORMATS: readonly PlanFormat[] = ['text', 'markdown', 'json'];

/** NO_COLOR (https://no-color.org): any non-empty value turns colour off. */
function wantsColor(io: CliIo): boolean {
  return io.stdout.isTTY === true && !io.env.NO_COLOR;
}

function openStateStore(config: Config, repoDir: string): StateStore | string {
  if (config.state.backend === 'postgres') return 'the postgres state backend is not available yet; use state: { backend: file }';
  return fileStateStore(path.resolve(repoDir, config.state.path));
}

function render(plan: PlanDocument, format: PlanFormat, io: CliIo): string {
  switch (format) {
    case 'json':
      return renderPlanJson(plan);
    case 'markdown':
      return renderPlanMarkdown(plan);
    case 'text':
      return renderPlanText(plan, { color: wantsColor(io) });
  }
}

export async function planCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
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

  const { repoDir, config, diagnostics: configDiagnostics } = await readRepoConfig(io, values);
  if (!config) {
    io.stderr.write(formatDiagnostics(configDiagnostics, 'text'));
    io.stderr.write('invalid config: no plan written\n');
    return EXIT.error;
  }
  const selected = values.tenant ?? [];
  for (const tenant of selected) {
    if (!Object.hasOwn(config.tenants, tenant)) {
      throw new UsageError(`--tenant "${tenant}" is not configured (known: ${Object.keys(config.tenants).join(', ') || 'none'})`);
    }
  }

  // Validation output goes to stderr: stdout may be piped into a pull-request comment or a file.
  const desired = await loadDesiredState(repoDir, config);
  if (desired.errors.length > 0) {
    io.stderr.write(formatDiagnostics([...configDiagnostics, ...desired.errors, ...desired.warnings], 'text'));
    io.stderr.write(`${desired.errors.length} error(s) in the desired state: no plan written\n`);
    return EXIT.error;
  }
  if (configDiagnostics.length + desired.warnings.length > 0) io.stderr.write(formatDiagnostics([...configDiagnostics, ...desired.warnings], 'text'));

  const sets = selected.length === 0 ? desired.contractSets : desired.contractSets.filter((set) => selected.includes(set.tenant));
  const store = openStateStore(config, repoDir);
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync plan: ${store}\n`);
    return EXIT.error;
  }
  let known;
  try {
    known = await readKnownState(store, [...new Set(sets.map((set) => set.tenant))].sort());
  } catch (error) {
    if (!(error instanceof StateFormatError)) throw error;
    io.stderr.write(`contract-sync plan: cannot read the state store: ${error.message}\n`);
    return EXIT.error;
  }
  const plan = createPlan(sets, known, {
    createdAt: (io.now ?? (() => new Date()))().toISOString(),
    source: { repo: values.repo, ref: null, commit: null },
    collections: config.collections,
  });

  if (values.out !== undefined) await writeFile(path.resolve(io.cwd, values.out), renderPlanJson(plan));
  io.stdout.write(render(plan, format, io));
  return values['detailed-exitcode'] && plan.summary.changed > 0 ? EXIT.changes : EXIT.ok;
}
