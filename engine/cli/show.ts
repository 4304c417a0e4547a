/**
 * `contract-sync show PLAN.json`: a saved plan rendered for review, exactly as `plan` printed it.
 * Reads one file: no config, no credentials, no network (so it loads none of their modules).
 */
import { READ_LIMITS, readProblem, readTextBounded } from '../io/bounded-read.ts';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parsePlan, PlanFormatError } from '../plan/read-plan.ts';
import { renderPlanAs } from '../plan/render-format.ts';
import type { PlanDocument } from '../plan/types.ts';
import { EXIT, parseFormat, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';
import { writeOut } from '../output/stream.ts';
import { ciRepositoryLinks } from '../run/repository-links.ts';

export const SHOW_HELP = `Usage: contract-sync show PLAN.json [--format text|markdown|json]

Prints a plan saved by contract-sync plan --out, for review: the same output contract-sync plan
printed when it made the plan. Reads only PLAN.json: needs no config, no credentials and no
network. A plan of a version this contract-sync does not read is refused.

Options:
  --format F    text (default), markdown (a pull-request comment) or json (the plan document)

Exit codes: 0 the plan was shown, 1 error (the file is missing, not JSON, not a plan document or
of an unknown version).
`;

type ShowFormat = 'text' | 'markdown' | 'json';
const SHOW_FORMATS: readonly ShowFormat[] = ['text', 'markdown', 'json'];

export async function showCommand(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      format: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(SHOW_HELP);
    return EXIT.ok;
  }
  const format = parseFormat<ShowFormat>(values.format, SHOW_FORMATS, 'text');
  const [file, extra] = positionals;
  if (file === undefined) throw new UsageError('name the plan file to show (written by contract-sync plan --out)');
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);

  let text: string;
  try {
    text = await readTextBounded(path.resolve(io.cwd, file), READ_LIMITS.plan);
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
    io.stderr.write(`contract-sync show: ${file}: ${reason}\n`);
    return EXIT.error;
  }
  let plan: PlanDocument;
  try {
    plan = parsePlan(text);
  } catch (error) {
    if (!(error instanceof PlanFormatError)) throw error;
    io.stderr.write(`contract-sync show: ${file}: ${error.message}\n`);
    return EXIT.error;
  }
  // The plan's files are relative to its --repo, which was relative to where plan ran: here too, in a CI job.
  const links = format === 'markdown' ? await ciRepositoryLinks(io, path.resolve(io.cwd, plan.source.repo)) : undefined;
  await writeOut(io.stdout, renderPlanAs(plan, format, { color: wantsColor(io), links }));
  return EXIT.ok;
}
