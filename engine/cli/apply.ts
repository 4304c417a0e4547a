/** `contract-sync apply`: plan, then send the ops, record each applied contract, report. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { renderRunSummary } from '../apply/run-report.ts';
import { runApply } from '../apply/run-apply.ts';
import type { Scope } from '../auth/index.ts';
import { systemClock } from '../clock.ts';
import { renderPlanText } from '../plan/render-text.ts';
import { loadRunInputOrReport } from './desired-input.ts';
import { createEngineSetup } from './engine-setup.ts';
import { EXIT, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { createProgress } from './progress.ts';
import { openStateStore } from './state-store.ts';

export const APPLY_HELP = `Usage: contract-sync apply [--config FILE] [--repo DIR] [--ref REF] [--tenant T]... [--refresh | --no-refresh]
                           [--dry-run] [--lock-timeout SECONDS] [--report FILE]

Plans the desired state (the working tree, or git objects at --ref) against the known state, then sends each changed
contract's ops as one PATCH through a rate-controlled queue per tenant, and records every
contract in the state store as soon as its PATCH succeeds.

Options:
  --config FILE          engine config (default: DIR/contract-sync.yaml)
  --repo DIR             repository holding the desired-state files (default: .)
  --ref REF              read the desired state (and, without --config, the config) at this git ref
  --tenant T             apply only tenant T (repeatable; default: every tenant)
  --refresh              take the known state from live reads (default when api.read is configured)
  --no-refresh           take the known state from the state store
  --dry-run              plan (and read, with --refresh) but send no change and write nothing
  --lock-timeout S       wait up to S seconds for another run's lock on a tenant (default: 60)
  --report FILE          write the JSON run report to FILE

Credentials: each tenant's client secret, from the env variable or file the config names.
Scopes asked for: core:write, plus core:read with --refresh.
Logs: JSON lines on stderr (CONTRACT_SYNC_LOG_LEVEL=debug|info|warn|error|silent).

Exit codes: 0 everything applied (or nothing to do), 1 any error or any contract not applied.
`;

const DEFAULT_LOCK_TIMEOUT_SECONDS = 60;

function parseLockTimeout(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LOCK_TIMEOUT_SECONDS * 1000;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`--lock-timeout must be a number of seconds; got "${value}"`);
  return Number(value) * 1000;
}

export async function applyCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string' },
      repo: { type: 'string', default: '.' },
      ref: { type: 'string' },
      tenant: { type: 'string', multiple: true },
      refresh: { type: 'boolean' },
      'no-refresh': { type: 'boolean' },
      'dry-run': { type: 'boolean', default: false },
      'lock-timeout': { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(APPLY_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (values.refresh && values['no-refresh']) throw new UsageError('--refresh and --no-refresh exclude each other');
  const lockTimeoutMs = parseLockTimeout(values['lock-timeout']);

  const input = await loadRunInputOrReport(io, 'apply', { repo: values.repo, config: values.config, ref: values.ref, tenants: values.tenant }, 'nothing applied');
  if (typeof input === 'number') return input;
  const { repoDir, config, contractSets, source } = input;
  const canRead = config.api.read !== undefined;
  if (values.refresh && !canRead) {
    io.stderr.write('contract-sync apply: --refresh needs reads; configure api.read (e.g. read: { path: "/contract/{id}" })\n');
    return EXIT.error;
  }
  const refresh = values['no-refresh'] ? false : canRead;

  const store = openStateStore(config, repoDir);
  if (typeof store === 'string') {
    io.stderr.write(`contract-sync apply: ${store}\n`);
    return EXIT.error;
  }
  const scopes: Scope[] = refresh ? ['core:read', 'core:write'] : ['core:write'];
  const engine = createEngineSetup(io, config, scopes);
  const clock = io.now ? { ...systemClock, now: () => io.now!().getTime() } : systemClock;
  const progress = createProgress({ stream: io.stderr, logger: engine.logger, now: clock.now });

  const { plan, report } = await runApply(
    { config, contractSets, source, refresh, dryRun: values['dry-run'], lockTimeoutMs, runId: engine.runId },
    { store, tokens: engine.tokens, api: engine.api, clock, random: Math.random, logger: engine.logger, onProgress: (event) => progress.update(event) },
  );
  progress.finish();

  io.stdout.write(renderPlanText(plan, { color: wantsColor(io) }));
  io.stdout.write(`\n${renderRunSummary(report)}`);
  if (values.report !== undefined) await writeFile(path.resolve(io.cwd, values.report), `${JSON.stringify(report, null, 2)}\n`);
  const failed = report.summary.failed > 0 || report.tenants.some((tenant) => tenant.error !== undefined);
  return failed ? EXIT.error : EXIT.ok;
}
