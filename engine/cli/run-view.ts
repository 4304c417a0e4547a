/**
 * How a command shows a run while it runs: its events rendered (the shard it took, the preview
 * before sending, progress of the live reads and of sending: a line redrawn on a terminal, plain
 * lines in CI; engine/cli/progress.ts).
 */
import type { ApplyPreview, RunEvent } from '../run/types.ts';
import { describeShard } from '../desired/shard.ts';
import type { Logger } from '../log/logger.ts';
import { clockOf, type CliIo } from './io.ts';
import { createProgress, type Progress } from './progress.ts';

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
      if (event.type === 'preview') {
        // The plan starts a line of its own, below the reads' line.
        progress?.interrupt();
        showPreview?.(event.preview);
      }
      if (event.type === 'phase' && event.phase === 'read-known') progressLine().start('read');
      if (event.type === 'phase' && event.phase === 'send') progressLine().start('send');
      if (event.type === 'progress') progressLine().update(event);
    },
    finish() {
      progress?.finish();
    },
  };
}
