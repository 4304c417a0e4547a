/**
 * The init run: the files of a new repository of desired state (engine/init decides what they hold)
 * written under `root`, never over an existing file without `force`, and the `.gitignore` merged.
 */
import { lstat, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GITIGNORE_FILE, mergeGitignore, scaffoldRepository, type CiProvider, type ScaffoldFile } from '../init/scaffold.ts';
import { schemaReference } from '../init/schema-path.ts';

export interface InitRequest {
  readonly kind: 'init';
  /** The repository's directory, absolute. */
  readonly root: string;
  readonly tenants: readonly string[];
  /** Left out: `github` when the repository has a `.github` directory, else `none`. */
  readonly ci?: CiProvider;
  /** Overwrite files that exist. */
  readonly force: boolean;
}

export type InitRunOutcome =
  /** Files that exist, without `force`: nothing was written. */
  | { readonly kind: 'exists'; readonly existing: readonly string[] }
  | {
      readonly kind: 'written';
      readonly ci: CiProvider;
      /** The scaffold's files, repository-relative, and which of them existed before. */
      readonly files: readonly string[];
      readonly existing: readonly string[];
      /** What happened to `.gitignore`: undefined when it already had every entry. */
      readonly gitignore?: 'created' | 'updated';
    };

export async function runInit(request: InitRequest): Promise<InitRunOutcome> {
  const { root, tenants, force } = request;
  const ci = request.ci ?? (await defaultCi(root));
  // Relative paths to the specs/ of the contract-sync running now, from each file's directory.
  const schemas = {
    config: schemaReference(root, 'config.schema.json'),
    contracts: schemaReference(path.join(root, 'contracts', tenants[0]!), 'contracts.schema.json'),
  };
  const files = scaffoldRepository({ tenants, ci, schemas });
  const existing: string[] = [];
  for (const file of files) if (await exists(path.join(root, file.path))) existing.push(file.path);
  if (existing.length > 0 && !force) return { kind: 'exists', existing };

  const gitignorePath = path.join(root, GITIGNORE_FILE);
  const gitignoreBefore = await readIfExists(gitignorePath);
  const gitignore = mergeGitignore(gitignoreBefore);
  const writes: ScaffoldFile[] = gitignore === undefined ? files : [...files, { path: GITIGNORE_FILE, content: gitignore }];
  for (const file of writes) {
    const target = path.join(root, file.path);
    await mkdir(path.dirname(target), { recursive: true });
    // Without force, `wx` also refuses a file that appeared since the check above.
    const overwrite = force || file.path === GITIGNORE_FILE;
    await writeFile(target, file.content, { flag: overwrite ? 'w' : 'wx' });
  }
  return {
    kind: 'written',
    ci,
    files: files.map((file) => file.path),
    existing,
    ...(gitignore === undefined ? {} : { gitignore: gitignoreBefore === undefined ? ('created' as const) : ('updated' as const) }),
  };
}

/** A repository that already has GitHub configuration gets the workflow; otherwise the user picks. */
async function defaultCi(root: string): Promise<CiProvider> {
  try {
    return (await stat(path.join(root, '.github'))).isDirectory() ? 'github' : 'none';
  } catch {
    return 'none';
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
