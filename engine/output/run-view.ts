/**
 * How a command shows a run while it runs: its events rendered (the shard it took, the preview
 * before sending, progress of the live reads and of sending: a line redrawn on a terminal, plain
 * lines in CI; progress.ts).
 */
import { describeShard } from '../desired/shard.ts';
import { describeSharedEvent, type ShownPlan } from '../run/render-run.ts';
import type { ApplyPreview, RunEvent } from '../run/types.ts';
import { createProgress, type Progress, type ProgressOutput } from './progress.ts';

/** A command's streams: the shard line on one of them, progress and the tenants not started on stderr. */
export interface RunViewStreams {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: ProgressOutput['stream'];
}

export interface RunView {
  readonly onEvent: (event: RunEvent) => void;
  /** The plan the preview showed, once it did (apply's question says its summary again when it scrolled away). */
  shown(): ShownPlan | undefined;
  /** Ends the progress line; call once when the run is over. */
  finish(): void;
}

export interface RunViewOptions {
  /** Where the shard line goes: stdout, unless that carries a document. */
  readonly shardOn: 'stdout' | 'stderr';
  /** Shows the plan before the first PATCH (apply always; drift --fix only when it asks, in its question): what it showed. */
  readonly showPreview?: (preview: ApplyPreview) => ShownPlan;
  /** Names the command in plain progress lines (no terminal): `apply` gives `contract-sync apply: sending ...`. */
  readonly command: string;
  /** The command's clock, in milliseconds: rates and time left count by it. */
  readonly now: () => number;
}

export function runView(streams: RunViewStreams, { shardOn, showPreview, command, now }: RunViewOptions): RunView {
  let progress: Progress | undefined;
  let shown: ShownPlan | undefined;
  function progressLine(): Progress {
    progress ??= createProgress({ stream: streams.stderr, now, prefix: `contract-sync ${command}` });
    return progress;
  }
  return {
    onEvent(event) {
      if (event.type === 'input' && event.shard) streams[shardOn].write(`${describeShard(event.shard)}\n`);
      if (event.type === 'shared') streams[shardOn].write(`${describeSharedEvent(event.shared)}\n`);
      if (event.type === 'not-started' || event.type === 'telemetry-not-exported') {
        // A line of its own, never appended to an open progress bar (a run stopped part-way).
        progress?.interrupt();
        streams.stderr.write(`contract-sync ${command}: ${event.message}\n`);
      }
      if (event.type === 'preview') {
        // The plan starts a line of its own, below the reads' line.
        progress?.interrupt();
        shown = showPreview?.(event.preview);
      }
      if (event.type === 'phase' && event.phase === 'read-known' && event.known !== 'store') progressLine().start('read');
      if (event.type === 'phase' && event.phase === 'send') progressLine().start('send');
      if (event.type === 'progress') progressLine().update(event);
    },
    shown: () => shown,
    finish() {
      progress?.finish();
    },
  };
}
