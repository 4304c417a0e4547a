/**
 * `contract-sync show PLAN.json`: a saved plan rendered for review, exactly as `plan` printed it.
 * Reads one file (engine/run/show.ts): no config, no credentials, no network.
 */
import path from 'node:path';
import { renderPlanAs } from '../plan/render-format.ts';
import { writeOut } from '../output/stream.ts';
import { ciRepositoryLinks } from '../run/repository-links.ts';
import { runShow } from '../run/show.ts';
import { EXIT, failWith, parseCommand, parseFormat, UsageError, wantsColor, type CliIo, type ExitCode } from './io.ts';

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
  const { values, positionals, helped } = parseCommand(io, SHOW_HELP, args, true, {
    format: { type: 'string' },
  });
  if (helped) return EXIT.ok;
  const format = parseFormat<ShowFormat>(values.format, SHOW_FORMATS, 'text');
  const [file, extra] = positionals;
  if (file === undefined) throw new UsageError('name the plan file to show (written by contract-sync plan --out)');
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);

  const read = await runShow({ kind: 'show', file }, io);
  if (read.kind === 'unreadable') return failWith(io, 'show', read.message);
  const { plan } = read;
  // The plan's files are relative to its --repo, which was relative to where plan ran: here too, in a CI job.
  const links = format === 'markdown' ? await ciRepositoryLinks(io, path.resolve(io.cwd, plan.source.repo)) : undefined;
  await writeOut(io.stdout, renderPlanAs(plan, format, { color: wantsColor(io), links }));
  return EXIT.ok;
}
