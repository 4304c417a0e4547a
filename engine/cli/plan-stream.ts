/**
 * `plan` against the state store in text or json, one tenant at a time (issue 14): the engine's
 * planByTenant validates, reads and plans each tenant; this file renders each tenant's piece into a
 * spool, and once the run is known to be good writes the spools out: the same bytes as rendering
 * the whole plan, without ever holding it. With any error nothing is written, as before.
 */
import path from 'node:path';
import type { Config } from '../config/types.ts';
import { planByTenant, type PlanHeader } from '../plan/plan-by-tenant.ts';
import { planJsonPieces } from '../plan/render-json.ts';
import { renderPlanTextHead, renderPlanTextTail, renderPlanTextTenant, type TextRenderOptions } from '../plan/render-text.ts';
import type { PlanMadeWith } from '../plan/types.ts';
import { StateFormatError } from '../state/file-format.ts';
import { PostgresStateError } from '../state/postgres/errors.ts';
import type { KnownContracts, StateStore } from '../state/types.ts';
import { loadRunFiles, reportDesired, reportUnread, type RunInputOptions } from './desired-input.ts';
import { EXIT, type CliIo, type ExitCode } from './io.ts';
import { reportShard } from './shard-args.ts';
import { spoolBeside, temporarySpool } from './spool.ts';
import { packageVersion } from './version.ts';
import { openStateStore } from './state-store.ts';

/** What the run reads (as every run: repository, ref, base, selection) and where its plan goes. */
export interface StreamedPlanOptions extends Pick<RunInputOptions, 'repo' | 'config' | 'ref' | 'base' | 'tenants' | 'shard' | 'targets' | 'excludes'> {
  readonly out?: string;
  readonly format: 'text' | 'json';
  readonly text: TextRenderOptions;
  readonly detailedExitcode: boolean;
}

const OUTCOME = 'no plan written';

/** Recorded for the reviewer, so that show PLAN.json renders what plan rendered (the markdown plan's header and notes). */
export function planMadeWith(config: Config): PlanMadeWith {
  return { version: packageVersion(), reads: config.api.read !== undefined, collections: config.collections, maxRemovals: config.safety.maxRemovals };
}

/** The state store, opened at the first tenant that needs it; a problem is kept for the end (errors in the desired state come first). */
function lazyKnownState(open: () => Promise<StateStore | string>): { read(tenant: string): Promise<KnownContracts>; problem(): Promise<string | undefined>; close(): Promise<void> } {
  let store: Promise<StateStore | string> | undefined;
  let problem: string | undefined;
  return {
    async read(tenant) {
      if (problem !== undefined) return new Map();
      store ??= open();
      const opened = await store;
      if (typeof opened === 'string') {
        problem = opened;
        return new Map();
      }
      try {
        return await opened.readTenant(tenant);
      } catch (error) {
        if (!(error instanceof StateFormatError) && !(error instanceof PostgresStateError)) throw error;
        problem = `cannot read the state store: ${error.message}`;
        return new Map();
      }
    },
    /** Opens the store if no tenant did: a store that cannot be opened is an error even for an empty plan. */
    async problem() {
      store ??= open();
      const opened = await store;
      return typeof opened === 'string' ? opened : problem;
    },
    async close() {
      const opened = await store;
      if (opened !== undefined && typeof opened !== 'string') await opened.close();
    },
  };
}

export async function streamedStorePlan(io: CliIo, options: StreamedPlanOptions): Promise<ExitCode> {
  const loaded = await loadRunFiles(io, options);
  if (loaded.kind !== 'ready') return reportUnread(io, 'plan', OUTCOME, loaded);
  const { input } = loaded;
  const outFile = options.out === undefined ? undefined : path.resolve(io.cwd, options.out);
  const json = outFile !== undefined || options.format === 'json' ? { spool: outFile === undefined ? temporarySpool() : spoolBeside(outFile), pieces: planJsonPieces() } : undefined;
  const text = options.format === 'text' ? temporarySpool() : undefined;
  const known = lazyKnownState(() => openStateStore(input.config, input.repoDir, io));
  try {
    const result = await planByTenant(
      { files: input.files, config: input.config, ...(input.tenants ? { tenants: input.tenants } : {}), targets: input.targets, ...(input.base ? { base: input.base } : {}), createdAt: (io.now ?? (() => new Date()))().toISOString(), source: input.source },
      {
        readKnown: (tenant) => known.read(tenant),
        sink: {
          start(header: PlanHeader) {
            json?.spool.reset();
            text?.reset();
            json?.spool.write(json.pieces.header(header));
          },
          tenant(tenant) {
            json?.spool.write(json.pieces.tenant(tenant));
            text?.write(renderPlanTextTenant(tenant, options.text));
          },
        },
      },
    );
    const { targeting } = result;
    const stop = reportDesired(io, 'plan', OUTCOME, {
      configDiagnostics: input.configDiagnostics,
      errors: result.errors,
      warnings: result.warnings,
      ...(input.baseError ? { baseError: input.baseError } : {}),
      ...(targeting ? { targeting } : {}),
    });
    if (stop !== undefined) return stop;
    // An empty shard still plans (and writes --out): nothing, so that the steps after it find a plan.
    reportShard(io, input.shard, options.format === 'text' ? 'stdout' : 'stderr');
    const problem = await known.problem();
    if (problem !== undefined) {
      io.stderr.write(`contract-sync plan: ${problem}\n`);
      return EXIT.error;
    }

    const { trailer } = result;
    if (json) json.spool.write(json.pieces.trailer({ ...trailer, madeWith: planMadeWith(input.config) }));
    // Said before the plan, like Terraform's targeting warning; json stays one document on stdout.
    if (targeting !== undefined) {
      if (options.format === 'json') io.stderr.write(`contract-sync plan: ${targeting.description}\n`);
      else io.stdout.write(`${targeting.description} Contracts not targeted were not planned.\n\n`);
    }
    function write(chunk: string): void {
      io.stdout.write(chunk);
    }
    if (options.format === 'json') json!.spool.copyTo(write);
    if (json && outFile !== undefined) json.spool.commitTo(outFile);
    if (text) {
      io.stdout.write(renderPlanTextHead({ source: input.source, ...trailer }, options.text));
      text.copyTo(write);
      io.stdout.write(renderPlanTextTail(trailer.noLongerManaged ?? [], result.unknown, options.text));
    }
    return options.detailedExitcode && trailer.summary.changed > 0 ? EXIT.changes : EXIT.ok;
  } finally {
    json?.spool.discard();
    text?.discard();
    await known.close();
  }
}
