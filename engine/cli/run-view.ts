/**
 * How a command shows a run while it runs: its events rendered (the shard it took, the preview
 * before sending, progress on a terminal or as periodic log lines in CI).
 */
import type { ApplyPreview, RunEvent, SharedRunEvent } from '../run/types.ts';
import { describeShard } from '../desired/shard.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { clockOf, type CliIo } from './io.ts';
import { createProgress, type Progress } from './progress.ts';

export interface RunView {
  readonly onEvent: (event: RunEvent) => void;
  /** The run's log, for progress lines without a terminal. */
  readonly onLogger: (logger: Logger) => void;
  /** Ends the progress line; call once when the run is over. */
  finish(): void;
}

export interface RunViewOptions {
  /** Where the shard line goes: stdout, unless that carries a document. */
  readonly shardOn: 'stdout' | 'stderr';
  /** Renders the plan before the first PATCH (apply always; drift --fix only when it asks, in its confirm). */
  readonly showPreview?: (preview: ApplyPreview) => void;
}

export function runView(io: CliIo, { shardOn, showPreview }: RunViewOptions): RunView {
  let progress: Progress | undefined;
  let logger: Logger | undefined;
  return {
    onLogger(created) {
      logger = created;
    },
    onEvent(event) {
      if (event.type === 'input' && event.shard) io[shardOn].write(`${describeShard(event.shard)}\n`);
      if (event.type === 'shared') io[shardOn].write(`${describeSharedEvent(event.shared)}\n`);
      if (event.type === 'preview') showPreview?.(event.preview);
      if (event.type === 'progress') {
        progress ??= createProgress({ stream: io.stderr, logger: logger ?? silentLogger(), now: clockOf(io).now });
        progress.update(event);
      }
    },
    finish() {
      progress?.finish();
    },
  };
}

/** E.g. "shared run 5f0c…: worker ci-2 joined (40 tenants, 3 done)". */
export function describeSharedEvent(event: SharedRunEvent): string {
  if (event.kind === 'joined') return `shared run ${event.runId}: worker ${event.worker} joined (${event.tenants} tenant${event.tenants === 1 ? '' : 's'}, ${event.done} done)`;
  const over = event.takenOverFrom.length === 0 ? '' : `; taken over from worker ${event.takenOverFrom.join(', then ')}, which did not finish it`;
  return `worker ${event.worker} took tenant ${event.tenant} (${event.size} contract${event.size === 1 ? '' : 's'} to plan${over})`;
}
