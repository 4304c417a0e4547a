/**
 * Adapter: where a plan's files are on the web in a CI job (GitHub Actions, GitLab CI), for the
 * markdown plan's links; undefined elsewhere. Reads the environment and looks for the work tree's
 * top, because the plan's files are relative to --repo, which may be a directory inside it.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { planArtifact, repositoryLinks, type FullPlanArtifact, type RepositoryLinks } from '../plan/file-links.ts';
import type { RunPlace } from './types.ts';

/** The nearest directory at or above `dir` holding `.git` (a directory, or a file in a linked work tree). */
async function workTreeTop(dir: string): Promise<string | undefined> {
  for (let current = dir; ; current = path.dirname(current)) {
    const found = await stat(path.join(current, '.git')).then(
      () => true,
      () => false,
    );
    if (found) return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/** `repoDir`: the directory the plan's file paths are relative to (absolute). */
export async function ciRepositoryLinks(io: RunPlace, repoDir: string): Promise<RepositoryLinks | undefined> {
  // Outside CI, nothing is read from the file system.
  if (repositoryLinks(io.env) === undefined) return undefined;
  const top = await workTreeTop(repoDir);
  if (top === undefined) return undefined;
  return repositoryLinks(io.env, path.relative(top, repoDir).split(path.sep).join('/'));
}

/** The plan artifact the contract-sync GitHub Action uploads with this workflow run, for the markdown plan's link; undefined elsewhere. */
export function ciPlanArtifact(io: RunPlace): FullPlanArtifact | undefined {
  return planArtifact(io.env);
}
