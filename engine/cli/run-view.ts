/**
 * How a command shows a run while it runs: its events rendered (the shard it took, the preview
 * before sending, progress of the live reads and of sending: a line redrawn on a terminal, plain
 * lines in CI; engine/output/progress.ts).
 */
import type { ApplyPreview, RunEffects, RunEvent } from '../run/types.ts';
import { describeShard } from '../desired/shard.ts';
import type { Logger } from '../log/logger.ts';
import { describeSharedEvent, type Sending } from '../run/render-run.ts';
import { askYes, promptStream, shouldAsk } from './confirm.ts';
import { clockOf, type CliIo } from './io.ts';
import { runEffects } from './run-effects.ts';
import { createProgress, fitLinesToWidth, type Progress } from '../output/progress.ts';

export interface RunView {
  readonly onEvent: (event: RunEvent) => void;
  /** The run's log (kept for callers; progress lines are written on stderr directly). */
  readonly onLogger: (logger: Logger) => void;
  /** Ends the progress line; call once when the run is over. */
  finish(): void;
}

export interface RunViewOptions {
  /** Where the shard line goes: stdout, unless that carries a document. */
  readonly shardOn: 'stdout' | 'stderr';
  /** Renders the plan before the first PATCH (apply always; drift --fix only when it asks, in its confirm). */
  readonly showPreview?: (preview: ApplyPreview) => void;
  /** Names the command in plain progress lines (no terminal): `apply` gives `contract-sync apply: sending ...`. */
  readonly command?: string;
}

export function runView(io: CliIo, { shardOn, showPreview, command = 'run' }: RunViewOptions): RunView {
  let progress: Progress | undefined;
  function progressLine(): Progress {
    progress ??= createProgress({ stream: io.stderr, now: clockOf(io).now, prefix: `contract-sync ${command}` });
    return progress;
  }
  return {
    onLogger() {},
    onEvent(event) {
      if (event.type === 'input' && event.shard) io[shardOn].write(`${describeShard(event.shard)}\n`);
      if (event.type === 'shared') io[shardOn].write(`${describeSharedEvent(event.shared)}\n`);
      if (event.type === 'not-started' || event.type === 'telemetry-not-exported') io.stderr.write(`contract-sync ${command}: ${event.message}\n`);
      if (event.type === 'preview') {
        // The plan starts a line of its own, below the reads' line.
        progress?.interrupt();
        showPreview?.(event.preview);
      }
      if (event.type === 'phase' && event.phase === 'read-known' && event.known !== 'store') progressLine().start('read');
      if (event.type === 'phase' && event.phase === 'send') progressLine().start('send');
      if (event.type === 'progress') progressLine().update(event);
    },
    finish() {
      progress?.finish();
    },
  };
}

/**
 * Said again just above the question: the per-tenant summary when the plan is taller than the
 * terminal (its top scrolled away), or when it went to a file or a pipe (then: where it is).
 */
export function beforeQuestion(io: CliIo, shown: { readonly lines: number; readonly summary: string } | undefined): string | undefined {
  if (shown === undefined) return undefined;
  if (io.stdout.isTTY !== true) return `${shown.summary}The whole plan was written to standard output (not this terminal).\n`;
  return io.stdout.rows !== undefined && shown.lines >= io.stdout.rows ? `${shown.summary}The whole plan is above.\n` : undefined;
}

/** How long the question waits for a pipe's reader to print the plan (a terminal's reader prints in well under this). */
const PIPE_SETTLE_MS = 200;

export interface Question {
  /** Shown before the question (drift --fix shows its plan only when it asks). */
  readonly before?: (preview: ApplyPreview) => void;
  /** Said again just above the question: a plan taller than the terminal scrolled its summary away (or went to a file or a pipe). */
  readonly again?: () => string | undefined;
  readonly text: (sending: Sending) => string;
}

/**
 * The effects of a run that may send: its events rendered by `view`, and the question asked only
 * of a person (stdin a terminal), only when something would be sent, not after --auto-approve.
 */
export function sendingEffects(io: CliIo, view: RunView, autoApprove: boolean, question: Question): Promise<RunEffects> {
  return runEffects(io, {
    logs: true,
    onEvent: view.onEvent,
    onLogger: view.onLogger,
    async confirm(preview) {
      if (!shouldAsk(io, { autoApprove, ops: preview.sending.ops })) return true;
      question.before?.(preview);
      for (const { reason } of preview.refused) io.stdout.write(`\n${reason}\n`);
      const again = question.again?.();
      const prompt = promptStream(io);
      // The plan went into a pipe (`apply | tee log`): give its reader a moment to print it, so the
      // question comes below the plan on the terminal, not in the middle of it.
      if (prompt !== io.stdout) await clockOf(io).sleep(PIPE_SETTLE_MS);
      if (again !== undefined) prompt.write(`\n${fitLinesToWidth(again, prompt.columns)}`);
      prompt.write('\n');
      return askYes(io, question.text(preview.sending));
    },
  });
}
