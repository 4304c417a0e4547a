/** `--config` / `--repo`, resolved the same way by every command that reads a repository. */
import path from 'node:path';
import { readConfig } from '../config/read.ts';
import type { Config } from '../config/types.ts';
import type { Diagnostic } from '../diagnostic.ts';
import type { CliIo } from './io.ts';

export interface RepoConfig {
  /** Absolute path of the repository. */
  readonly repoDir: string;
  /** The config file as shown in messages: relative to the working directory. */
  readonly configFile: string;
  /** Undefined when the config has errors; `diagnostics` says why. */
  readonly config?: Config;
  readonly diagnostics: Diagnostic[];
}

/** The config defaults to `DIR/contract-sync.yaml`; both are relative to the working directory. */
export async function readRepoConfig(io: CliIo, options: { readonly config?: string; readonly repo: string }): Promise<RepoConfig> {
  const repoDir = path.resolve(io.cwd, options.repo);
  const configFile = path.relative(io.cwd, path.resolve(io.cwd, options.config ?? path.join(options.repo, 'contract-sync.yaml')));
  const result = await readConfig(path.resolve(io.cwd, configFile));
  return { repoDir, configFile, config: result.config, diagnostics: result.diagnostics.map((d) => ({ ...d, file: configFile })) };
}
