/**
 * Progress of a run's long steps (live reads, sending): on a terminal one line redrawn in place
 * with done/total, rate, time left and failures so far; otherwise (CI, whose log keeps every line)
 * a plain line at most every 10 s and at each quarter, so that the log shows the run is alive.
 * The clock is injected: tests drive it.
 */
import type { ApplyProgress } from '../pipeline/index.ts';

/** Without a terminal: at most one line per this long, besides the quarters. */
export const LOG_EVERY_MS = 10_000;
/** On a terminal: the line is redrawn at most this often (and always at the end of a step). */
const DRAW_EVERY_MS = 100;
const BAR_WIDTH = 24;

export interface ProgressOutput {
  /** `columns`: the terminal's width now (a tty stream's, read at each redraw: the window may be resized). */
  readonly stream: { write(text: string): unknown; readonly isTTY?: boolean; readonly columns?: number };
  readonly now: () => number;
  /** Starts plain lines: `contract-sync apply`. */
  readonly prefix: string;
}

export interface Progress {
  /** A step begins now (its rate and time left count from here), before its first contract is done. */
  start(step: ApplyProgress['step']): void;
  update(progress: ApplyProgress): void;
  /** Ends the line drawn on a terminal, so that what is written next starts a line of its own. */
  interrupt(): void;
  /** Ends the progress line; call once when the run is over. */
  finish(): void;
}

const STEP_TEXT: Readonly<Record<ApplyProgress['step'], string>> = { read: 'reading', send: 'sending' };

interface StepState {
  readonly step: ApplyProgress['step'];
  readonly startedAt: number;
  done: number;
  total: number;
  failed: number;
  /** Without a terminal: when the last line was written, and the last quarter written (0-4). */
  loggedAt: number;
  quarter: number;
  drawnAt: number;
}

/** `42s`, `3m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** `12.5/s`, `0.4/s`, `230/s`. */
function formatRate(perSecond: number): string {
  return `${perSecond >= 100 ? Math.round(perSecond) : perSecond.toFixed(1)}/s`;
}

/** What a step's line says after its counts: rate, time left (or taken, once done) and failures. */
function describe(state: StepState, now: number): { rate: string; time: string; failed: string } {
  const elapsed = now - state.startedAt;
  const rate = elapsed > 0 && state.done > 0 ? (state.done * 1000) / elapsed : undefined;
  const left = state.total - state.done;
  const time =
    left === 0 ? `done in ${formatDuration(elapsed)}` : rate === undefined ? 'time left unknown' : `about ${formatDuration((left / rate) * 1000)} left`;
  return { rate: rate === undefined ? '-/s' : formatRate(rate), time, failed: `${state.failed} failed` };
}

/** The terminal's line: `sending [######------------------] 512/2000  25.6/s  about 58s left  0 failed`. */
export function progressLine(state: Pick<StepState, 'step' | 'startedAt' | 'done' | 'total' | 'failed'>, now: number): string {
  const full = { ...state, loggedAt: 0, quarter: 0, drawnAt: 0 };
  const filled = state.total === 0 ? BAR_WIDTH : Math.floor((state.done / state.total) * BAR_WIDTH);
  const { rate, time, failed } = describe(full, now);
  return `${STEP_TEXT[state.step]} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${state.done}/${state.total}  ${rate}  ${time}  ${failed}`;
}

/** The CI line: `contract-sync apply: sending 500/2000 contracts (25%), 19.8/s, about 1m16s left, 0 failed`. */
export function progressLogLine(prefix: string, state: Pick<StepState, 'step' | 'startedAt' | 'done' | 'total' | 'failed'>, now: number): string {
  const full = { ...state, loggedAt: 0, quarter: 0, drawnAt: 0 };
  const percent = state.total === 0 ? 100 : Math.floor((state.done / state.total) * 100);
  const { rate, time, failed } = describe(full, now);
  return `${prefix}: ${STEP_TEXT[state.step]} ${state.done}/${state.total} contracts (${percent}%), ${rate}, ${time}, ${failed}\n`;
}

/**
 * The line cut to the terminal's width, one column left free: a line as wide as the terminal (or
 * wider) wraps, and `\r` then returns to its last row, so every redraw would leave a line behind.
 */
export function fitToWidth(line: string, columns: number | undefined): string {
  if (columns === undefined || columns <= 0) return line;
  const room = columns - 1;
  // The line is ASCII (step, bar, numbers): one column per character.
  return line.length <= room ? line : `${line.slice(0, Math.max(0, room - 1))}…`;
}

/**
 * Each line of `text` that is wider than the terminal broken into lines that fit it (one column
 * left free, as fitToWidth): after the end of one of its parts (`, ` `; ` `: ` `. ` `? `) where
 * one fits, else between words, so that the terminal never wraps it (a wrapped line reads as two)
 * and nothing of it is lost. The lines it is broken into hang two columns under an indented line
 * (a tenant's line of a summary). Only a word wider than the terminal is cut, ending in `…`.
 * Trailing spaces stay (a question's, where the answer is typed) and do not count. A terminal
 * narrower than MIN_WRAP_COLUMNS gets the text as it is: broken that small, a question would be
 * a column of cut words.
 */
export function wrapToWidth(text: string, columns: number | undefined): string {
  if (columns === undefined || columns < MIN_WRAP_COLUMNS) return text;
  return text
    .split('\n')
    .map((line) => wrapLine(line, columns))
    .join('\n');
}

/** Below this width wrapToWidth leaves text as it is. */
export const MIN_WRAP_COLUMNS = 20;

function wrapLine(whole: string, columns: number): string {
  const room = columns - 1;
  // The trailing spaces are written after whatever line ends up last, and take no room.
  const trailing = / *$/.exec(whole)![0];
  const line = whole.slice(0, whole.length - trailing.length);
  if (line.length <= room) return whole;
  const indent = /^ */.exec(line)![0];
  const hanging = indent === '' ? '' : `${indent}  `;
  const lines: string[] = [];
  let current = indent;
  let start = indent;
  /** Adds `words` (with their separator) to the line being filled, or starts the next line with them: false when they fit on neither. */
  function add(words: string): boolean {
    const joined = current === start ? `${current}${words}` : `${current} ${words}`;
    if (joined.length <= room) {
      current = joined;
      return true;
    }
    if (current !== start) {
      lines.push(current);
      current = start = hanging;
      return add(words);
    }
    return false;
  }
  // Split where a space follows a part's end or a word, never at the trailing spaces.
  for (const part of line.slice(indent.length).split(/(?<=[,;:.?]) +(?=\S)/)) {
    if (add(part)) continue;
    // A part wider than the terminal: broken between its words, a word wider than that cut.
    for (const word of part.split(/ +(?=\S)/)) if (!add(word)) current = fitToWidth(`${current}${word}`, columns);
  }
  return `${[...lines, current].join('\n')}${trailing}`;
}

export function createProgress(output: ProgressOutput): Progress {
  const terminal = output.stream.isTTY === true;
  let state: StepState | undefined;
  /** A line is drawn on the terminal and not ended yet. */
  let open = false;

  function endLine(): void {
    if (open) output.stream.write('\n');
    open = false;
  }

  function begin(step: ApplyProgress['step'], at: number): StepState {
    if (state !== undefined) endLine();
    state = { step, startedAt: at, done: 0, total: 0, failed: 0, loggedAt: at, quarter: 0, drawnAt: -Infinity };
    return state;
  }

  return {
    start(step) {
      begin(step, output.now());
    },
    update(progress) {
      const now = output.now();
      const current = state?.step === progress.step ? state : begin(progress.step, now);
      current.done = progress.done;
      current.total = progress.total;
      if (progress.outcome !== 'applied' && progress.outcome !== 'read') current.failed += 1;
      const last = progress.done >= progress.total;
      if (terminal) {
        if (!last && now - current.drawnAt < DRAW_EVERY_MS) return;
        current.drawnAt = now;
        output.stream.write(`\r\u001b[K${fitToWidth(progressLine(current, now), output.stream.columns)}`);
        open = true;
        if (last) endLine();
        return;
      }
      const quarter = progress.total === 0 ? 4 : Math.floor((progress.done / progress.total) * 4);
      if (quarter <= current.quarter && now - current.loggedAt < LOG_EVERY_MS) return;
      current.quarter = Math.max(current.quarter, quarter);
      current.loggedAt = now;
      output.stream.write(progressLogLine(output.prefix, current, now));
    },
    interrupt() {
      endLine();
    },
    finish() {
      endLine();
    },
  };
}
