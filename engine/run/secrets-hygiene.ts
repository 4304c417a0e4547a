/**
 * `validate`'s secrets hygiene: reads what the pure rules of engine/config/hygiene.ts need (where
 * the config's keys are written, which secret files git tracks, the time) and runs them.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { secretFileRefs, secretHygiene } from '../config/hygiene.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { readFileAtCommit } from './git-source.ts';
import { closeGitRepository, openGitRepository } from '../git/repository.ts';
import { trackedFiles } from '../git/tracked-files.ts';
import { tenantPathWarnings } from '../config/tenant-paths.ts';
import type { PathSegment } from '../model/schema-validator.ts';
import { parseYamlSource, positionOf, type Position, type YamlSource } from '../yaml/yaml-source.ts';
import { CONFIG_FILE_NAME } from './config.ts';
import type { Config } from '../config/types.ts';
import type { PlanSource } from '../plan/types.ts';
import type { RunEffects, RunPlace } from './types.ts';

export interface HygieneOptions {
  /** `--config` as given: always a working-tree file. */
  readonly config?: string;
}

/** What the check reads of a run's input (validate reads the desired state one tenant at a time, plan everything). */
interface HygieneInput {
  readonly source: PlanSource;
  readonly configFile: string;
  readonly config: Config;
  readonly repoDir: string;
  /** The desired-state files' paths, for the tenant paths that select none (validate). */
  readonly desiredPaths?: readonly string[];
}

/** The config's text where the run read it: at the ref's commit without --config, else the working-tree file. */
async function configText(io: RunPlace, input: HygieneInput, options: HygieneOptions, commit: string | undefined): Promise<Uint8Array | string | undefined> {
  if (commit !== undefined && options.config === undefined) {
    const repository = await openGitRepository(input.repoDir);
    if (!repository) return undefined;
    try {
      return (await readFileAtCommit(repository, commit, CONFIG_FILE_NAME))?.content;
    } finally {
      closeGitRepository(repository);
    }
  }
  return readFile(path.resolve(io.cwd, input.configFile)).catch(() => undefined);
}

/**
 * Warnings about the secrets of a valid config. A `{file}` secret is read relative to the working
 * directory; with --ref, "tracked" means present in the ref's commit, else in the index.
 */
export async function checkSecretsHygiene(
  io: Pick<RunEffects, 'cwd' | 'env' | 'clock'>,
  input: HygieneInput,
  options: HygieneOptions = {},
): Promise<Diagnostic[]> {
  const commit = input.source.ref !== null ? (input.source.commit ?? undefined) : undefined;
  const text = await configText(io, input, options, commit);
  // Parsed by the yaml package only for a warning's position: a config without one never loads it.
  let source: YamlSource | null | undefined;
  function sourceOf(): YamlSource | null {
    if (source !== undefined) return source;
    const parsed = text === undefined ? undefined : parseYamlSource(input.configFile, text);
    source = parsed?.ok ? parsed.source : null;
    return source;
  }

  const refs = secretFileRefs(input.config);
  const repository = refs.length > 0 ? await openGitRepository(input.repoDir) : undefined;
  const absolute = new Map(refs.map((ref) => [ref.file, path.resolve(io.cwd, ref.file)]));
  const tracked = repository ? await trackedFiles(repository, [...absolute.values()], commit) : new Set<string>();

  function configPosition(keyPath: readonly PathSegment[]): Position {
    const parsed = sourceOf();
    return parsed ? positionOf(parsed, keyPath) : { line: 1, column: 1 };
  }
  // Also the tenant paths that select no desired-state file: a config mistake, said at its line.
  const tenantPaths =
    input.desiredPaths === undefined
      ? []
      : tenantPathWarnings({ config: input.config, desiredFiles: input.desiredPaths, file: input.configFile, positionOf: configPosition });
  return [
    ...tenantPaths,
    ...secretHygiene({
      config: input.config,
      file: input.configFile,
      positionOf: configPosition,
      now: io.clock.now(),
      trackedSecretFiles: new Set([...absolute].filter(([, file]) => tracked.has(file)).map(([ref]) => ref)),
    }),
  ];
}
