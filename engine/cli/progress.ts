/**
 * Progress of a long run: a bar redrawn in place on a terminal, otherwise a log line every few
 * seconds (CI logs keep every line, so a bar would flood them).
 */
import type { ApplyProgress } from '../apply/run-apply.ts';
import type { Logger } from '../log/logger.ts';

const LOG_EVERY_MS = 5000;
const BAR_WIDTH = 30;

export interface ProgressOutput {
  readonly stream: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly logger: Logger;
  readonly now: () => number;
}

export interface Progress {
  update(progress: ApplyProgress): void;
  /** Ends the bar's line; call once when the run is over. */
  finish(): void;
}

export function createProgress(output: ProgressOutput): Progress {
  const startedAt = output.now();
  let lastLogAt = startedAt;
  let drawn = false;
  let failed = 0;
  return {
    update(progress) {
      if (progress.outcome !== 'applied') failed += 1;
      if (output.stream.isTTY === true) {
        const filled = progress.total === 0 ? BAR_WIDTH : Math.round((progress.done / progress.total) * BAR_WIDTH);
        output.stream.write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${progress.done}/${progress.total} contracts${failed > 0 ? `, ${failed} failed` : ''}`);
        drawn = true;
        return;
      }
      const now = output.now();
      if (now - lastLogAt < LOG_EVERY_MS && progress.done < progress.total) return;
      lastLogAt = now;
      output.logger.info({ done: progress.done, total: progress.total, failed, elapsedMs: now - startedAt }, 'apply progress');
    },
    finish() {
      if (drawn) output.stream.write('\n');
    },
  };
}
