/**
 * The show run: a plan saved by `plan --out`, read back for review. Reads one file: no config, no
 * credentials, no network (so it loads none of their modules).
 */
import path from 'node:path';
import { READ_LIMITS, readProblem, readTextBounded } from '../io/bounded-read.ts';
import { parsePlan, PlanFormatError } from '../plan/read-plan.ts';
import type { PlanDocument } from '../plan/types.ts';
import type { RunPlace } from './types.ts';

export interface ShowRequest {
  readonly kind: 'show';
  /** The plan file, relative to the working directory. */
  readonly file: string;
}

/** The plan read, or why it could not be (`message` names the file as given). */
export type ShowRunOutcome = { readonly kind: 'read'; readonly plan: PlanDocument } | { readonly kind: 'unreadable'; readonly message: string };

export async function runShow(request: ShowRequest, place: Pick<RunPlace, 'cwd'>): Promise<ShowRunOutcome> {
  const { file } = request;
  let text: string;
  try {
    text = await readTextBounded(path.resolve(place.cwd, file), READ_LIMITS.plan);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem = readProblem(error);
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'a directory, not a plan file'
          : problem !== undefined
            ? problem
            : `cannot read the plan file (${code ?? 'error'})`;
    return { kind: 'unreadable', message: `${file}: ${reason}` };
  }
  try {
    return { kind: 'read', plan: parsePlan(text) };
  } catch (error) {
    if (!(error instanceof PlanFormatError)) throw error;
    return { kind: 'unreadable', message: `${file}: ${error.message}` };
  }
}
