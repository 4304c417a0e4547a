/**
 * Adapter: the job summary of a GitHub Actions step, which GitHub gives each step as a file to
 * append markdown to (GITHUB_STEP_SUMMARY).
 */
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import type { RepositoryLinks } from '../plan/file-links.ts';
import { renderPlanMarkdown } from '../plan/render-markdown.ts';
import type { PlanDocument } from '../plan/types.ts';
import { ciPlanArtifact } from '../run/repository-links.ts';
import type { RunPlace } from '../run/types.ts';

/** The job summary: GitHub gives each step a file to append markdown to (other steps' content may be in it). */
export async function writeStepSummary(plan: PlanDocument, io: RunPlace, links: RepositoryLinks | undefined): Promise<string | undefined> {
  const file = io.env.GITHUB_STEP_SUMMARY;
  if (!file) return undefined;
  try {
    await appendFile(path.resolve(io.cwd, file), `${renderPlanMarkdown(plan, { links, artifact: ciPlanArtifact(io) })}\n`);
    return undefined;
  } catch (error) {
    return `cannot append to GITHUB_STEP_SUMMARY (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
