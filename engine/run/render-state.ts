/**
 * What the state command's subcommands found or did, as text: for stdout, and what went wrong
 * (engine/cli/state.ts writes it, and fails when something did). Pure.
 */
import { formatDiagnostics } from '../diagnostic/diagnostic-format.ts';
import { plural } from '../text/plural.ts';
import { describeLockHolder, renderHistoryText, renderRecordText, renderSummaryText } from '../state/inspect.ts';
import type { StateOutcome } from './state.ts';

export interface StateReport {
  /** For stdout ('' for nothing). */
  readonly text: string;
  /** What went wrong, in one line the command names itself in: the command fails. */
  readonly problem?: string;
  /** An invalid config's diagnostics, as written on stderr: the command fails. */
  readonly diagnostics?: string;
}

/** What a subcommand found or did, said. `json`: --format json (list, show, history). */
export function renderStateOutcome(outcome: StateOutcome, json: boolean): StateReport {
  // `text`: said on stdout before the problem.
  function fail(problem: string, text = ''): StateReport {
    return { text, problem };
  }
  function say(text: string): StateReport {
    return { text };
  }
  switch (outcome.kind) {
    case 'invalid-config':
      return { text: '', diagnostics: formatDiagnostics(outcome.diagnostics, 'text') };
    case 'failed':
      return fail(outcome.message);
    case 'list':
      return say(json ? `${JSON.stringify({ tenants: outcome.tenants }, null, 2)}\n` : renderSummaryText(outcome.tenants));
    case 'history':
      return say(json ? `${JSON.stringify({ runs: outcome.runs }, null, 2)}\n` : renderHistoryText(outcome.runs));
    case 'show': {
      const { tenant, id, record } = outcome;
      if (record === undefined) return fail(`no record of contract ${id} for tenant ${tenant}`);
      return say(json ? `${JSON.stringify({ tenant, ...record }, null, 2)}\n` : renderRecordText(tenant, record));
    }
    case 'unlock': {
      const { tenant, forced, holder } = outcome;
      if (holder === undefined) return say(`tenant ${tenant} ${forced ? 'was' : 'is'} not locked; nothing to do\n`);
      if (forced) return say(`unlocked tenant ${tenant}: the lock was held by ${describeLockHolder(holder)}\n`);
      return fail(
        `not unlocked. If that run is gone (crashed, runner lost), run again with --force; removing the lock of a live run lets a second run apply to ${tenant} beside it`,
        `tenant ${tenant} is locked by ${describeLockHolder(holder)}\n`,
      );
    }
    case 'rm': {
      const { tenant, id, record, removed } = outcome;
      if (record === undefined) return fail(`no record of contract ${id} for tenant ${tenant}; nothing removed`);
      if (removed) return say(`removed the record of contract ${id} for tenant ${tenant}\n`);
      return fail(
        `not removed; run again with --force to forget this record (the next plan reads contract ${id} as never applied)`,
        renderRecordText(tenant, record),
      );
    }
    case 'push':
    case 'pull': {
      if (outcome.copy.kind === 'held')
        return fail(
          `the ${outcome.kind === 'push' ? 'target' : 'configured'} store already holds state; nothing copied. Run again with --force to copy over it (records of the same contracts are replaced, others kept)`,
        );
      const { copied, mismatches } = outcome.copy;
      const memory = copied.driftKeys === 0 ? '' : `, the drift memory of ${plural(copied.driftKeys, 'contract')}`;
      const copiedLine = `copied ${plural(copied.tenants, 'tenant')}: ${plural(copied.records, 'record')}, ${plural(copied.runs, 'run record')}, ${plural(copied.history, 'history entry', 'history entries')}${memory}\n`;
      if (mismatches.length > 0)
        return fail(
          `the copy differs from the source when read back:\n${mismatches
            .map((line) => `  ${line}\n`)
            .join('')
            .trimEnd()}`,
          copiedLine,
        );
      return say(`${copiedLine}verified: the copy read back holds the same records (fingerprints), run records, history and drift memory\n`);
    }
  }
}
